package scenarios

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
)

// TestQueueDisciplineFromYAML: a lane's queue discipline and a server's end-to-end timeout
// read from a file, shown back, and run.
func TestQueueDisciplineFromYAML(t *testing.T) {
	src := `horizon: 3s
sources: [{kind: poisson, rate: 300}]
limiters:
  - {name: fifo, spec: "concurrency:max=4", client: {policy: queue, queue_size: 50, timeout: 1s}}
  - {name: codel, spec: "concurrency:max=4", client: {policy: queue, queue_size: 50, timeout: 1s, discipline: codel}}
downstream:
  server: {cores: 2, network: 5ms, timeout: 400ms, timeout_from: arrival}
  service: {kind: exponential, mean: 10ms}
`
	sc, err := Load("q.yaml", []byte(src))
	require.NoError(t, err)
	require.Equal(t, engine.QueueDiscipline(""), sc.Lanes[0].Client.Discipline)
	require.Equal(t, engine.QueueCoDel, sc.Lanes[1].Client.Discipline)
	require.Equal(t, engine.FromArrival, sc.Downstream.Server.TimeoutFrom)
	shown, err := YAML(sc)
	require.NoError(t, err)
	require.Contains(t, string(shown), "discipline: codel")
	require.Contains(t, string(shown), "timeout_from: arrival")
	again, err := Load("q.yaml", shown)
	require.NoError(t, err)
	require.Equal(t, sc.Lanes[1].Client, again.Lanes[1].Client)
	require.Equal(t, sc.Downstream.Server, again.Downstream.Server)
	res, err := engine.Run(context.Background(), sc, nil)
	require.NoError(t, err)
	require.Positive(t, res.Lanes[1].Totals.Refused, "CoDel drops under 300/s against 200/s")
	require.Less(t, res.Lanes[1].Wait.P99, res.Lanes[0].Wait.P99)
	require.Less(t, res.Lanes[1].Wait.P99, 400*time.Millisecond)
}

// TestQueueDisciplineYAMLErrors: a bad discipline or timeout_from is refused at its line and
// column, with the name it was likely meant to be.
func TestQueueDisciplineYAMLErrors(t *testing.T) {
	head := "horizon: 3s\nsources: [{kind: poisson, rate: 10}]\nlimiters: [concurrency:max=2]\n"
	for _, tc := range []struct{ name, yaml, want string }{
		{"misspelt", head + "client: {policy: queue, queue_size: 5, timeout: 1s, discipline: adaptive-lfo}\n",
			`q.yaml:4:65: client.discipline: unknown queue discipline "adaptive-lfo" (did you mean adaptive-lifo?) (fifo, lifo, codel, adaptive-lifo)`},
		{"unknown", head + "client: {policy: queue, queue_size: 5, timeout: 1s, discipline: red}\n",
			`q.yaml:4:65: client.discipline: unknown queue discipline "red" (fifo, lifo, codel, adaptive-lifo)`},
		{"not a queue", head + "client: {policy: drop, discipline: lifo}\n",
			`q.yaml:4:36: client.discipline: is for the queue policy, not drop`},
		{"timeout_from", head + "downstream:\n  server: {cores: 1, timeout: 1s, timeout_from: arival}\n  service: {kind: constant, mean: 1ms}\n",
			`q.yaml:5:49: downstream.server.timeout_from: unknown start "arival" (did you mean arrival?) (admission, arrival)`},
		{"timeout_from without timeout", head + "downstream:\n  server: {cores: 1, timeout_from: arrival}\n  service: {kind: constant, mean: 1ms}\n",
			`q.yaml:5:36: downstream.server.timeout_from: needs a timeout to start`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load("q.yaml", []byte(tc.yaml))
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}
