//go:build js && wasm && charts

package main

import (
	"context"
	"syscall/js"

	"github.com/ratelab/ratelab/web/charts"
)

const readyEvent = "ratelab-charts-ready"

// last is the last scenario text's run, kept for its other charts.
var (
	lastText string
	lastSet  *charts.Set
)

func run(text string) (*charts.Set, error) {
	if lastSet != nil && text == lastText {
		return lastSet, nil
	}
	set, err := charts.Run(context.Background(), text)
	if err != nil {
		return nil, err
	}
	lastText, lastSet = text, set
	return set, nil
}

func register() {
	api := map[string]any{
		// names lists the charts that apply to the scenario text's run.
		"names": fn(func(a []js.Value) any {
			set, err := run(str(a, 0))
			if err != nil {
				return answer(nil, err)
			}
			return answer(set.Names(), nil)
		}),
		// svg draws one of them.
		"svg": fn(func(a []js.Value) any {
			set, err := run(str(a, 0))
			if err != nil {
				return answer(nil, err)
			}
			return answer(set.SVG(str(a, 1)))
		}),
	}
	js.Global().Set("ratelabCharts", js.ValueOf(api))
}
