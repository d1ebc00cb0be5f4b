package scenarios

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

const keyedFile = `horizon: 10s
sources:
  - kind: poisson
    rate: 500
    keys: {kind: zipf, clients: 1000, exponent: 1.1}
  - kind: constant
    rate: 300
    keys: {kind: noisy-neighbour, clients: 50, share: 0.8, noisy: batch-job, prefix: tenant-}
  - kind: constant
    rate: 100
    keys: {kind: cycle, clients: 1001}
limiters:
  - token-bucket:capacity=20,rate=200/1s
  - keys(max=1000,evict=lru):token-bucket:capacity=10,rate=10/1s
  - name: per-client
    spec: token-bucket:capacity=10,rate=10/1s+concurrency:max=50
    keys: {max: 1000, evict: fresh}
`

// Key populations and keyed lanes read from a file: a keys(…) prefix on a stage, or a lane's
// keys: that keys every stage.
func TestLoadKeys(t *testing.T) {
	sc, err := Load("keys.yaml", []byte(keyedFile))
	require.NoError(t, err)
	assert.Equal(t, &engine.KeyPopulation{Kind: engine.PopulationZipf, Clients: 1000, Exponent: 1.1}, sc.Sources[0].Keys)
	assert.Equal(t, &engine.KeyPopulation{Kind: engine.PopulationNoisy, Clients: 50, Share: 0.8, Noisy: "batch-job", Prefix: "tenant-"}, sc.Sources[1].Keys)
	assert.Equal(t, &engine.KeyPopulation{Kind: engine.PopulationCycle, Clients: 1001}, sc.Sources[2].Keys)
	assert.Equal(t, "keys(max=1000,evict=lru):token-bucket:capacity=10,rate=10/1s", engine.StackString(sc.Lanes[1].Stack))
	assert.Equal(t, "keys(max=1000,evict=fresh):token-bucket:capacity=10,rate=10/1s+keys(max=1000,evict=fresh):concurrency:max=50",
		engine.StackString(sc.Lanes[2].Stack))
	_, keyed := sc.Lanes[2].Stack[1].(limiters.KeyedSpec)
	assert.True(t, keyed)
}

// Bad keys are located.
func TestLoadKeysErrorsAreLocated(t *testing.T) {
	for yaml, want := range map[string]string{
		"horizon: 1s\nsources: [{kind: constant, rate: 1, keys: {kind: pareto, clients: 3}}]\nlimiters: [leaky-bucket:rate=1/1s]\n":             `f.yaml:2:`,
		"horizon: 1s\nsources: [{kind: constant, rate: 1, keys: {clients: 3}}]\nlimiters: [leaky-bucket:rate=1/1s]\n":                           "f.yaml:2:43: sources[0].keys.kind: missing",
		"horizon: 1s\nsources: [{kind: constant, rate: 1, keys: {kind: zipf, clients: 3, exponent: -1}}]\nlimiters: [leaky-bucket:rate=1/1s]\n": "sources[0].keys.exponent: must be in (0, 10]",
		"horizon: 1s\nsources: [{kind: constant, rate: 1}]\nlimiters:\n  - spec: leaky-bucket:rate=1/1s\n    keys: {max: 0}\n":                  "f.yaml:5:17: limiters[0].keys.max: must be between 1 and 2^30",
		"horizon: 1s\nsources: [{kind: constant, rate: 1}]\nlimiters:\n  - spec: leaky-bucket:rate=1/1s\n    keys: {max: 5, evict: random}\n":   "limiters[0].keys.evict: must be lru, fresh or nginx",
		"horizon: 1s\nsources: [{kind: constant, rate: 1}]\nlimiters:\n  - spec: leaky-bucket:rate=1/1s\n    keys: {max: 5, evikt: lru}\n":      "limiters[0].keys.evikt: unknown field",
		"horizon: 1s\nsources: [{kind: constant, rate: 1}]\nlimiters:\n  - spec: leaky-bucket:rate=1/1s\n    keys: {max: 5, evict: ''}\n":       "f.yaml:5:27: limiters[0].keys.evict: empty: must be lru, fresh or nginx (or leave evict out for lru)",
		"horizon: 1s\nsources: [{kind: constant, rate: 1}]\nlimiters: ['keys(max=5,evict=random):leaky-bucket:rate=1/1s']\n":                    "f.yaml:3:12: limiters[0]:",
	} {
		_, err := Load("f.yaml", []byte(yaml))
		if assert.Error(t, err, yaml) {
			assert.Contains(t, err.Error(), want, yaml)
		}
	}
}

// noisy-neighbour's paragraph, checked: a global limit refuses the quiet clients alike
// (about 780 of their 4000 pass), a bucket per client admits all of theirs and refuses only
// the neighbour; fairness 0.03 against 0.94; the small LRU table changes nothing, the fresh one
// refuses new clients as full.
func TestNoisyNeighbourTeaches(t *testing.T) {
	sc, err := Get("noisy-neighbour")
	require.NoError(t, err)
	res, err := engine.Run(context.Background(), sc, nil)
	require.NoError(t, err)
	quiet := func(lane int) (offered, admitted, neighbour int64) {
		for _, k := range res.Lanes[lane].Keys.PerKey {
			if k.Key == "noisy-neighbour" {
				neighbour = k.Admitted
				continue
			}
			offered += k.Offered
			admitted += k.Admitted
		}
		return
	}
	o, a, n := quiet(0)
	assert.InDelta(t, 4000, o, 100)
	assert.InDelta(t, 780, a, 30)
	assert.InDelta(t, 1240, n, 30)
	assert.InDelta(t, 0.03, res.Lanes[0].Keys.Fairness, 0.005)
	for lane := 1; lane <= 3; lane++ {
		o, a, _ = quiet(lane)
		if lane < 3 {
			assert.Equal(t, o, a, "lane %d: every quiet request passes", lane)
		}
		assert.InDelta(t, 0.94, res.Lanes[lane].Keys.Fairness, 0.01)
	}
	assert.Equal(t, res.Lanes[1].Totals.Admitted, res.Lanes[2].Totals.Admitted, "the small LRU table changes nothing")
	assert.Positive(t, res.Lanes[2].Keys.Tables[0].Evicted)
	assert.Positive(t, res.Lanes[3].Keys.Tables[0].Full)
	assert.Zero(t, res.Lanes[2].Keys.Tables[0].Full)
}
