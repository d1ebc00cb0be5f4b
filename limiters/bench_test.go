package limiters

// Benchmarks, named so that benchstat groups them:
//
//	BenchmarkAcquireAt/kind=K/path=admit|reject            explicit time, one goroutine
//	BenchmarkAcquireAtParallel/kind=K/path=admit|reject    explicit time, b.RunParallel
//	BenchmarkTryAcquire/kind=K/clock=monotonic             real clock, one goroutine
//	BenchmarkTryAcquireParallel/kind=K/clock=monotonic     real clock, b.RunParallel
//
// kind=floor is the cheapest possible decision, a bare atomic.Int64 Load + CompareAndSwap;
// kind=x-time-rate is golang.org/x/time/rate (AllowN(t, 1) on the explicit-time path,
// Allow() on the real clock) as the peer to compare with.
//
// On the admit path every call is admitted: the single-goroutine forms advance now by one
// emission interval (or by window/limit) per call; the parallel forms use configurations
// whose burst b.N cannot exhaust (the leaky bucket and guava-warmup, whose bursts are 1,
// cannot be configured so and report their admit fractions). On the reject path now is
// frozen after the burst is spent, so every call is rejected. Each benchmark reports admits/op to prove which path ran.
//
// Reproduce:
//
//	go test -run '^$' -bench . -benchmem -count 5 ./limiters/ > /tmp/bench.txt
//	benchstat /tmp/bench.txt

import (
	"math"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// benchKind builds one limiter kind for the benchmarks.
type benchKind struct {
	name string
	// sequential returns a limiter and the time step per call that admits every call.
	sequential func(b *testing.B) (Limiter, time.Duration)
	// generous returns a limiter whose burst is too large for b.N to exhaust at a frozen time.
	generous func(b *testing.B) Limiter
	// rejecting, if set, replaces sequential on the reject path (a small burst to spend).
	rejecting func() Limiter
	// release, if set, is called after each admitted acquire on the admit path.
	release func(l Limiter)
}

func (k benchKind) reject(b *testing.B) Limiter {
	if k.rejecting != nil {
		return k.rejecting()
	}
	l, _ := k.sequential(b)
	return l
}

var benchKinds = []benchKind{
	{
		name: "token-bucket",
		sequential: func(*testing.B) (Limiter, time.Duration) {
			return must(NewTokenBucket(100, PerSecond(1_000_000), benchClock)), time.Microsecond
		},
		generous: func(*testing.B) Limiter {
			return must(NewTokenBucket(1<<40, Rate{1, 1}, benchClock))
		},
	},
	{
		name: "leaky-bucket",
		sequential: func(*testing.B) (Limiter, time.Duration) {
			return must(NewLeakyBucket(PerSecond(1_000_000), benchClock)), time.Microsecond
		},
		generous: func(*testing.B) Limiter {
			return must(NewLeakyBucket(Rate{1, 1}, benchClock))
		},
	},
	{
		name: "sliding-window",
		sequential: func(*testing.B) (Limiter, time.Duration) {
			// 100 per 100µs in 10 slots of 10µs; one call per µs is exactly the limit.
			return must(NewSlidingWindow(100, 100*time.Microsecond, 10, benchClock)), time.Microsecond
		},
		generous: func(*testing.B) Limiter {
			return must(NewSlidingWindow(math.MaxUint32, time.Hour, 10, benchClock))
		},
	},
	{
		name: "fixed-window",
		sequential: func(*testing.B) (Limiter, time.Duration) {
			return must(NewFixedWindow(100, 100*time.Microsecond, benchClock)), time.Microsecond
		},
		generous: func(*testing.B) Limiter {
			return must(NewFixedWindow(math.MaxUint32, time.Hour, benchClock))
		},
	},
	{
		name: "warm-up",
		sequential: func(*testing.B) (Limiter, time.Duration) {
			// Warm: the benchmark's times start past the 1ms warm-up (see benchStart).
			return must(NewWarmUpTokenBucket(100, PerSecond(1_000_000), time.Millisecond, zeroClock{})), time.Microsecond
		},
		generous: func(*testing.B) Limiter {
			return must(NewWarmUpTokenBucket(1<<40, Rate{1, 1}, time.Millisecond, zeroClock{}))
		},
	},
	{
		name: "warm-up-warming",
		sequential: func(*testing.B) (Limiter, time.Duration) {
			// Still warming for the whole run (1000h): the ramped interval is computed on
			// every call. A step of 3T admits at any age.
			return must(NewWarmUpTokenBucket(100, PerSecond(1_000_000), 1000*time.Hour, zeroClock{})), 3 * time.Microsecond
		},
		generous: func(*testing.B) Limiter {
			return must(NewWarmUpTokenBucket(1<<40, Rate{1, 1}, 1000*time.Hour, zeroClock{}))
		},
	},
	{
		// Acquire only: 2^31-1 permits are more than b.N can take.
		name: "concurrency",
		sequential: func(*testing.B) (Limiter, time.Duration) {
			return must(NewConcurrency(math.MaxInt32)), 0
		},
		rejecting: func() Limiter { return must(NewConcurrency(100)) },
		generous:  func(*testing.B) Limiter { return must(NewConcurrency(math.MaxInt32)) },
	},
	{
		// The bulkhead's real cycle: acquire, then Release — two CAS loops.
		name: "concurrency-release",
		sequential: func(*testing.B) (Limiter, time.Duration) {
			return must(NewConcurrency(100)), 0
		},
		generous: func(*testing.B) Limiter { return must(NewConcurrency(math.MaxInt32)) },
		release:  func(l Limiter) { l.(*Concurrency).Release(1) },
	},
}

var sink atomic.Int64

// acquireLoop makes n decisions at now+step, now+2·step, … on l's concrete type, so that the
// figure is the decision's cost rather than an interface call's (path=admit-via-interface
// measures that), as in the floor. With release it releases each admitted permit.
func acquireLoop(n int, l Limiter, now, step time.Duration, release bool) int64 {
	admits := int64(0)
	switch l := l.(type) {
	case *TokenBucket:
		for range n {
			now += step
			if l.AcquireAt(now, 1) == Admitted {
				admits++
			}
		}
	case *LeakyBucket:
		for range n {
			now += step
			if l.AcquireAt(now, 1) == Admitted {
				admits++
			}
		}
	case *SlidingWindow:
		for range n {
			now += step
			if l.AcquireAt(now, 1) == Admitted {
				admits++
			}
		}
	case *FixedWindow:
		for range n {
			now += step
			if l.AcquireAt(now, 1) == Admitted {
				admits++
			}
		}
	case *WarmUpTokenBucket:
		for range n {
			now += step
			if l.AcquireAt(now, 1) == Admitted {
				admits++
			}
		}
	case *Concurrency:
		for range n {
			if l.AcquireAt(now, 1) == Admitted {
				admits++
				if release {
					l.Release(1)
				}
			}
		}
	default:
		panic("unknown limiter")
	}
	return admits
}

// tryAcquireLoop calls TryAcquire(1) n times on l's concrete type, as the peer's Allow() is
// called on *rate.Limiter.
func tryAcquireLoop(n int, l Limiter) int64 {
	admits := int64(0)
	switch l := l.(type) {
	case *TokenBucket:
		for range n {
			if l.TryAcquire(1) {
				admits++
			}
		}
	case *LeakyBucket:
		for range n {
			if l.TryAcquire(1) {
				admits++
			}
		}
	case *SlidingWindow:
		for range n {
			if l.TryAcquire(1) {
				admits++
			}
		}
	case *FixedWindow:
		for range n {
			if l.TryAcquire(1) {
				admits++
			}
		}
	case *WarmUpTokenBucket:
		for range n {
			if l.TryAcquire(1) {
				admits++
			}
		}
	case *Concurrency:
		for range n {
			if l.TryAcquire(1) {
				admits++
			}
		}
	default:
		panic("unknown limiter")
	}
	return admits
}

func BenchmarkAcquireAt(b *testing.B) {
	for _, k := range benchKinds {
		b.Run("kind="+k.name+"/path=admit", func(b *testing.B) {
			l, step := k.sequential(b)
			b.ReportAllocs()
			b.ResetTimer()
			admits := acquireLoop(b.N, l, benchStart, step, k.release != nil)
			b.StopTimer()
			reportAdmits(b, admits)
		})
		b.Run("kind="+k.name+"/path=reject", func(b *testing.B) {
			l := k.reject(b)
			for l.AcquireAt(benchStart, 1) == Admitted { // spend the burst
			}
			b.ReportAllocs()
			b.ResetTimer()
			admits := acquireLoop(b.N, l, benchStart, 0, false)
			b.StopTimer()
			reportAdmits(b, admits)
		})
		b.Run("kind="+k.name+"/path=admit-via-interface", func(b *testing.B) {
			l, step := k.sequential(b)
			now, admits := benchStart, int64(0)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				now += step
				if l.AcquireAt(now, 1) == Admitted {
					admits++
					if k.release != nil {
						k.release(l)
					}
				}
			}
			b.StopTimer()
			reportAdmits(b, admits)
		})
	}
	b.Run("kind=x-time-rate/path=admit", func(b *testing.B) {
		l := rate.NewLimiter(1_000_000, 100)
		t, admits := time.Unix(1_700_000_000, 0), int64(0)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			t = t.Add(time.Microsecond)
			if l.AllowN(t, 1) {
				admits++
			}
		}
		b.StopTimer()
		reportAdmits(b, admits)
	})
	b.Run("kind=x-time-rate/path=reject", func(b *testing.B) {
		l := rate.NewLimiter(1_000_000, 100)
		t, admits := time.Unix(1_700_000_000, 0), int64(0)
		for l.AllowN(t, 1) {
		}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if l.AllowN(t, 1) {
				admits++
			}
		}
		b.StopTimer()
		reportAdmits(b, admits)
	})
	b.Run("kind=floor/path=admit", func(b *testing.B) {
		var v atomic.Int64
		b.ReportAllocs()
		for range b.N {
			x := v.Load()
			v.CompareAndSwap(x, x+1)
		}
		sink.Store(v.Load())
	})
}

func BenchmarkAcquireAtParallel(b *testing.B) {
	for _, k := range benchKinds {
		b.Run("kind="+k.name+"/path=admit", func(b *testing.B) {
			l := k.generous(b)
			var admits atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				now, mine := benchStart, int64(0)
				for pb.Next() {
					now++
					if l.AcquireAt(now, 1) == Admitted {
						mine++
						if k.release != nil {
							k.release(l)
						}
					}
				}
				admits.Add(mine)
			})
			b.StopTimer()
			reportAdmits(b, admits.Load())
		})
		b.Run("kind="+k.name+"/path=reject", func(b *testing.B) {
			l := k.reject(b)
			for l.AcquireAt(benchStart, 1) == Admitted {
			}
			var admits atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				mine := int64(0)
				for pb.Next() {
					if l.AcquireAt(benchStart, 1) == Admitted {
						mine++
					}
				}
				admits.Add(mine)
			})
			b.StopTimer()
			reportAdmits(b, admits.Load())
		})
	}
	b.Run("kind=x-time-rate/path=admit", func(b *testing.B) {
		l := rate.NewLimiter(1e9, 1<<40)
		base := time.Unix(1_700_000_000, 0)
		var admits atomic.Int64
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			t, mine := base, int64(0)
			for pb.Next() {
				t = t.Add(1)
				if l.AllowN(t, 1) {
					mine++
				}
			}
			admits.Add(mine)
		})
		b.StopTimer()
		reportAdmits(b, admits.Load())
	})
	b.Run("kind=x-time-rate/path=reject", func(b *testing.B) {
		l := rate.NewLimiter(1_000_000, 100)
		t := time.Unix(1_700_000_000, 0)
		for l.AllowN(t, 1) {
		}
		var admits atomic.Int64
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			mine := int64(0)
			for pb.Next() {
				if l.AllowN(t, 1) {
					mine++
				}
			}
			admits.Add(mine)
		})
		b.StopTimer()
		reportAdmits(b, admits.Load())
	})
	b.Run("kind=floor/path=admit", func(b *testing.B) {
		var v atomic.Int64
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				x := v.Load()
				v.CompareAndSwap(x, x+1)
			}
		})
		sink.Store(v.Load())
	})
}

// BenchmarkTryAcquire is the real-clock path: TryAcquire(1) on NewMonotonicClock() against
// x/time/rate's Allow(), both configured so that every call is admitted.
func BenchmarkTryAcquire(b *testing.B) {
	for _, k := range benchKinds {
		if k.name == "warm-up-warming" || k.name == "concurrency-release" {
			continue
		}
		b.Run("kind="+k.name+"/clock=monotonic", func(b *testing.B) {
			var l Limiter
			switch k.name {
			case "leaky-bucket":
				l = must(NewLeakyBucket(Rate{1, 1}, NewMonotonicClock()))
			case "warm-up":
				// A 1ns warm-up: warm from the first call.
				l = must(NewWarmUpTokenBucket(1<<40, Rate{1, 1}, 1, NewMonotonicClock()))
			default:
				l = k.generous(b)
				switch l := l.(type) {
				case *TokenBucket:
					l.clock = NewMonotonicClock()
				case *SlidingWindow:
					l.clock = NewMonotonicClock()
				case *FixedWindow:
					l.clock = NewMonotonicClock()
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			admits := tryAcquireLoop(b.N, l)
			b.StopTimer()
			reportAdmits(b, admits)
		})
	}
	b.Run("kind=x-time-rate/clock=monotonic", func(b *testing.B) {
		l := rate.NewLimiter(1e9, 1<<40)
		admits := int64(0)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if l.Allow() {
				admits++
			}
		}
		b.StopTimer()
		reportAdmits(b, admits)
	})
}

// BenchmarkTryAcquireParallel is BenchmarkTryAcquire from GOMAXPROCS goroutines.
func BenchmarkTryAcquireParallel(b *testing.B) {
	b.Run("kind=token-bucket/clock=monotonic", func(b *testing.B) {
		l := must(NewTokenBucket(1<<40, Rate{1, 1}, NewMonotonicClock()))
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				l.TryAcquire(1)
			}
		})
	})
	b.Run("kind=x-time-rate/clock=monotonic", func(b *testing.B) {
		l := rate.NewLimiter(1e9, 1<<40)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				l.Allow()
			}
		})
	})
}
