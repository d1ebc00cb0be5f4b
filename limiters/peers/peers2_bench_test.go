package peers

import (
	"math"
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"
)

// flash5-token, resilience4j and two-counter beside their nearest ratelab kinds, in one
// benchmark function so that one run compares them:
//
//	BenchmarkPeers2/kind=K/path=admit|reject            explicit time, one goroutine
//	BenchmarkPeers2Parallel/kind=K/path=admit|reject    explicit time, b.RunParallel
//
// On the admit path time advances so that every call is admitted (the parallel form uses
// the largest limits at a frozen time: b.N cannot exhaust them, except Flash5's, whose largest
// bucket holds 2,147,483 tokens, after which its parallel admit path measures refusals); on
// the reject path time is frozen after the limit is spent.
//
//	go test -run '^$' -bench 'BenchmarkPeers2' -benchmem -count 5 ./limiters/
type peers2Bench struct {
	name       string
	sequential func() (limiters.Clocked, time.Duration) // a limiter and the step per call that admits every call
	generous   func() limiters.Clocked                  // a limit b.N cannot exhaust
}

var peers2Benches = []peers2Bench{
	{"flash5-token", func() (limiters.Clocked, time.Duration) {
		// 100 per 100ms: one token per ms, Flash5's clock's resolution.
		return must(NewFlash5Token(Flash5TokenSpec{Limit: 100, Window: 100 * time.Millisecond}, zeroClock{})), time.Millisecond
	}, func() limiters.Clocked {
		return must(NewFlash5Token(Flash5TokenSpec{Limit: flash5TokenMaxLimit, Window: time.Hour}, zeroClock{}))
	}},
	{"token-bucket", func() (limiters.Clocked, time.Duration) {
		return must(limiters.NewTokenBucket(100, limiters.PerSecond(1_000_000), zeroClock{})), time.Microsecond
	}, func() limiters.Clocked {
		return must(limiters.NewTokenBucket(1<<40, limiters.Rate{Permits: 1, Window: 1}, zeroClock{}))
	}},
	{"resilience4j", func() (limiters.Clocked, time.Duration) {
		// 100 per 100µs: one call per µs is exactly the limit.
		return must(NewResilience4j(Resilience4jSpec{Limit: 100, Period: 100 * time.Microsecond}, zeroClock{})), time.Microsecond
	}, func() limiters.Clocked {
		return must(NewResilience4j(Resilience4jSpec{Limit: resilience4jMaxLimit, Period: time.Hour}, zeroClock{}))
	}},
	{"fixed-window", func() (limiters.Clocked, time.Duration) {
		return must(limiters.NewFixedWindow(100, 100*time.Microsecond, zeroClock{})), time.Microsecond
	}, func() limiters.Clocked { return must(limiters.NewFixedWindow(math.MaxUint32, time.Hour, zeroClock{})) }},
	{"two-counter", func() (limiters.Clocked, time.Duration) {
		// 100 per 200µs, one call per 2µs, exactly the limit: it admits 99 of each 100, as
		// the first call of a period sees the previous period's 100 at full weight.
		return must(NewTwoCounter(TwoCounterSpec{Limit: 100, Window: 200 * time.Microsecond}, zeroClock{})), 2 * time.Microsecond
	}, func() limiters.Clocked {
		return must(NewTwoCounter(TwoCounterSpec{Limit: math.MaxUint16, Window: time.Hour}, zeroClock{}))
	}},
	{"sliding-window", func() (limiters.Clocked, time.Duration) {
		return must(limiters.NewSlidingWindow(100, 100*time.Microsecond, 10, zeroClock{})), time.Microsecond
	}, func() limiters.Clocked {
		return must(limiters.NewSlidingWindow(math.MaxUint32, time.Hour, 10, zeroClock{}))
	}},
}

func BenchmarkPeers2(b *testing.B) {
	for _, k := range peers2Benches {
		b.Run("kind="+k.name+"/path=admit", func(b *testing.B) {
			l, step := k.sequential()
			now, admits := benchStart, int64(0)
			b.ReportAllocs()
			for range b.N {
				now += step
				if l.AcquireAt(now, 1) == limiters.Admitted {
					admits++
				}
			}
			reportAdmits(b, admits)
		})
		b.Run("kind="+k.name+"/path=reject", func(b *testing.B) {
			l, _ := k.sequential()
			for l.AcquireAt(benchStart, 1) == limiters.Admitted {
			}
			admits := int64(0)
			b.ReportAllocs()
			for range b.N {
				if l.AcquireAt(benchStart, 1) == limiters.Admitted {
					admits++
				}
			}
			reportAdmits(b, admits)
		})
	}
}

func BenchmarkPeers2Parallel(b *testing.B) {
	for _, k := range peers2Benches {
		b.Run("kind="+k.name+"/path=admit", func(b *testing.B) {
			l := k.generous()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					l.AcquireAt(benchStart, 1)
				}
			})
		})
		b.Run("kind="+k.name+"/path=reject", func(b *testing.B) {
			l, _ := k.sequential()
			for l.AcquireAt(benchStart, 1) == limiters.Admitted {
			}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					l.AcquireAt(benchStart, 1)
				}
			})
		})
	}
}
