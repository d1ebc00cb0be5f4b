package peers

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/stretchr/testify/assert"
)

// The peers' tests' helpers: the same as package limiters' own test helpers, which an
// internal test of limiters cannot share (a package both import would import limiters).

// zeroClock is a clock stuck at 0, so that limiters are born at 0.
type zeroClock struct{}

func (zeroClock) Now() time.Duration { return 0 }

// fixedClock is a clock stuck at its value: a limiter made on it is born then.
type fixedClock time.Duration

func (c fixedClock) Now() time.Duration { return time.Duration(c) }

// benchStart is the first time used: past every warm-up of 1ms.
const benchStart = time.Second

func reportAdmits(b *testing.B, admits int64) {
	b.ReportMetric(float64(admits)/float64(b.N), "admits/op")
}

func must[L any](l L, err error) L {
	if err != nil {
		panic(err)
	}
	return l
}

// startGate releases goroutines together: wait blocks until open, then spins until every
// goroutine has passed, so that they start taking permits at the same moment.
type startGate struct {
	ch      chan struct{}
	arrived atomic.Int32
	n       int32
}

func newStartGate(n int) *startGate { return &startGate{ch: make(chan struct{}), n: int32(n)} }

func (g *startGate) open() { close(g.ch) }

func (g *startGate) wait() {
	<-g.ch
	g.arrived.Add(1)
	for g.arrived.Load() < g.n {
		runtime.Gosched()
	}
}

// race starts goroutines that wait on a gate, then each take permits one at a time with
// TryAcquire until refused; it returns the total taken.
func race(goroutines int, l limiters.Clocked) int {
	var (
		gate  = newStartGate(goroutines)
		wg    sync.WaitGroup
		total atomic.Int64
	)
	for range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			gate.wait()
			for l.TryAcquire(1) {
				total.Add(1)
				runtime.Gosched()
			}
		}()
	}
	gate.open()
	wg.Wait()
	return int(total.Load())
}

// randomAdmissions drives l with ops random requests (sizes 1…max, gaps 0…4·scale with
// bursts of simultaneous requests) and returns the time of every admitted permit, in order.
func randomAdmissions(l limiters.Limiter, seed uint64, ops int, scale time.Duration, start time.Duration) []time.Duration {
	r := rand.New(rand.NewPCG(seed, 99))
	var times []time.Duration
	now := start
	for range ops {
		switch p := r.IntN(10); {
		case p < 3: // same instant
		case p < 9:
			now += time.Duration(r.Int64N(int64(scale) + 1))
		default:
			now += time.Duration(r.Int64N(4*int64(scale) + 1))
		}
		n := 1
		if r.IntN(4) == 0 {
			n = 1 + r.IntN(l.MaxPermits())
		}
		if l.AcquireAt(now, n) == limiters.Admitted {
			for range n {
				times = append(times, now)
			}
		}
	}
	return times
}

// maxInWindow is the largest number of admission times inside any half-open interval of
// length L.
func maxInWindow(times []time.Duration, L time.Duration) int {
	if L <= 0 {
		return 0
	}
	best, i := 0, 0
	for j := range times {
		for times[j]-times[i] >= L {
			i++
		}
		best = max(best, j-i+1)
	}
	return best
}

// scaled is n calls of a long single-goroutine differential test, a fifth of them under the
// race detector or -short.
func scaled(n int) int {
	if raceDetector || testing.Short() {
		return max(n/5, 1)
	}
	return n
}

// step is one request on a virtual timeline, in the style of x/time/rate's rate_test.go.
type step struct {
	at   time.Duration
	n    int
	want limiters.Decision
}

func runSteps(t *testing.T, l limiters.Limiter, steps []step) {
	t.Helper()
	for i, s := range steps {
		assert.Equal(t, s.want, l.AcquireAt(s.at, s.n), "%s: step %d at %v n=%d", l, i, s.at, s.n)
	}
}
