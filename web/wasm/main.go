//go:build js && wasm

// Command wasm is the page's WebAssembly (GOOS=js GOARCH=wasm): it puts package web's
// functions on globalThis.ratelab (built with -tags charts: package charts' functions on
// globalThis.ratelabCharts instead) and stays up to serve their calls. Every function takes
// JavaScript strings and numbers and returns a JSON string: {"ok": value} or {"error":
// {"message", "line", "column"}} (web.Problem); the page parses it. See web/site/app.js.
package main

import (
	"encoding/json"
	"syscall/js"

	"github.com/ratelab/ratelab/web"
)

func main() {
	register()
	js.Global().Call("dispatchEvent", js.Global().Get("Event").New(readyEvent))
	select {} // serve calls until the page goes
}

// reply is a function's answer as the page reads it.
type reply struct {
	OK    any          `json:"ok,omitempty"`
	Error *web.Problem `json:"error,omitempty"`
}

// answer encodes v, or err when it is not nil, as a reply.
func answer(v any, err error) any {
	r := reply{OK: v}
	if err != nil {
		p := web.ProblemOf(err)
		r = reply{Error: &p}
	}
	data, err := json.Marshal(r)
	if err != nil {
		data, _ = json.Marshal(reply{Error: &web.Problem{Message: err.Error()}})
	}
	return string(data)
}

// fn makes a JavaScript function of f, which gets the call's arguments.
func fn(f func(args []js.Value) any) js.Func {
	return js.FuncOf(func(_ js.Value, args []js.Value) any { return f(args) })
}

// str is argument i as a string ("" when missing).
func str(args []js.Value, i int) string {
	if i < len(args) && args[i].Type() == js.TypeString {
		return args[i].String()
	}
	return ""
}

// num is argument i as a number (0 when missing).
func num(args []js.Value, i int) float64 {
	if i < len(args) && args[i].Type() == js.TypeNumber {
		return args[i].Float()
	}
	return 0
}
