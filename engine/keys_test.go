package engine

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/virtualclock"
)

// draw is the first n keys a population gives, from seed.
func draw(p KeyPopulation, seed uint64, n int) []string {
	k := newKeyPicker(p, 0, seed)
	out := make([]string, n)
	for i := range out {
		out[i] = k.pick()
	}
	return out
}

func shares(keys []string) map[string]float64 {
	out := map[string]float64{}
	for _, k := range keys {
		out[k] += 1 / float64(len(keys))
	}
	return out
}

// Each population gives the shares it promises, the same for a seed and others for another.
func TestKeyPopulations(t *testing.T) {
	const n = 200_000
	uniform := shares(draw(KeyPopulation{Kind: PopulationUniform, Clients: 10}, 1, n))
	assert.Len(t, uniform, 10)
	for k, s := range uniform {
		assert.InDelta(t, 0.1, s, 0.005, k)
	}
	// Zipf s=1 over 1000: the i-th key's share is 1/(i·H₁₀₀₀), H₁₀₀₀ = 7.485: 13.4%, 6.7%, 4.5%.
	zipf := shares(draw(KeyPopulation{Kind: PopulationZipf, Clients: 1000, Exponent: 1}, 1, n))
	h := 0.0
	for i := 1; i <= 1000; i++ {
		h += 1 / float64(i)
	}
	for i := 1; i <= 3; i++ {
		assert.InDelta(t, 1/(float64(i)*h), zipf["client-"+strconv.Itoa(i-1)], 0.004, "zipf key %d", i)
	}
	noisy := shares(draw(KeyPopulation{Kind: PopulationNoisy, Clients: 100, Share: 0.6}, 1, n))
	assert.InDelta(t, 0.6, noisy["noisy-neighbour"], 0.005)
	assert.InDelta(t, 0.004, noisy["client-7"], 0.001, "the rest: 0.4 over 100")
	cycle := draw(KeyPopulation{Kind: PopulationCycle, Clients: 3}, 1, 7)
	assert.Equal(t, []string{"attacker-0", "attacker-1", "attacker-2", "attacker-0", "attacker-1", "attacker-2", "attacker-0"}, cycle)
	p := KeyPopulation{Kind: PopulationZipf, Clients: 1000, Exponent: 1.2, Prefix: "user-"}
	assert.Equal(t, draw(p, 7, 100), draw(p, 7, 100), "a seed gives the same keys")
	assert.NotEqual(t, draw(p, 7, 100), draw(p, 8, 100), "another seed others")
	assert.Contains(t, draw(p, 7, 100), "user-0")
}

// Jain's index, with the comment's numbers.
func TestJain(t *testing.T) {
	counts := func(xs ...int64) []KeyCount {
		out := make([]KeyCount, len(xs))
		for i, x := range xs {
			out[i].Permits = x
		}
		return out
	}
	assert.InDelta(t, 1, jain(counts(10, 10, 10)), 1e-12)
	assert.InDelta(t, 1.0/3, jain(counts(30, 0, 0)), 1e-12)
	assert.InDelta(t, 2.0/3, jain(counts(20, 5, 5)), 1e-12)
	assert.InDelta(t, 1, jain(counts(0, 0)), 1e-12, "nobody admitted: nobody favoured")
}

// A noisy neighbour sending 60% of 1000/s among 100 clients: a global limit of 200/s refuses
// everyone alike, so the quiet clients lose most of their requests to the neighbour; a token
// bucket per key at 10/s lets every quiet client through (4/s each) and refuses only the
// neighbour (600/s against 10/s). Jain's index over admitted permits rises accordingly.
func TestNoisyNeighbourPerKeyVersusGlobal(t *testing.T) {
	sc := &Scenario{Seed: 1, Horizon: 10 * sec, Bins: 10,
		Sources: []Source{{Kind: SourcePoisson, Rate: 1000, Keys: &KeyPopulation{Kind: PopulationNoisy, Clients: 100, Share: 0.6}}},
		Lanes:   stacks(t, "token-bucket:capacity=20,rate=200/1s", "keys(max=1000):token-bucket:capacity=20,rate=10/1s"),
	}
	res := run(t, sc)
	global, perKey := res.Lanes[0].Keys, res.Lanes[1].Keys
	require.NotNil(t, global, "two keys or more: per-key results even without a keyed stage")
	require.NotNil(t, perKey)
	assert.Equal(t, 101, global.Distinct)
	assert.Equal(t, "noisy-neighbour", global.TopRefused[0].Key)
	assert.Equal(t, "noisy-neighbour", perKey.TopRefused[0].Key)
	assert.Len(t, perKey.TopRefused, 1, "per key, nobody else is refused")
	quiet := func(r *KeyResults) (offered, admitted int64) {
		for _, k := range r.PerKey {
			if k.Key != "noisy-neighbour" {
				offered += k.Offered
				admitted += k.Admitted
			}
		}
		return
	}
	o, a := quiet(global)
	assert.Less(t, float64(a)/float64(o), 0.3, "globally the quiet clients get about 200/1000 of theirs")
	o, a = quiet(perKey)
	assert.Equal(t, o, a, "per key they get all of theirs")
	assert.Greater(t, perKey.Fairness, global.Fairness)
	require.Len(t, perKey.Tables, 1)
	assert.Equal(t, KeyTable{Stage: 1, MaxKeys: 1000, Evict: "lru", Held: 101, Created: 101}, perKey.Tables[0])
	var sum int64
	for _, k := range perKey.PerKey {
		sum += k.Admitted
	}
	assert.Equal(t, res.Lanes[1].Totals.Admitted, sum, "the keys' admissions add up to the lane's")
}

// A per-key bulkhead in front of a shared one: each key's in-flight permits come back to its
// own bulkhead when its request completes.
func TestKeyedBulkheadReleasesToItsKey(t *testing.T) {
	src := Source{Kind: SourceScript}
	for i := range 6 {
		src.Script = append(src.Script, Arrival{At: time.Duration(i) * ms, Key: []string{"a", "b", "c"}[i%3]})
	}
	src.Script = append(src.Script, Arrival{At: 100 * ms, Key: "a"}, Arrival{At: 100 * ms, Key: "b"})
	sc := &Scenario{Seed: 1, Horizon: sec, Sources: []Source{src},
		Lanes:      stacks(t, "keys(max=2):concurrency:max=1+concurrency:max=2"),
		Downstream: &Downstream{Phases: []Phase{{Service: Distribution{Kind: DistConstant, Mean: 50 * ms}}}},
	}
	res := run(t, sc)
	keys := res.Lanes[0].Keys
	byKey := map[string]KeyCount{}
	for _, k := range keys.PerKey {
		byKey[k.Key] = k
	}
	// 0ms a (admitted), 1ms b (admitted), 2ms c (the table holds a and b, both busy: full),
	// 3ms a, 4ms b (their own bulkheads are held), 5ms c (full); at 100ms a and b again.
	assert.Equal(t, int64(2), byKey["a"].Admitted)
	assert.Equal(t, int64(2), byKey["b"].Admitted)
	assert.Equal(t, int64(0), byKey["c"].Admitted)
	assert.Equal(t, uint64(2), keys.Tables[0].Full, "c found the table full twice: held bulkheads are not evicted")
}

// Memory grows with keys, not with requests: an attacker cycling 5000 keys through a table of
// 1000 at a million requests per second (each key back every 5ms, inside its 20ms window, but
// evicted 4000 requests before) holds the same heap after 0.2s and after 1s.
func TestKeyedLaneMemoryIsFlat(t *testing.T) {
	sc := &Scenario{Seed: 1, Horizon: sec, Bins: 10,
		Sources: []Source{{Kind: SourceConstant, Rate: 1_000_000, Keys: &KeyPopulation{Kind: PopulationCycle, Clients: 5000}}},
		Lanes:   stacks(t, "keys(max=1000):fixed-window:limit=1,window=20ms"),
	}
	require.NoError(t, sc.Validate())
	lane, err := NewLane(sc, 0)
	require.NoError(t, err)
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	require.NoError(t, lane.RunUntil(200*ms))
	early := heap()
	require.NoError(t, lane.RunUntil(sec))
	late := heap()
	res := lane.Result()
	assert.Equal(t, int64(1_000_000), res.Totals.Offered)
	assert.Equal(t, res.Totals.Offered, res.Totals.Admitted, "every request is an evicted key's first")
	assert.Equal(t, 1000, res.Keys.Tables[0].Held)
	assert.Equal(t, 5000, res.Keys.Distinct)
	assert.Less(t, float64(late)-float64(early), float64(256<<10), "heap after 0.2s %d, after 1s %d", early, late)
	runtime.KeepAlive(lane)
}

// Bad populations and keyed stages name their field.
func TestKeyErrorsNameTheField(t *testing.T) {
	for _, c := range []struct {
		pop  KeyPopulation
		want string
	}{
		{KeyPopulation{Kind: "pareto", Clients: 1}, `sources[0].keys.kind: unknown key population "pareto"`},
		{KeyPopulation{Kind: PopulationUniform}, "sources[0].keys.clients: must be between 1 and 1048576, got 0"},
		{KeyPopulation{Kind: PopulationZipf, Clients: 10}, "sources[0].keys.exponent: must be in (0, 10], got 0"},
		{KeyPopulation{Kind: PopulationZipf, Clients: 10, Exponent: math.NaN()}, "sources[0].keys.exponent"},
		{KeyPopulation{Kind: PopulationUniform, Clients: 10, Exponent: 1}, "sources[0].keys.exponent: only a zipf"},
		{KeyPopulation{Kind: PopulationNoisy, Clients: 10, Share: 1.5}, "sources[0].keys.share: must be in (0, 1], got 1.5"},
		{KeyPopulation{Kind: PopulationCycle, Clients: 10, Share: 0.5}, "sources[0].keys.share: only a noisy-neighbour"},
	} {
		sc := &Scenario{Horizon: sec, Sources: []Source{{Kind: SourceConstant, Rate: 1, Keys: &c.pop}}, Lanes: stacks(t, "leaky-bucket:rate=1/1s")}
		assert.ErrorContains(t, sc.Validate(), c.want)
	}
	_, err := ParseStack("keys(max=0):leaky-bucket:rate=1/1s")
	assert.ErrorContains(t, err, "max=0: must be between 1 and 2^30")
}

// A keyed lane is deterministic: the same seed gives the same per-key results.
func TestKeyedLaneIsDeterministic(t *testing.T) {
	sc := func() *Scenario {
		return &Scenario{Seed: 9, Horizon: 2 * sec, Bins: 4,
			Sources: []Source{{Kind: SourcePoisson, Rate: 2000, Keys: &KeyPopulation{Kind: PopulationZipf, Clients: 500, Exponent: 1.1}}},
			Lanes:   stacks(t, "keys(max=100,evict=lru):token-bucket:capacity=3,rate=5/1s", "keys(max=100,evict=fresh):token-bucket:capacity=3,rate=5/1s"),
		}
	}
	a, b := run(t, sc()), run(t, sc())
	assert.Equal(t, a.Lanes, b.Lanes)
	assert.Positive(t, a.Lanes[0].Keys.Tables[0].Evicted)
	assert.Positive(t, a.Lanes[1].Keys.Tables[0].Full, "fresh refuses new keys while 100 are busy")
}

// TopOffered mid-run is the busiest keys of every key counted, past the KeyListLimit that
// PerKey stops at: a Zipf population of 3000 keys, read at 2s, agrees with a stable sort of
// all the counters (ties in order of first arrival), and reading it changes no later decision.
func TestTopOfferedReadsEveryKeyMidRun(t *testing.T) {
	sc := &Scenario{Seed: 3, Horizon: 4 * sec, Bins: 4,
		Sources: []Source{{Kind: SourcePoisson, Rate: 5000, Keys: &KeyPopulation{Kind: PopulationZipf, Clients: 3000, Exponent: 0.8}}},
		Lanes:   stacks(t, "keys(max=5000):token-bucket:capacity=2,rate=1/1s"),
	}
	require.NoError(t, sc.Validate())
	lane, err := NewLane(sc, 0)
	require.NoError(t, err)
	require.NoError(t, lane.RunUntil(2*sec))
	counts := append([]KeyCount(nil), lane.keys.counts...)
	require.Greater(t, len(counts), KeyListLimit, "the population must outgrow PerKey")
	slices.SortStableFunc(counts, func(a, b KeyCount) int { return cmp.Compare(b.Offered, a.Offered) })
	top := lane.TopOffered(10)
	assert.Equal(t, counts[:10], top)
	assert.Equal(t, "client-0", top[0].Key, "Zipf's first key is the busiest")
	assert.Empty(t, lane.TopOffered(0))
	assert.Len(t, lane.TopOffered(len(counts)+5), len(counts), "at most every key")

	require.NoError(t, lane.RunUntil(sc.Horizon))
	quiet := run(t, sc).Lanes[0]
	assert.Equal(t, quiet.Totals, lane.Result().Totals, "reading the top keys mid-run changed the run")
}

// Keys offered alike keep the order they first came in: 12 requests cycling over 5 keys are
// 3, 3, 2, 2, 2, and the top 4 are attacker-0 to attacker-3.
func TestTopOfferedKeepsArrivalOrderOnTies(t *testing.T) {
	sc := &Scenario{Seed: 1, Horizon: 12 * sec, Bins: 1,
		Sources: []Source{{Kind: SourceConstant, Rate: 1, Keys: &KeyPopulation{Kind: PopulationCycle, Clients: 5}}},
		Lanes:   stacks(t, "token-bucket:capacity=1,rate=1/1s"),
	}
	require.NoError(t, sc.Validate())
	lane, err := NewLane(sc, 0)
	require.NoError(t, err)
	require.NoError(t, lane.RunUntil(sc.Horizon))
	var got []string
	var offered []int64
	for _, k := range lane.TopOffered(4) {
		got, offered = append(got, k.Key), append(offered, k.Offered)
	}
	assert.Equal(t, []string{"attacker-0", "attacker-1", "attacker-2", "attacker-3"}, got)
	assert.Equal(t, []int64{3, 3, 2, 2}, offered)
}

// Decide binds the key, reserves when a stage waits and acquires when none does: a keyed
// bucket of 1 per key admits a and b at 0 and refuses a's second; a full table (max=1, fresh
// eviction, the one key not fresh) refuses a new key by its stage; NGINX with delay=1 holds
// the second request 100ms instead of refusing it.
func TestStackDecide(t *testing.T) {
	clock := virtualclock.New()
	build := func(text string) *Stack {
		specs, err := ParseStack(text)
		require.NoError(t, err)
		s, err := NewStack(specs, clock)
		require.NoError(t, err)
		s.SetWaits(specs, 0)
		return s
	}
	keyed := build("keys(max=10):token-bucket:capacity=1,rate=1/1s")
	for _, c := range []struct {
		key  string
		want limiters.Decision
	}{{"a", limiters.Admitted}, {"b", limiters.Admitted}, {"a", limiters.Rejected}} {
		d, _, _ := keyed.Decide(0, c.key, 1)
		assert.Equal(t, c.want, d, c.key)
	}
	full := build("concurrency:max=5+keys(max=1,evict=fresh):token-bucket:capacity=1,rate=1/1h")
	d, _, _ := full.Decide(0, "a", 1)
	require.Equal(t, limiters.Admitted, d)
	d, stage, _ := full.Decide(0, "b", 1)
	assert.Equal(t, []any{limiters.Rejected, 1}, []any{d, stage}, "the keyed stage's full table refuses b")
	nginx := build("nginx:rate=10r/s,burst=5,delay=1")
	_, _, wait := nginx.Decide(0, "", 1)
	assert.Zero(t, wait)
	_, _, _ = nginx.Decide(0, "", 1)
	d, _, wait = nginx.Decide(0, "", 1)
	assert.Equal(t, []any{limiters.Admitted, 100 * time.Millisecond}, []any{d, wait}, "held, not refused")
}
