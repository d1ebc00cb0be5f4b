//go:build unix

package redislimit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/internal/redistest"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/trace"
)

// client is a client of the test server with pool connections, closed at cleanup.
func client(t testing.TB, s *redistest.Server, pool int) *Client {
	c, err := NewClient(ClientOptions{Addr: s.Addr, PoolSize: pool, Timeout: 2 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// comparedSpecs are the specs run in Redis and in process side by side: emission intervals
// that are whole ms (100/1s → 10ms), not whole µs (3/1s → 333,333,334ns) and odd (7/100ms →
// 14,285,715ns), a capacity of 1 and of 40, windows of 1s and of an odd 333,333,334ns.
var comparedSpecs = []string{
	"token-bucket:capacity=3,rate=100/1s",
	"token-bucket:capacity=40,rate=3/1s",
	"token-bucket:capacity=5,rate=7/100ms",
	"leaky-bucket:rate=50/1s",
	"fixed-window:limit=30,window=1s",
	"fixed-window:limit=3,window=333333334ns",
}

type request struct {
	at      time.Duration
	permits int
}

// apiGatewayTrace is scenarios/traces/api-gateway.csv: 1,919 recorded requests.
func apiGatewayTrace(t *testing.T) []request {
	f, err := os.Open("../scenarios/traces/api-gateway.csv")
	require.NoError(t, err)
	defer f.Close()
	r, err := trace.NewReader(f)
	require.NoError(t, err)
	var out []request
	for {
		row, err := r.Next()
		if err != nil {
			require.ErrorIs(t, err, io.EOF)
			break
		}
		out = append(out, request{row.At, row.Permits})
	}
	require.Len(t, out, 1919)
	return out
}

// randomTrace is rows requests from start on, seeded: gaps of 0 (a burst at one instant) to
// 2 emission-interval-ish spans, now and then an idle of up to a minute, permits 1 to 6 (some
// beyond a capacity: Never).
func randomTrace(seed uint64, start time.Duration, rows int) []request {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	out := make([]request, rows)
	at := start
	for i := range out {
		switch k := rng.IntN(20); {
		case k < 6: // the same instant
		case k < 19:
			at += time.Duration(rng.Int64N(int64(40 * time.Millisecond)))
		default:
			at += time.Duration(rng.Int64N(int64(time.Minute)))
		}
		permits := 1
		if rng.IntN(8) == 0 {
			permits += rng.IntN(6)
		}
		out[i] = request{at, permits}
	}
	return out
}

// TestDecisionsEqualInProcess replays recorded and random traces through each spec in Redis
// (caller's time) and in process, and requires every decision, and every refusal's
// retry-after, to be the same — one by one and pipelined. The random traces start at 0, at
// 2^53 ns (where one double could not hold a time) and just below 2^62 ns (the last time
// ratelab accepts), so the decimal pairs' carries and borrows are all exercised.
func TestDecisionsEqualInProcess(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv, 4)
	traces := map[string][]request{"api-gateway.csv": apiGatewayTrace(t)}
	for i, start := range []time.Duration{0, 1 << 53, 1<<62 - 10*time.Hour} {
		traces[fmt.Sprintf("random-%d", i)] = randomTrace(uint64(i), start, 1500)
	}
	ctx := context.Background()
	for _, name := range []string{"api-gateway.csv", "random-0", "random-1", "random-2"} {
		trace := traces[name]
		for _, text := range comparedSpecs {
			t.Run(name+"/"+text, func(t *testing.T) {
				spec, err := limiters.ParseSpec(text)
				require.NoError(t, err)
				local, err := spec.New(fixedClock(0))
				require.NoError(t, err)
				batchLocal, err := spec.New(fixedClock(0))
				require.NoError(t, err)
				remote, err := New(c, "eq:"+name+":"+text, spec, Options{Clock: CallerClock})
				require.NoError(t, err)
				batch, err := New(c, "eq-batch:"+name+":"+text, spec, Options{Clock: CallerClock})
				require.NoError(t, err)
				require.NoError(t, remote.Reset(ctx))
				require.NoError(t, batch.Reset(ctx))
				counts := map[limiters.Decision]int{}
				for i, r := range trace {
					want, wantRetry := inProcess(local, r)
					got, err := remote.AcquireAt(ctx, r.at, r.permits)
					require.NoError(t, err)
					require.Equal(t, want, got.Decision, "row %d: %d permits at %dns", i, r.permits, r.at)
					if want == limiters.Rejected {
						require.Equal(t, wantRetry, got.RetryAfter, "row %d: retry-after at %dns", i, r.at)
					}
					if want == limiters.Admitted || want == limiters.Rejected {
						require.Equal(t, r.at, got.At)
					}
					counts[want]++
				}
				// Both outcomes occur, or the comparison proves little.
				require.Positive(t, counts[limiters.Admitted], "%v", counts)
				require.Positive(t, counts[limiters.Rejected], "%v", counts)

				const chunk = 64
				reqs, out := make([]Request, chunk), make([]Result, chunk)
				for from := 0; from < len(trace); from += chunk {
					part := trace[from:min(from+chunk, len(trace))]
					for i, r := range part {
						reqs[i] = Request{At: r.at, Permits: r.permits}
					}
					require.NoError(t, batch.AcquireBatch(ctx, reqs[:len(part)], out))
					for i, r := range part {
						want, wantRetry := inProcess(batchLocal, r)
						require.Equal(t, want, out[i].Decision, "pipelined row %d", from+i)
						if want == limiters.Rejected {
							require.Equal(t, wantRetry, out[i].RetryAfter, "pipelined row %d", from+i)
						}
					}
				}
				// The state read from Redis is the in-process one.
				end := trace[len(trace)-1].at
				state, err := remote.StateAt(ctx, end)
				require.NoError(t, err)
				want := local.Snapshot(end)
				require.Equal(t, want.Available, state.Available)
				require.Equal(t, want.Arrival, state.Arrival)
				require.Equal(t, want.Count, state.Count)
				require.Equal(t, want.WindowStart, state.WindowStart)
			})
		}
	}
}

// inProcess is the in-process limiter's decision, and for a refusal its retry-after read
// before the decision.
func inProcess(l limiters.Limiter, r request) (limiters.Decision, time.Duration) {
	retry, _ := l.(limiters.RetryAfter).RetryAfterAt(r.at, r.permits)
	return l.AcquireAt(r.at, r.permits), retry
}

// TestRacersGetExactlyTheLimit: 64 goroutines across 4 connections race for a limit of 100
// at one frozen instant (the caller's time) and at Redis's own time (the rate refills one
// permit an hour, nothing during the test): exactly 100 are admitted, never 101.
func TestRacersGetExactlyTheLimit(t *testing.T) {
	srv := redistest.Start(t)
	clients := make([]*Client, 4)
	for i := range clients {
		clients[i] = client(t, srv, 1)
	}
	for _, c := range []struct {
		spec  string
		clock Clock
	}{
		{"token-bucket:capacity=100,rate=1/1h", CallerClock},
		{"fixed-window:limit=100,window=1h", CallerClock},
		{"token-bucket:capacity=100,rate=1/1h", ServerClock},
		{"fixed-window:limit=100,window=1000h", ServerClock},
	} {
		t.Run(c.spec+"/"+c.clock.String(), func(t *testing.T) {
			spec, err := limiters.ParseSpec(c.spec)
			require.NoError(t, err)
			key := "race:" + c.spec + ":" + c.clock.String()
			lims := make([]*Limiter, len(clients))
			for i, cl := range clients {
				lims[i], err = New(cl, key, spec, Options{Clock: c.clock})
				require.NoError(t, err)
			}
			require.NoError(t, lims[0].Reset(context.Background()))
			const racers, tries = 64, 5
			admitted := make(chan int, racers)
			errs := make(chan error, racers)
			start := make(chan struct{})
			for g := range racers {
				go func() {
					<-start
					lim, n := lims[g%len(lims)], 0
					for range tries {
						var r Result
						var err error
						if c.clock == CallerClock {
							r, err = lim.AcquireAt(context.Background(), 42*time.Second, 1)
						} else {
							r, err = lim.Acquire(context.Background(), 1)
						}
						if err != nil {
							errs <- err
							return
						}
						if r.Decision == limiters.Admitted {
							n++
						}
					}
					admitted <- n
					errs <- nil
				}()
			}
			close(start)
			total := 0
			for range racers {
				require.NoError(t, <-errs)
			}
			for range racers {
				total += <-admitted
			}
			require.Equal(t, 100, total, "%d racers × %d tries over 4 connections", racers, tries)
			for _, cl := range clients {
				require.Len(t, cl.idle, 1, "each client holds one connection, put back after the race")
			}
		})
	}
}

// fixedClock is a clock stuck at its value.
type fixedClock time.Duration

func (c fixedClock) Now() time.Duration { return time.Duration(c) }

func TestServerClock(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv, 2)
	ctx := context.Background()

	// 10/s, capacity 3: three pass, the fourth waits at most T = 100ms (less whatever of it
	// passed on the server between the decisions).
	bucket, err := New(c, "server:bucket", limiters.TokenBucketSpec{Capacity: 3, Rate: limiters.PerSecond(10)}, Options{})
	require.NoError(t, err)
	require.NoError(t, bucket.Reset(ctx))
	before := time.Now()
	for i := range 3 {
		r, err := bucket.Acquire(ctx, 1)
		require.NoError(t, err)
		require.Equal(t, limiters.Admitted, r.Decision, "request %d", i)
		// Redis's TIME is the Unix time: within a second of the test's wall clock.
		require.InDelta(t, float64(before.UnixNano()), float64(r.At), float64(time.Second))
	}
	r, err := bucket.Acquire(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, limiters.Rejected, r.Decision)
	require.Positive(t, r.RetryAfter)
	require.LessOrEqual(t, r.RetryAfter, 100*time.Millisecond)
	// The key expires when TAT passes: about 300ms after the first decision.
	ttl := pttl(t, srv, "server:bucket")
	require.Positive(t, ttl)
	require.LessOrEqual(t, ttl, 301*time.Millisecond)
	// The stored TAT is the full decimal count of ns since the epoch, 19 digits.
	tat, ok := srv.MustDo("GET", "server:bucket").(string)
	require.True(t, ok)
	require.Len(t, tat, 19)
	_, err = strconv.ParseInt(tat, 10, 64)
	require.NoError(t, err)

	// A fixed window of 5 per hour: five pass, the sixth is refused until the hour ends.
	window, err := New(c, "server:window", limiters.FixedWindowSpec{Limit: 5, Window: time.Hour}, Options{})
	require.NoError(t, err)
	require.NoError(t, window.Reset(ctx))
	for range 5 {
		r, err := window.Acquire(ctx, 1)
		require.NoError(t, err)
		require.Equal(t, limiters.Admitted, r.Decision)
	}
	r, err = window.Acquire(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, limiters.Rejected, r.Decision)
	require.Equal(t, time.Hour-time.Duration(r.At)%time.Hour, r.RetryAfter, "to the end of the aligned hour")
	ttl = pttl(t, srv, "server:window")
	require.InDelta(t, float64(r.RetryAfter), float64(ttl), float64(50*time.Millisecond), "the key expires with its window")
	state, err := window.StateAt(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, 5, state.Count)
	require.Equal(t, 0, state.Available)
	require.Equal(t, r.At+r.RetryAfter, state.WindowEnd)
}

// TestCallerClockKeyTTL: on the caller's clock a key lives CallerKeyTTL of real time after its
// last decision, whatever the virtual schedule says.
func TestCallerClockKeyTTL(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv, 1)
	ctx := context.Background()
	for _, spec := range []limiters.Spec{limiters.LeakyBucketSpec{Rate: limiters.PerSecond(1)}, limiters.FixedWindowSpec{Limit: 2, Window: time.Millisecond}} {
		l, err := New(c, "ttl:"+spec.String(), spec, Options{Clock: CallerClock, CallerKeyTTL: time.Minute})
		require.NoError(t, err)
		r, err := l.AcquireAt(ctx, time.Second, 1)
		require.NoError(t, err)
		require.Equal(t, limiters.Admitted, r.Decision)
		ttl := pttl(t, srv, l.Key())
		require.InDelta(t, float64(time.Minute), float64(ttl), float64(time.Second), spec.String())
	}
}

// pttl is the key's time to live.
func pttl(t *testing.T, srv *redistest.Server, key string) time.Duration {
	ms, ok := srv.MustDo("PTTL", key).(int64)
	require.True(t, ok)
	return time.Duration(ms) * time.Millisecond
}

// TestScriptNotCached: after SCRIPT FLUSH (a restarted or failed-over server) EVALSHA is
// answered NOSCRIPT; the script is sent with SCRIPT LOAD and the decision made all the same,
// one by one and pipelined.
func TestScriptNotCached(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv, 1)
	ctx := context.Background()
	l, err := New(c, "noscript", limiters.TokenBucketSpec{Capacity: 2, Rate: limiters.PerSecond(1)}, Options{Clock: CallerClock})
	require.NoError(t, err)
	exists := func() bool {
		return srv.MustDo("SCRIPT", "EXISTS", gcraScript.sha).([]any)[0] == int64(1)
	}
	srv.MustDo("SCRIPT", "FLUSH")
	require.False(t, exists())
	r, err := l.AcquireAt(ctx, 0, 1)
	require.NoError(t, err)
	require.Equal(t, limiters.Admitted, r.Decision)
	require.True(t, exists(), "SCRIPT LOAD cached the script")

	srv.MustDo("SCRIPT", "FLUSH")
	out := make([]Result, 3)
	require.NoError(t, l.AcquireBatch(ctx, []Request{{0, 1}, {0, 1}, {time.Second, 1}}, out))
	require.Equal(t, []limiters.Decision{limiters.Admitted, limiters.Rejected, limiters.Admitted},
		[]limiters.Decision{out[0].Decision, out[1].Decision, out[2].Decision})
	require.Equal(t, time.Second, out[1].RetryAfter)
	require.True(t, exists())
}

func TestNewRefuses(t *testing.T) {
	c, err := NewClient(ClientOptions{Addr: "127.0.0.1:1"}) // never dialled
	require.NoError(t, err)
	defer c.Close()
	bucket := limiters.TokenBucketSpec{Capacity: 3, Rate: limiters.PerSecond(100)}
	for _, tc := range []struct {
		spec limiters.Spec
		key  string
		opts Options
		want string
	}{
		{limiters.SlidingWindowSpec{Limit: 10, Window: time.Second, Slots: 10}, "k", Options{}, "kind sliding-window has no Redis script (token-bucket, leaky-bucket and fixed-window do)"},
		{bucket, "", Options{}, "key: must not be empty"},
		{bucket, "k", Options{CallerKeyTTL: time.Hour}, "CallerKeyTTL=1h: only used with CallerClock"},
		{bucket, "k", Options{Clock: CallerClock, CallerKeyTTL: time.Microsecond}, "CallerKeyTTL=1µs: must be at least 1ms"},
		{bucket, "k", Options{Clock: 7}, "clock=Clock(7): must be ServerClock or CallerClock"},
		{limiters.FixedWindowSpec{Limit: 3, Window: 1500 * time.Nanosecond}, "k", Options{}, "window=1.5µs: with ServerClock the window must be a whole number of microseconds"},
		{limiters.TokenBucketSpec{Capacity: 0, Rate: limiters.PerSecond(100)}, "k", Options{}, "capacity=0: must be at least 1"},
	} {
		_, err := New(c, tc.key, tc.spec, tc.opts)
		require.ErrorContains(t, err, tc.want)
	}
	// A window of whole µs is fine with ServerClock, any with CallerClock.
	_, err = New(c, "k", limiters.FixedWindowSpec{Limit: 3, Window: 1500 * time.Nanosecond}, Options{Clock: CallerClock})
	require.NoError(t, err)

	server, err := New(c, "k", bucket, Options{})
	require.NoError(t, err)
	_, err = server.AcquireAt(context.Background(), 0, 1)
	require.ErrorContains(t, err, "this limiter reads Redis's TIME: use Acquire")
	caller, err := New(c, "k", bucket, Options{Clock: CallerClock})
	require.NoError(t, err)
	_, err = caller.Acquire(context.Background(), 1)
	require.ErrorContains(t, err, "on the caller's clock: use AcquireAt")
	_, err = caller.AcquireAt(context.Background(), -time.Second, 1)
	require.ErrorContains(t, err, "now=-1s: times must be between 0 and 2^62ns")
	// Invalid and Never need no round trip: the unreachable store is never asked.
	for n, want := range map[int]limiters.Decision{0: limiters.Invalid, -1: limiters.Invalid, 4: limiters.Never} {
		r, err := caller.AcquireAt(context.Background(), 0, n)
		require.NoError(t, err)
		require.Equal(t, want, r.Decision)
	}
	var store *StoreError
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = caller.AcquireAt(ctx, 0, 1)
	require.True(t, errors.As(err, &store), "%v", err)
	require.Equal(t, "k", store.Key)
}
