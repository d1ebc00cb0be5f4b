// Package web is what the workbench in the browser asks of the engine, the scenarios and the
// plots, as Go functions whose values cross to JavaScript as JSON. The page is a view: every
// number, sentence and state it shows comes from here, computed by the same code as
// `ratelab run` and the TUI (engine.Lockstep, engine.Sentence, engine.InjectBurst,
// scenarios.Load, jsonout.RunJSON), never re-computed in JavaScript.
//
// The page's WebAssembly main is web/wasm (GOOS=js GOARCH=wasm); the static files and the
// build of the WebAssembly are web/site. Charts (package plots, and with it gonum/plot and its
// 12 fonts) are kept out of this package so that the main WebAssembly stays small: see
// web/charts.
package web
