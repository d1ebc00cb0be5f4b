package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scriptedScenario is a valid scenario whose sources are a script of n arrivals, 1ms apart,
// and n bursts.
func scriptedScenario(t testing.TB, n int) *Scenario {
	script := make([]Arrival, n)
	bursts := make([]Burst, n)
	for i := range n {
		script[i] = Arrival{At: time.Duration(i) * time.Millisecond}
		bursts[i] = Burst{At: time.Duration(i) * time.Millisecond, Count: 2}
	}
	return &Scenario{Name: "scripted", Horizon: time.Duration(n+1) * time.Millisecond, Lanes: stacks(t, "token-bucket:capacity=3,rate=100/1s"),
		Sources: []Source{{Kind: SourceScript, Script: script}, {Kind: SourceBursts, Bursts: bursts}}}
}

// A scenario is validated at each boundary it crosses (its file, the command line's flags,
// the engine's entry points), so Validate must cost next to nothing: a valid script or burst
// list allocates nothing per entry (it formatted "sources[k].arrivals[i]" for each one: 250µs
// for the peers scenario, 3% of its run, four times over).
func TestValidateAllocatesNothingPerArrival(t *testing.T) {
	small, large := scriptedScenario(t, 10), scriptedScenario(t, 10_000)
	require.NoError(t, small.Validate())
	require.NoError(t, large.Validate())
	// Within 2 of each other rather than equal: under -race an allocation now and then is the
	// runtime's, not Validate's (10 against 11 once in CI); naming every entry cost 99,499.
	smallAllocs, largeAllocs := testing.AllocsPerRun(20, func() { _ = small.Validate() }), testing.AllocsPerRun(20, func() { _ = large.Validate() })
	assert.LessOrEqual(t, largeAllocs, smallAllocs+2, "10,000 arrivals and bursts allocate what 10 do (%v against %v)", largeAllocs, smallAllocs)
}

// Naming a failing entry only when it fails keeps every message: the field is the entry's.
func TestValidateNamesTheFailingArrivalAndBurst(t *testing.T) {
	sc := scriptedScenario(t, 10)
	sc.Sources[0].Script[7].At = time.Millisecond // before arrival 6's 6ms
	assert.EqualError(t, sc.Validate(), "sources[0].arrivals[7].at: arrivals must be in time order and not negative")
	sc = scriptedScenario(t, 10)
	sc.Sources[0].Script[3].Permits = -1
	assert.EqualError(t, sc.Validate(), "sources[0].arrivals[3].permits: must be at least 1, got -1")
	sc = scriptedScenario(t, 10)
	sc.Sources[1].Bursts[4].Count = 0
	assert.EqualError(t, sc.Validate(), "sources[1].bursts[4].count: must be at least 1, got 0")
	sc = scriptedScenario(t, 10)
	sc.Sources[1].Bursts[9].Spread = MaxTime
	assert.ErrorContains(t, sc.Validate(), "sources[1].bursts[9].spread: must be less than ")
}

// BenchmarkValidate: Validate of a valid scenario of 10,000 scripted arrivals and 10,000
// bursts.
func BenchmarkValidate(b *testing.B) {
	sc := scriptedScenario(b, 10_000)
	b.ReportAllocs()
	for b.Loop() {
		if err := sc.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}
