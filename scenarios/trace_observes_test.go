package scenarios

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
)

// The trace only observes: every built-in run untraced gives exactly its traced results
// without the trace. Untraced, a drop client's lanes take the engine's fast path (each
// request decided at once, a refused one given no request slot) and traced the general one,
// so this holds the two paths equal on every built-in.
func TestEveryBuiltInUntracedIsItsTracedRunWithoutTheTrace(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			traced, err := Get(name)
			require.NoError(t, err)
			traced.Trace = true
			want, err := engine.Run(context.Background(), traced, nil)
			require.NoError(t, err)
			plain, err := Get(name)
			require.NoError(t, err)
			plain.Trace = false
			got, err := engine.Run(context.Background(), plain, nil)
			require.NoError(t, err)
			for i := range want.Lanes {
				want.Lanes[i].Trace, want.Lanes[i].Truncated = nil, false
			}
			require.Equal(t, want, got)
		})
	}
}
