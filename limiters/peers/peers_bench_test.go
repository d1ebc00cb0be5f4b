package peers

// The peer kinds beside the libraries they wrap and beside ratelab's token bucket, in one
// benchmark function per library so that one run compares them:
//
//	BenchmarkPeerXTimeRate/path=P/impl=kind|library|token-bucket
//	BenchmarkPeerUber/path=P/impl=kind|library|token-bucket
//
// impl=kind is the ratelab kind (AcquireAt, ReserveAt) on its concrete type; impl=library is
// the library called directly (AllowN, ReserveN + DelayFrom, Take on a fake clock whose time
// the loop sets); impl=token-bucket is ratelab's token bucket on the same rate (capacity =
// burst, or slack + 1 for uber). The wrapper's cost is kind ÷ library.
//
//	go test -run '^$' -bench 'BenchmarkPeer' -benchmem -count 5 ./limiters/

import (
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"

	"go.uber.org/ratelimit"
	"golang.org/x/time/rate"
)

func BenchmarkPeerXTimeRate(b *testing.B) {
	const perSecond, burst = 1_000_000, 100
	step := time.Second / perSecond
	spec := XTimeRateSpec{Rate: limiters.PerSecond(perSecond), Burst: burst}
	admits := func(b *testing.B, n int64) { reportAdmits(b, n) }

	// admit: time advances one token per call, every call admitted.
	b.Run("path=admit/impl=kind", func(b *testing.B) {
		x := must(NewXTimeRate(spec, zeroClock{}))
		now, n := benchStart, int64(0)
		b.ReportAllocs()
		for range b.N {
			now += step
			if x.AcquireAt(now, 1) == limiters.Admitted {
				n++
			}
		}
		admits(b, n)
	})
	b.Run("path=admit/impl=library", func(b *testing.B) {
		lim := rate.NewLimiter(rate.Limit(perSecond), burst)
		t, n := virtualEpoch.Add(benchStart), int64(0)
		b.ReportAllocs()
		for range b.N {
			t = t.Add(step)
			if lim.AllowN(t, 1) {
				n++
			}
		}
		admits(b, n)
	})
	b.Run("path=admit/impl=token-bucket", func(b *testing.B) {
		tb := must(limiters.NewTokenBucket(burst, limiters.PerSecond(perSecond), zeroClock{}))
		now, n := benchStart, int64(0)
		b.ReportAllocs()
		for range b.N {
			now += step
			if tb.AcquireAt(now, 1) == limiters.Admitted {
				n++
			}
		}
		admits(b, n)
	})

	// reject: time frozen after the burst is spent, every call refused.
	b.Run("path=reject/impl=kind", func(b *testing.B) {
		x := must(NewXTimeRate(spec, zeroClock{}))
		x.AcquireAt(benchStart, burst)
		n := int64(0)
		b.ReportAllocs()
		for range b.N {
			if x.AcquireAt(benchStart, 1) == limiters.Admitted {
				n++
			}
		}
		admits(b, n)
	})
	b.Run("path=reject/impl=library", func(b *testing.B) {
		lim := rate.NewLimiter(rate.Limit(perSecond), burst)
		t := virtualEpoch.Add(benchStart)
		lim.AllowN(t, burst)
		n := int64(0)
		b.ReportAllocs()
		for range b.N {
			if lim.AllowN(t, 1) {
				n++
			}
		}
		admits(b, n)
	})
	b.Run("path=reject/impl=token-bucket", func(b *testing.B) {
		tb := must(limiters.NewTokenBucket(burst, limiters.PerSecond(perSecond), zeroClock{}))
		tb.AcquireAt(benchStart, burst)
		n := int64(0)
		b.ReportAllocs()
		for range b.N {
			if tb.AcquireAt(benchStart, 1) == limiters.Admitted {
				n++
			}
		}
		admits(b, n)
	})

	// reserve (mode=wait): half a token's time per call, so every call waits a little more.
	wait := spec
	wait.Mode = "wait"
	b.Run("path=reserve/impl=kind", func(b *testing.B) {
		x := must(NewXTimeRate(wait, zeroClock{}))
		now, n := benchStart, int64(0)
		b.ReportAllocs()
		for range b.N {
			now += step / 2
			if x.ReserveAt(now, 1, limiters.MaxWaitForever).Wait > 0 {
				n++
			}
		}
		admits(b, n)
	})
	b.Run("path=reserve/impl=library", func(b *testing.B) {
		lim := rate.NewLimiter(rate.Limit(perSecond), burst)
		t, n := virtualEpoch.Add(benchStart), int64(0)
		b.ReportAllocs()
		for range b.N {
			t = t.Add(step / 2)
			if r := lim.ReserveN(t, 1); r.OK() && r.DelayFrom(t) > 0 {
				n++
			}
		}
		admits(b, n)
	})
	b.Run("path=reserve/impl=token-bucket", func(b *testing.B) {
		tb := must(limiters.NewTokenBucket(burst, limiters.PerSecond(perSecond), zeroClock{}))
		now, n := benchStart, int64(0)
		b.ReportAllocs()
		for range b.N {
			now += step / 2
			if tb.ReserveAt(now, 1, limiters.MaxWaitForever).Wait > 0 {
				n++
			}
		}
		admits(b, n)
	})

	// parallel: every goroutine admitted at its own advancing time (a burst b.N cannot spend).
	huge := XTimeRateSpec{Rate: limiters.PerSecond(1_000_000_000), Burst: 1 << 40}
	b.Run("path=parallel/impl=kind", func(b *testing.B) {
		x := must(NewXTimeRate(huge, zeroClock{}))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			now := benchStart
			for pb.Next() {
				now++
				x.AcquireAt(now, 1)
			}
		})
	})
	b.Run("path=parallel/impl=library", func(b *testing.B) {
		lim := rate.NewLimiter(1e9, 1<<40)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			t := virtualEpoch.Add(benchStart)
			for pb.Next() {
				t = t.Add(1)
				lim.AllowN(t, 1)
			}
		})
	})
	b.Run("path=parallel/impl=token-bucket", func(b *testing.B) {
		tb := must(limiters.NewTokenBucket(1<<40, limiters.Rate{Permits: 1, Window: 1}, zeroClock{}))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			now := benchStart
			for pb.Next() {
				now++
				tb.AcquireAt(now, 1)
			}
		})
	})
}

// benchUberClock is the fake clock the direct Take calls run on: Now is what the loop set.
type benchUberClock struct{ now time.Time }

func (c *benchUberClock) Now() time.Time      { return c.now }
func (c *benchUberClock) Sleep(time.Duration) {}

func BenchmarkPeerUber(b *testing.B) {
	const perSecond, slack = 1_000_000, 10
	per := time.Second / perSecond
	spec := UberSpec{Rate: limiters.PerSecond(perSecond), Slack: slack}
	waited := func(b *testing.B, n int64) { b.ReportMetric(float64(n)/float64(b.N), "waits/op") }
	for _, path := range []struct {
		name string
		step time.Duration
	}{
		{"take", per},    // one permit's time per Take: none waits
		{"take-wait", 0}, // time frozen: every Take after the first waits longer
	} {
		b.Run("path="+path.name+"/impl=kind", func(b *testing.B) {
			u := must(NewUber(spec, zeroClock{}))
			now, n := benchStart, int64(0)
			b.ReportAllocs()
			for range b.N {
				now += path.step
				if u.ReserveAt(now, 1, limiters.MaxWaitForever).Wait > 0 {
					n++
				}
			}
			waited(b, n)
		})
		b.Run("path="+path.name+"/impl=library", func(b *testing.B) {
			c := &benchUberClock{now: virtualEpoch.Add(benchStart)}
			lim := ratelimit.New(perSecond, ratelimit.WithSlack(slack), ratelimit.WithClock(c))
			n := int64(0)
			b.ReportAllocs()
			for range b.N {
				c.now = c.now.Add(path.step)
				if lim.Take().After(c.now) {
					n++
				}
			}
			waited(b, n)
		})
		b.Run("path="+path.name+"/impl=token-bucket", func(b *testing.B) {
			tb := must(limiters.NewTokenBucket(slack+1, limiters.PerSecond(perSecond), zeroClock{}))
			now, n := benchStart, int64(0)
			b.ReportAllocs()
			for range b.N {
				now += path.step
				if tb.ReserveAt(now, 1, limiters.MaxWaitForever).Wait > 0 {
					n++
				}
			}
			waited(b, n)
		})
	}
	b.Run("path=parallel/impl=kind", func(b *testing.B) {
		u := must(NewUber(spec, zeroClock{}))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				u.AcquireAt(benchStart, 1)
			}
		})
	})
	b.Run("path=parallel/impl=library", func(b *testing.B) {
		c := &benchUberClock{now: virtualEpoch.Add(benchStart)}
		lim := ratelimit.New(perSecond, ratelimit.WithSlack(slack), ratelimit.WithClock(c))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				lim.Take()
			}
		})
	})
	b.Run("path=parallel/impl=token-bucket", func(b *testing.B) {
		tb := must(limiters.NewTokenBucket(slack+1, limiters.PerSecond(perSecond), zeroClock{}))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				tb.ReserveAt(benchStart, 1, limiters.MaxWaitForever)
			}
		})
	})
}
