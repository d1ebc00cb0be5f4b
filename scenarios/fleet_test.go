package scenarios

import (
	"context"
	"testing"
	"time"

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
	assert.NotContains(t, text, "faults")
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

// Every field of a fault is used or refused at its line:col, and a timeline that says two
// things at once, or something that never happens, is refused (engine.Fault's rule).
func TestFaultFieldsAreUsedOrRefused(t *testing.T) {
	const head = "horizon: 10s\nsources: [{kind: constant, rate: 10}]\nlimiters: ['fixed-window:limit=9,window=1s']\nfleet: {instances: 3}\nfaults:\n"
	for faults, want := range map[string]string{
		"  - {kind: outage, instance: 9, from: 1s, until: 2s}\n":                                                                 "f.yaml:6:20: faults[0].instance: not a field of an outage fault (its fields: from, until, instances); a partition lists the instances cut off: instances: [N]",
		"  - {kind: outage, instances: [9], from: 1s, until: 2s}\n":                                                              "f.yaml:6:32: faults[0].instances[0]: no instance 9: instances are numbered 0 to 2",
		"  - {kind: leave, instance: 1, from: 1s, until: 2s}\n":                                                                  "f.yaml:6:32: faults[0].from: not a field of a leave fault (its fields: instance, at); to leave and come back, give a leave and a join",
		"  - {kind: join, instance: 1, at: 1s, until: 0s}\n":                                                                     "f.yaml:6:39: faults[0].until: not a field of a join fault (its fields: instance, at)",
		"  - {kind: clock, instance: 1, offset: 1ms, at: 2s}\n":                                                                  "f.yaml:6:45: faults[0].at: not a field of a clock fault (its fields: instance, offset)",
		"  - {kind: latency, from: 1s, until: 2s, add: 5ms, instances: [1]}\n":                                                   "f.yaml:6:52: faults[0].instances: not a field of a latency fault (its fields: from, until, add); added latency applies to every instance's round trips",
		"  - {kind: outage, from: 1s, until: 2s, add: 5ms}\n":                                                                    "f.yaml:6:41: faults[0].add: not a field of an outage fault",
		"  - {kind: clock, instance: 1, offset: 1ms}\n  - {kind: clock, instance: 1, offset: 2ms}\n":                             "f.yaml:7:29: faults[1].instance: instance 1 already has a clock offset (faults[0], 1ms): give each instance one",
		"  - {kind: leave, instance: 2, at: 5s}\n  - {kind: leave, instance: 2, at: 2s}\n":                                       "f.yaml:6:12: faults[0].kind: instance 2 leaves at 5s but already left at 2s (faults[1]) with no join between: an instance's joins and leaves alternate",
		"  - {kind: join, instance: 0, at: 1s}\n  - {kind: leave, instance: 0, at: 2s}\n  - {kind: join, instance: 0, at: 2s}\n": "f.yaml:8:35: faults[2].at: instance 0 already leaves at 2s (faults[1]): one join or leave per instance per instant",
		"  - {kind: join, instance: 0, at: 1s}\n  - {kind: join, instance: 0, at: 3s}\n":                                         "faults[1].kind: instance 0 joins at 3s but already joined at 1s (faults[0]) with no leave between",
		"  - {kind: outage, from: 10s, until: 12s}\n":                                                                            "f.yaml:6:26: faults[0].from: 10s is at or past the horizon (10s): this outage would never happen; move it before 10s or remove it",
		"  - {kind: leave, instance: 1, at: 1h}\n":                                                                               "f.yaml:6:36: faults[0].at: 1h0m0s is at or past the horizon (10s): this leave would never happen",
	} {
		_, err := Load("f.yaml", []byte(head+faults))
		if assert.Error(t, err, faults) {
			assert.Contains(t, err.Error(), want, faults)
		}
	}
	// What the rule allows: a leave and a join in turn (either first), a partition of listed
	// instances, overlapping outages, an outage that runs past the horizon, one clock each.
	ok := head + `  - {kind: join, instance: 2, at: 1s}
  - {kind: leave, instance: 2, at: 3s}
  - {kind: join, instance: 2, at: 4s}
  - {kind: leave, instance: 0, at: 2s}
  - {kind: join, instance: 0, at: 5s}
  - {kind: outage, from: 1s, until: 3s, instances: [1]}
  - {kind: outage, from: 2s, until: 30s}
  - {kind: clock, instance: 0, offset: 1ms}
  - {kind: clock, instance: 1, offset: 2ms}
`
	sc, err := Load("f.yaml", []byte(ok))
	require.NoError(t, err)
	assert.Len(t, sc.Faults, 9)
	// A built-in whose horizon is shortened past its outage (run fleet --horizon 3s) still runs.
	fleet, err := Get("fleet")
	require.NoError(t, err)
	fleet.Horizon = 3 * time.Second
	require.NoError(t, fleet.Validate())
	require.ErrorContains(t, fleet.ValidateFaultTimes(), "faults[0].from: 4s is at or past the horizon (3s)")
}
