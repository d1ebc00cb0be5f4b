package limiters_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"

	"github.com/stretchr/testify/require"
)

// productsLate are the kinds whose product defines what a late clock reading does, and
// defines it as more than the bound: each kind's doc table says so ("a late clock reading"),
// and ratelab follows the product. Flash5's FIXED_WINDOW resets its count on any other epoch;
// its TOKEN_BUCKET sets its refill time back to the late reading, so the refill is counted
// twice; sentinel-golang drops the pass of a bucket behind its slot and reads the window's
// buckets as deprecated (now − start underflows), so everything passes until time catches up;
// go.uber.org/ratelimit never refuses (Take sleeps), so its decisions bound nothing.
var productsLate = map[limiters.Kind]bool{peers.KindFlash5Fixed: true, peers.KindFlash5Token: true, peers.KindSentinel: true, peers.KindUber: true}

// Times that go backwards, as a caller racing another's clock reading gives them (up to two
// windows late, one call in ten), never make a kind admit more than its AdmissionBound over
// the times as seen (each call at the latest time given so far): a late reading is judged at
// its own time against newer state, or at the latest time, never as a fresh start. The
// products in productsLate define it otherwise; the test pins that they still do, so that
// the list stays honest.
func TestLateReadingsKeepTheBound(t *testing.T) {
	for _, k := range limiters.Kinds() {
		spec, err := limiters.ParseSpec(k.Example)
		require.NoError(t, err)
		w := spec.NaturalWindow()
		if w == 0 {
			continue // no time axis
		}
		bound, ok := limiters.AdmissionBound(spec, w)
		require.True(t, ok, k.Example)
		worst := int64(0)
		for seed := uint64(0); seed < 30; seed++ {
			for _, step := range []time.Duration{w / 50, w / 500} {
				worst = max(worst, lateReadingsWorst(t, spec, w, step, seed))
			}
		}
		if productsLate[k.Kind] {
			require.Greater(t, worst, bound, "%s: its product lets late readings past the bound; does ratelab still follow it?", k.Example)
			continue
		}
		require.LessOrEqual(t, worst, bound, "%s: a late reading admitted past the bound over %s", k.Example, limiters.FormatDuration(w))
	}
}

// lateReadingsWorst runs 2000 calls of 1 permit, times stepping up by up to step and one in
// ten going back by up to two windows, and returns the most admitted in any window of the
// times as seen.
func lateReadingsWorst(t *testing.T, spec limiters.Spec, w, step time.Duration, seed uint64) int64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	l, err := spec.New(zeroClock{})
	require.NoError(t, err)
	var seen []time.Duration // the latest time given, at each admission
	now, latest := 10*w, time.Duration(0)
	for range 2000 {
		if rng.IntN(10) == 0 {
			now = max(now-time.Duration(rng.Int64N(int64(2*w))), 0)
		} else {
			now += time.Duration(rng.Int64N(int64(step)))
		}
		latest = max(latest, now)
		if l.AcquireAt(now, 1) == limiters.Admitted {
			seen = append(seen, latest)
		}
	}
	worst, j := int64(0), 0
	for i := range seen {
		for seen[i]-seen[j] >= w {
			j++
		}
		worst = max(worst, int64(i-j+1))
	}
	return worst
}
