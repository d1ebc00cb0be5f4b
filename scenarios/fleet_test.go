package scenarios

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
)

// fleet's paragraph, checked number by number.
func TestFleetTeaches(t *testing.T) {
	sc, err := Get("fleet")
	require.NoError(t, err)
	res, err := engine.Run(context.Background(), sc, nil)
	require.NoError(t, err)
	admitted := map[string]int64{}
	for _, l := range res.Lanes {
		admitted[l.Name] = l.Totals.Admitted
		assert.EqualValues(t, 3000, l.Totals.Offered)
	}
	assert.Equal(t, map[string]int64{"one process": 1529, "local": 3000, "split": 1527, "central fail-open": 1858,
		"central fail-closed": 1258, "async": 2923}, admitted)
	local := res.Lanes[1]
	assert.EqualValues(t, 300, local.Fleet.MaxAdmitted)
	assert.EqualValues(t, 179, local.Fleet.Bound)
	assert.Equal(t, 1.676, local.Fleet.Overshoot)
	assert.EqualValues(t, 600, res.Lanes[3].Fleet.StoreFailures, "every request of the 2s outage")
	assert.Equal(t, admitted["central fail-closed"]+600, admitted["central fail-open"])
	split := res.Lanes[2].Fleet
	for _, in := range split.Instances {
		assert.EqualValues(t, 1000, in.Offered, "round-robin spreads evenly")
	}
}

func TestFleetFileErrors(t *testing.T) {
	for yaml, want := range map[string]string{
		"fleet: {instances: 3, balancer: nearest}\n":                             `fleet.balancer: unknown balancer "nearest"`,
		"fleet: {instances: 0}\n":                                                "fleet.instances: must be between 1 and 1024",
		"fleet: {instances: 3}\nfaults: [{kind: clock, instance: 7}]\n":          "faults[0].instance: no instance 7",
		"fleet: {instances: 3}\nfaults: [{kind: flood, at: 1s}]\n":               `faults[0].kind: unknown fault "flood"`,
		"fleet: {instances: 3}\nfaults: [{kind: outage, from: 2s, until: 1s}]\n": "faults[0].until: must be after from=2s",
	} {
		text := "horizon: 1s\nsources: [{kind: constant, rate: 10}]\nlimiters: ['fixed-window:limit=9,window=1s']\n" + yaml
		_, err := Load("f.yaml", []byte(text))
		if assert.Error(t, err, yaml) {
			assert.Contains(t, err.Error(), want, yaml)
		}
	}
	text := "horizon: 1s\nsources: [{kind: constant, rate: 10}]\nfleet: {instances: 3}\nlimiters:\n" +
		"  - {spec: 'fixed-window:limit=10,window=1s', fleet: {model: split}}\n"
	_, err := Load("f.yaml", []byte(text))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "f.yaml:5:")
	assert.Contains(t, err.Error(), "limit=10 is not a multiple of 3 instances")
	text = "horizon: 1s\nsources: [{kind: constant, rate: 10}]\nfleet: {instances: 3}\nlimiters:\n" +
		"  - {spec: 'fixed-window:limit=9,window=1s', fleet: {model: central, timeout: 5ms, on_failure: fail-opne}}\n"
	_, err = Load("f.yaml", []byte(text))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "on_failure")
	assert.Contains(t, err.Error(), "fail-open")
}

// A fleet scenario with every fault writes back as YAML that loads to the same scenario.
func TestFleetShowRoundTrips(t *testing.T) {
	text := `name: faults
seed: 3
horizon: 3s
sources: [{kind: constant, rate: 100, keys: {kind: uniform, clients: 10}}]
fleet: {instances: 3, balancer: sticky}
faults:
  - {kind: outage, from: 1s, until: 2s, instances: [1]}
  - {kind: latency, from: 500ms, until: 1s, add: 30ms}
  - {kind: clock, instance: 2, offset: 150ms}
  - {kind: leave, instance: 1, at: 2s}
  - {kind: join, instance: 1, at: 2500ms}
limiters:
  - {spec: 'fixed-window:limit=30,window=1s', fleet: {model: central, clock: caller, latency: {kind: uniform, min: 1ms, max: 4ms}, timeout: 25ms, on_failure: local}}
  - {spec: 'token-bucket:capacity=9,rate=30/1s', fleet: {model: async, sync: 50ms, owner: 2, latency: {kind: constant, mean: 1ms}}}
  - {spec: 'token-bucket:capacity=9,rate=30/1s', fleet: {model: split}}
  - token-bucket:capacity=9,rate=30/1s
`
	sc, err := Load("faults.yaml", []byte(text))
	require.NoError(t, err)
	out, err := YAML(sc)
	require.NoError(t, err)
	back, err := Load("faults.yaml", out)
	require.NoError(t, err, string(out))
	again, err := YAML(back)
	require.NoError(t, err)
	assert.Equal(t, string(out), string(again))
	assert.Equal(t, sc.Faults, back.Faults)
	assert.Equal(t, sc.Fleet, back.Fleet)
	for i := range sc.Lanes {
		assert.Equal(t, sc.Lanes[i].Fleet, back.Lanes[i].Fleet)
	}
	a, err := engine.Run(context.Background(), sc, nil)
	require.NoError(t, err)
	b, err := engine.Run(context.Background(), back, nil)
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.NotNil(t, a.Lanes[0].Fleet)
	assert.Positive(t, a.Lanes[0].Fleet.StoreFailures, "instance 1's partition and the slow period")
}
