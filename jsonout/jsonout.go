// Package jsonout writes what ratelab's commands print as JSON, in one encoding: indented by
// two spaces, one value, a newline after it. `ratelab run --format json` is RunJSON's bytes,
// and the page in the browser (package web) calls RunJSON in its WebAssembly build, so the
// two are the same text to the byte for the same scenario.
package jsonout

import (
	"bytes"
	"context"
	"encoding/json"
	"io"

	"github.com/ratelab/ratelab/engine"
)

// JSON writes v as the commands' JSON output: indented by two spaces, one value and a
// newline (json.Encoder's, so <, > and & are escaped as \u003c, \u003e and \u0026).
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// RunJSON runs sc to its horizon and returns its results as `ratelab run --format json`
// prints them. sc must be valid (engine.Run validates it again); a cancelled ctx stops the
// run with ctx's error.
func RunJSON(ctx context.Context, sc *engine.Scenario) ([]byte, error) {
	res, err := engine.Run(ctx, sc, nil)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := JSON(&buf, res); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
