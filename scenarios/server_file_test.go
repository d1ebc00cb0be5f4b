package scenarios

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
)

const serverYAML = `name: slowdown
horizon: 3s
sources: [{kind: poisson, rate: 300}]
limiters: [concurrency:max=20]
downstream:
  server: {cores: 4, discipline: ps, network: 5ms, timeout: 500ms}
  phases:
    - {from: 0s, service: {kind: exponential, mean: 10ms}}
    - {from: 1s, cores: 2, service: {kind: exponential, mean: 10ms}}
    - {from: 2s, black_hole: true, service: {kind: exponential, mean: 10ms}}
    - {from: 2500ms, errors: 0.5, service: {kind: exponential, mean: 10ms}}
`

// TestServerFromYAML: a server downstream and its phases read from a scenario file, and run.
func TestServerFromYAML(t *testing.T) {
	sc, err := Load("s.yaml", []byte(serverYAML))
	require.NoError(t, err)
	ds := sc.Downstream
	require.Equal(t, &engine.Server{Cores: 4, Discipline: engine.DisciplinePS, Network: 5 * time.Millisecond, Timeout: 500 * time.Millisecond}, ds.Server)
	require.Len(t, ds.Phases, 4)
	require.Equal(t, 2, ds.Phases[1].Cores)
	require.True(t, ds.Phases[2].BlackHole)
	require.Equal(t, 0.5, ds.Phases[3].Errors)
	res, err := engine.Run(context.Background(), sc, nil)
	require.NoError(t, err)
	tot := res.Lanes[0].Totals
	require.Positive(t, tot.ServerTimeouts)
	require.Positive(t, tot.ServerErrors)
}

// TestServerYAMLErrorsAreLocated: the server's fields and a phase's are refused at their line
// and column.
func TestServerYAMLErrorsAreLocated(t *testing.T) {
	head := "horizon: 3s\nsources: [{kind: poisson, rate: 10}]\nlimiters: [concurrency:max=2]\ndownstream:\n"
	for _, tc := range []struct{ name, yaml, want string }{
		{"cores missing", head + "  server: {timeout: 1s}\n  service: {kind: constant, mean: 1ms}\n",
			"s.yaml:5:11: downstream.server.cores: missing"},
		{"cores zero", head + "  server: {cores: 0}\n  service: {kind: constant, mean: 1ms}\n",
			"s.yaml:5:19: downstream.server.cores: must be at least 1, got 0"},
		{"discipline", head + "  server: {cores: 1, discipline: lifo}\n  service: {kind: constant, mean: 1ms}\n",
			`s.yaml:5:34: downstream.server.discipline: unknown discipline "lifo" (ps, fifo)`},
		{"misspelt field", head + "  server: {cores: 1, timout: 1s}\n  service: {kind: constant, mean: 1ms}\n",
			"s.yaml:5:22: downstream.server.timout: unknown field (did you mean timeout?)"},
		{"black hole without timeout", head + "  server: {cores: 1}\n  phases:\n    - {from: 0s, black_hole: true, service: {kind: constant, mean: 1ms}}\n",
			"s.yaml:7:30: downstream.phases[0].black_hole: needs downstream.server.timeout"},
		{"errors above 1", head + "  server: {cores: 1}\n  phases:\n    - {from: 0s, errors: 2, service: {kind: constant, mean: 1ms}}\n",
			"s.yaml:7:26: downstream.phases[0].errors: must be a fraction in [0, 1], got 2"},
		{"cores on a pool", head + "  pool: 3\n  phases:\n    - {from: 0s, cores: 2, service: {kind: constant, mean: 1ms}}\n",
			"s.yaml:7:25: downstream.phases[0].cores: is for a server downstream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load("s.yaml", []byte(tc.yaml))
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}
