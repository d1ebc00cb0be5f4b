package limiters_test

import (
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/stretchr/testify/require"
)

// The helpers of package limiters_test: the tests that run peers' kinds beside ratelab's own
// (limiters/peers registers them), with the same helpers as helpers_test.go's.

func must[L any](l L, err error) L {
	if err != nil {
		panic(err)
	}
	return l
}

// zeroClock is a clock stuck at 0, so that warm-up limiters are born at 0.
type zeroClock struct{}

func (zeroClock) Now() time.Duration { return 0 }

// startGate releases goroutines together: wait blocks on a channel until open closes it, and
// then spins (yielding) until every goroutine has passed the channel, so that they start
// taking permits at the same moment rather than in the order the scheduler woke them.
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

// testLimiter is every form ratelab's own kinds offer: the core, the clocked forms and
// TryAcquireAt.
type testLimiter interface {
	limiters.Clocked
	TryAcquireAt(now time.Duration, n int) bool
}

// clientKeys are n distinct keys as a service sees them: "client-0" … "client-999999".
func clientKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = "client-" + strconv.Itoa(i)
	}
	return keys
}

func keyed(t testing.TB, spec string, config string, clock limiters.Clock) *limiters.KeyedLimiter {
	t.Helper()
	s, err := limiters.ParseSpec(spec)
	require.NoError(t, err)
	c, err := limiters.ParseKeyedConfig(config)
	require.NoError(t, err)
	k, err := limiters.NewKeyed(s, c, clock)
	require.NoError(t, err)
	return k
}
