package plots_test

import (
	"context"
	"fmt"
	"io"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/plots"
	"github.com/ratelab/ratelab/scenarios"
)

// Build makes a figure from a run; Write renders it (here it would be a PNG file).
func ExampleBuild() {
	sc, _ := scenarios.Get("boundary-attack")
	sc.Trace = true // the guarantee chart is exact from a trace
	res, _ := engine.Run(context.Background(), sc, nil)
	fig, err := plots.Build("guarantee", sc, res)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(fig.Title)
	for _, p := range fig.Panels {
		fmt.Println(p.Title)
	}
	// Render it: to a file in practice; the size 0, 0 is DefaultWidth and the figure's
	// natural height.
	if err := fig.Write(io.Discard, "png", 0, 0); err != nil {
		fmt.Println(err)
	}
	// Output:
	// boundary-attack: most admitted in any 1s window vs the bound
	// fixed-window:limit=100,window=1s — most in any 1s: 200, bound 200
	// sliding-window:limit=100,window=1s,slots=10 — most in any 1s: 100, bound 200
	// token-bucket:capacity=100,rate=100/1s — most in any 1s: 101, bound 199
}
