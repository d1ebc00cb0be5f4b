package peers

import (
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/ratelimit"
)

// uberSpecs are the configurations the fidelity tests run: the default slack, WithoutSlack, a
// rate whose per-request interval is truncated (3/1s: 333,333,333ns), and a short window.
var uberSpecs = []string{
	"uber:rate=100/1s",
	"uber:rate=100/1s,slack=0",
	"uber:rate=3/1s,slack=3",
	"uber:rate=7/100ms,slack=1",
}

// fakeClock is a plain test clock for the library: Now is whatever the test set; Sleep
// counts and returns at once.
type fakeClock struct {
	now    time.Time
	sleeps int
}

func (c *fakeClock) Now() time.Time        { return c.now }
func (c *fakeClock) Sleep(d time.Duration) { c.sleeps++ }

// uberTwin is a separate ratelimit.Limiter on a fake clock, called directly: n Takes for a
// request of n, its wait the last one's return minus now.
type uberTwin struct {
	lim   ratelimit.Limiter
	clock *fakeClock
}

func newUberTwin(s UberSpec) *uberTwin {
	c := &fakeClock{now: virtualEpoch}
	opts := []ratelimit.Option{ratelimit.Per(s.Rate.Window), ratelimit.WithClock(c)}
	if s.Slack == 0 {
		opts = append(opts, ratelimit.WithoutSlack)
	} else {
		opts = append(opts, ratelimit.WithSlack(s.Slack))
	}
	return &uberTwin{lim: ratelimit.New(s.Rate.Permits, opts...), clock: c}
}

func (w *uberTwin) take(at time.Time, n int) time.Duration {
	if at.After(w.clock.now) {
		w.clock.now = at // a real clock never runs back
	}
	var last time.Time
	for range n {
		last = w.lim.Take()
	}
	return max(last.Sub(at), 0)
}

func (w *uberTwin) state(t *testing.T) int64 {
	state, _, _, err := uberInternals(w.lim)
	require.NoError(t, err)
	return *state
}

// The kind is the library: on random traffic (gaps from 0 to 3 intervals, bursts at one
// instant, idles of up to 30 intervals, multi-permit requests up to slack + 1, late clock
// readings), every wait equals n direct Takes of a separate ratelimit.Limiter on a fake
// clock at the same time, and so does the library's state word after every step.
func TestUberIsTheLibrary(t *testing.T) {
	total := 0
	for _, text := range uberSpecs {
		s := mustSpec(t, text).(UberSpec)
		u := must(NewUber(s, zeroClock{}))
		twin := newUberTwin(s)
		rng := rand.New(rand.NewPCG(31, uint64(len(text))))
		per := s.per()
		now := time.Duration(0)
		waited, immediate := 0, 0
		for i := range 60_000 {
			at := now
			switch p := rng.IntN(20); {
			case p < 6: // same instant
			case p == 6: // a late reading
				at = max(now-time.Duration(rng.Int64N(int64(per))), 0)
			case p == 7: // an idle
				now += time.Duration(rng.Int64N(30 * int64(per)))
				at = now
			default: // on average about the rate, whatever the slack
				now += time.Duration(rng.Int64N(int64(3+s.Slack/2) * int64(per)))
				at = now
			}
			n := 1
			if rng.IntN(4) == 0 {
				n = 1 + rng.IntN(s.Slack+1)
			}
			want := twin.take(virtualEpoch.Add(at), n)
			var got limiters.Reservation
			if rng.IntN(2) == 0 {
				got = u.ReserveAt(at, n, limiters.MaxWaitForever)
			} else {
				got = u.ReserveAt(at, n, 0) // Take cannot refuse: maxWait changes nothing
			}
			require.Equal(t, limiters.Reservation{Decision: limiters.Admitted, Permits: n, At: at, Wait: want}, got, "%s: step %d at %s n=%d", text, i, at, n)
			require.Equal(t, twin.state(t), *u.state, "%s: step %d: the state word", text, i)
			if want > 0 {
				waited++
			} else {
				immediate++
			}
			total++
		}
		t.Logf("%s: %d waited, %d returned at once; the twin slept %d times", text, waited, immediate, twin.clock.sleeps)
		assert.Greater(t, waited, 5000, text)
		assert.Greater(t, immediate, 5000, text)
	}
	assert.GreaterOrEqual(t, total, 200_000)
}

// uberReference is Take's documented rule in the library's own terms, as plain code: s is
// the Unix ns of the last permit issued (0: never), per and maxSlack in ns.
type uberReference struct {
	s, per, maxSlack int64
}

func (r *uberReference) take(now int64) (sleep int64) {
	var next int64
	switch {
	case r.s == 0 || (r.maxSlack == 0 && now-r.s > r.per):
		next = now
	case r.maxSlack > 0 && now-r.s > r.maxSlack+r.per:
		next = now - r.maxSlack
	default:
		next = r.s + r.per
	}
	r.s = next
	return max(next-now, 0)
}

// The kind waits as Take's rule written out as plain code, on 50,000 random requests per
// configuration.
func TestUberMatchesItsRule(t *testing.T) {
	for _, text := range uberSpecs {
		s := mustSpec(t, text).(UberSpec)
		u := must(NewUber(s, zeroClock{}))
		per := int64(s.Rate.Window) / int64(s.Rate.Permits)
		ref := &uberReference{per: per, maxSlack: int64(s.Slack) * per}
		rng := rand.New(rand.NewPCG(7, 8))
		now := time.Duration(0)
		for i := range 50_000 {
			if rng.IntN(3) > 0 {
				now += time.Duration(rng.Int64N(2 * per))
			}
			if rng.IntN(50) == 0 {
				now += time.Duration(rng.Int64N(int64(s.Slack+3) * per))
			}
			n := 1 + rng.IntN(s.Slack+1)
			var want int64
			for range n {
				want = ref.take(virtualEpoch.UnixNano() + int64(now))
			}
			require.Equal(t, time.Duration(want), u.ReserveAt(now, n, limiters.MaxWaitForever).Wait, "%s: step %d at %s n=%d", text, i, now, n)
		}
	}
}

// Uber is ratelab's token bucket with capacity slack + 1 in reserve mode, once its first
// call's missing slack is accounted for (the bucket spends slack permits at that time), when
// window/permits is a whole number of ns: the same waits on 50,000 random requests.
func TestUberIsATokenBucketThatStartsSpent(t *testing.T) {
	for _, slack := range []int{0, 1, 10} {
		u := must(NewUber(UberSpec{Rate: limiters.PerSecond(100), Slack: slack}, zeroClock{}))
		tb := must(limiters.NewTokenBucket(slack+1, limiters.PerSecond(100), zeroClock{}))
		rng := rand.New(rand.NewPCG(3, uint64(slack)))
		now := time.Duration(0)
		for i := range 50_000 {
			if rng.IntN(3) > 0 {
				now += time.Duration(rng.Int64N(int64(25 * time.Millisecond)))
			}
			if i == 0 && slack > 0 {
				require.Equal(t, limiters.Admitted, tb.AcquireAt(now, slack), "the first call gets no slack")
			}
			n := 1 + rng.IntN(slack+1)
			want := tb.ReserveAt(now, n, limiters.MaxWaitForever)
			got := u.ReserveAt(now, n, limiters.MaxWaitForever)
			require.Equal(t, want, got, "slack %d: step %d at %s n=%d", slack, i, now, n)
		}
	}
}

// The documented behaviour with its numbers, at 100/1s: the first calls get no slack (12
// Takes at 0 return after 0, 10 … 110ms); after idle, slack + 1 = 11 return at once and the
// 12th after 10ms; WithoutSlack, three Takes after any idle return after 0, 10 and 20ms.
func TestUberDocumentedExamples(t *testing.T) {
	const ms = time.Millisecond
	waits := func(u *Uber, at time.Duration, k int) []time.Duration {
		var out []time.Duration
		for range k {
			out = append(out, u.ReserveAt(at, 1, limiters.MaxWaitForever).Wait)
		}
		return out
	}
	steps := func(from time.Duration, k int) []time.Duration {
		var out []time.Duration
		for i := range k {
			out = append(out, from+time.Duration(i)*10*ms)
		}
		return out
	}
	u := must(NewUber(mustSpec(t, "uber:rate=100/1s").(UberSpec), zeroClock{}))
	assert.Equal(t, 1, u.AvailableAt(0), "a fresh uber passes one at once")
	assert.Equal(t, steps(0, 12), waits(u, 0, 12), "the first calls get no slack")
	idle := 110*ms + 110*ms // the last permit was issued at 110ms; idle for slack + 1 intervals
	assert.Equal(t, 11, u.AvailableAt(idle))
	assert.Equal(t, append(make([]time.Duration, 11), 10*ms), waits(u, idle, 12), "after idle, slack + 1 at once")
	assert.Equal(t, limiters.Never, u.AcquireAt(time.Hour, 12), "more than slack + 1 Takes can never return at once")
	assert.Equal(t, limiters.Invalid, u.AcquireAt(time.Hour, 0))
	assert.Equal(t, limiters.Admitted, u.AcquireAt(time.Hour, 11), "Take always admits")
	assert.Equal(t, limiters.Admitted, u.AcquireAt(time.Hour, 11), "even when it would sleep")
	assert.Equal(t, 120*ms, u.ReserveAt(time.Hour, 1, 0).Wait, "the 23rd Take at 1h: 22 issued from 1h − 100ms, 10ms apart")

	strict := must(NewUber(mustSpec(t, "uber:rate=100/1s,slack=0").(UberSpec), zeroClock{}))
	assert.Equal(t, steps(0, 3), waits(strict, 0, 3))
	assert.Equal(t, steps(0, 3), waits(strict, time.Hour, 3), "WithoutSlack: nothing banked after any idle")
	assert.Equal(t, 1, strict.MaxPermits())
	assert.Equal(t, "uber:rate=100/1s,slack=0", strict.String())

	third := must(NewUber(UberSpec{Rate: limiters.PerSecond(3), Slack: 0}, zeroClock{}))
	third.AcquireAt(0, 1)
	assert.Equal(t, time.Duration(333_333_333), third.ReserveAt(0, 1, 0).Wait, "per = 1s/3 truncated, where ratelab rounds up")

	// The level Snapshot reports: (now − s)/per banked, negative while Takes are issued ahead.
	st := u.Snapshot(time.Hour)
	assert.Equal(t, limiters.ShapeLevel, st.Shape())
	assert.Equal(t, -12.0, st.Level, "the last permit was issued at 1h + 120ms: 12 per ahead")
	assert.Equal(t, 11.0, st.LevelMax)
	assert.Equal(t, time.Hour+130*ms, st.NextFree)
	assert.Contains(t, st.Explain(1, limiters.Admitted), "uber has -12 of 11 permits banked (per 10ms); 1 Take: the last permit is issued 130ms from now")
	assert.Contains(t, u.Snapshot(3*time.Hour).Explain(2, limiters.Admitted), "11 of 11 permits banked (per 10ms); 2 Takes return at once")
	fresh := must(NewUber(UberSpec{Rate: limiters.PerSecond(100), Slack: 10}, zeroClock{})).Snapshot(time.Second)
	assert.Equal(t, []any{1.0, 1, time.Second}, []any{fresh.Level, fresh.Available, fresh.NextFree}, "fresh: one Take at once, no slack")
}

// Epoch 0 would forget the first Take: the library reads an issue time of exactly 0 Unix ns as
// "never taken", so on a clock at Unix 0 the second Take at the same instant does not wait.
// That is why virtual time 0 is 2000-01-01.
func TestUberEpochZeroForgetsTheFirstTake(t *testing.T) {
	c := &fakeClock{now: time.Unix(0, 0)}
	lim := ratelimit.New(100, ratelimit.WithClock(c))
	lim.Take()
	assert.Equal(t, time.Unix(0, 0), lim.Take(), "the second Take returns at once")
	u := must(NewUber(UberSpec{Rate: limiters.PerSecond(100), Slack: 10}, zeroClock{}))
	u.AcquireAt(0, 1)
	assert.Equal(t, 10*time.Millisecond, u.ReserveAt(0, 1, 0).Wait, "at virtual 0 = 2000-01-01 it does")
}

// AvailableAt is what the library would do: a twin driven identically returns exactly
// AvailableAt Takes at once, and the next one sleeps.
func TestUberAvailableIsTheLibrarys(t *testing.T) {
	for _, text := range uberSpecs {
		s := mustSpec(t, text).(UberSpec)
		u := must(NewUber(s, zeroClock{}))
		rng := rand.New(rand.NewPCG(1, 2))
		var history [][2]int64
		now := time.Duration(0)
		for i := range 600 {
			now += time.Duration(rng.Int64N(int64(s.Slack+2) * int64(s.per())))
			n := 1 + rng.IntN(s.Slack+1)
			u.AcquireAt(now, n)
			history = append(history, [2]int64{int64(now), int64(n)})
			if i%20 != 0 {
				continue
			}
			probe := now + time.Duration(rng.Int64N(int64(s.Slack+2)*int64(s.per())))
			twin := must(NewUber(s, zeroClock{}))
			for _, h := range history {
				twin.AcquireAt(time.Duration(h[0]), int(h[1]))
			}
			got := 0
			for twin.ReserveAt(probe, 1, 0).Wait == 0 {
				got++
			}
			require.Equal(t, got, u.AvailableAt(probe), "%s: step %d", text, i)
			require.Equal(t, got, u.Snapshot(probe).Available)
		}
	}
}

// Validate refuses mode=try (Uber has none) and what the library cannot take, naming the field.
func TestUberValidate(t *testing.T) {
	_, err := limiters.Parse("uber:rate=100/1s,mode=try", zeroClock{})
	var ce *limiters.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "mode", ce.Field)
	assert.Contains(t, err.Error(), "has no try: Take always admits")
	for text, field := range map[string]string{
		"uber:rate=2/1ns":             "rate",
		"uber:rate=1/1h,slack=200000": "slack",
	} {
		_, err := limiters.Parse(text, zeroClock{})
		require.ErrorAs(t, err, &ce, text)
		assert.Equal(t, field, ce.Field, text)
	}
	for _, bad := range []string{"uber:slack=1", "uber:rate=100/1s,slack=-1", "uber:rate=100/1s,mode=block", "uber:rate=100/1s,burst=3"} {
		_, err := limiters.ParseSpec(bad)
		assert.Error(t, err, bad)
	}
	assert.ErrorContains(t, UberSpec{Rate: limiters.PerSecond(1), Slack: -1}.Validate(), "slack")
	assert.Equal(t, limiters.MaxWaitForever, mustSpec(t, "uber:rate=100/1s").(limiters.Waiting).CallerWait())
	assert.Equal(t, "uber:rate=100/1s", mustSpec(t, "uber:rate=100/1s,slack=10,mode=wait").String())
	assert.Equal(t, UberSpec{Rate: limiters.PerSecond(100), Slack: 10, Mode: "wait"}, mustSpec(t, "uber:rate=100/s"))
}

// Take is safe for concurrent use, and so is the virtual clock: 16 goroutines making 50 Takes
// each at a frozen time get the waits 0, 10ms, … 7.99s, each exactly once.
func TestUberRaceOnAFrozenClock(t *testing.T) {
	const goroutines, takes = 16, 50
	for round := range 20 {
		u := must(NewUber(UberSpec{Rate: limiters.PerSecond(100), Slack: 10}, zeroClock{}))
		var (
			gate = newStartGate(goroutines)
			wg   sync.WaitGroup
			mu   sync.Mutex
			all  []time.Duration
		)
		for range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				gate.wait()
				var mine []time.Duration
				for range takes {
					mine = append(mine, u.ReserveAt(5*time.Millisecond, 1, limiters.MaxWaitForever).Wait)
				}
				mu.Lock()
				all = append(all, mine...)
				mu.Unlock()
			}()
		}
		gate.open()
		wg.Wait()
		slices.Sort(all)
		want := make([]time.Duration, goroutines*takes)
		for i := range want {
			want[i] = time.Duration(i) * 10 * time.Millisecond
		}
		require.Equal(t, want, all, "round %d", round)
	}
}

// x/time/rate takes a mutex per call; reservations, cancellations and snapshots from many
// goroutines are race-free, and never leave more than the burst.
func TestXTimeRateConcurrentReservations(t *testing.T) {
	x := must(NewXTimeRate(XTimeRateSpec{Rate: limiters.PerSecond(1000), Burst: 20, Mode: "wait"}, zeroClock{}))
	var (
		wg       sync.WaitGroup
		admitted atomic.Int64
	)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for i := range 500 {
				at := time.Duration(i) * time.Millisecond
				r := x.ReserveAt(at, 1+rng.IntN(3), limiters.MaxWaitForever)
				if r.Decision == limiters.Admitted {
					admitted.Add(1)
				}
				if rng.IntN(3) == 0 {
					x.CancelAt(at, r)
				}
				if st := x.Snapshot(at); st.Level > 20 {
					t.Errorf("%v tokens, burst 20", st.Level)
				}
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int64(8*500), admitted.Load())
}
