package limiters

// The sliding window's two paths apart, for profiles (BenchmarkAcquireAt/kind=sliding-window
// mixes them, one new slot in ten calls):
//
//	BenchmarkSlidingWindowPath/path=fast       every call in head's slot, its total published
//	BenchmarkSlidingWindowPath/path=new-slot   every call the first of a new slot
//
// Instructions per call, stable under load where nanoseconds are not:
//
//	CGO_ENABLED=0 go test -c -o /tmp/l.test ./limiters
//	GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 valgrind --tool=callgrind /tmp/l.test \
//	    -test.run '^$' -test.bench 'SlidingWindowPath/path=fast' -test.benchtime 1000000x
//
// (then the same with 3000000x: the difference over 2000000 is the cost of one call).

import (
	"math"
	"testing"
	"time"
)

func BenchmarkSlidingWindowPath(b *testing.B) {
	for _, path := range []struct {
		name   string
		limit  int
		window time.Duration
		step   time.Duration
	}{
		// One slot of 6 minutes holds every call of the run (1ns apart), and 2^32−1 permits.
		{"fast", math.MaxUint32, time.Hour, time.Nanosecond},
		// 100 per 100µs in 10µs slots, one call per slot: each one announces a new slot.
		{"new-slot", 100, 100 * time.Microsecond, 10 * time.Microsecond},
	} {
		b.Run("path="+path.name, func(b *testing.B) {
			s := must(NewSlidingWindow(path.limit, path.window, 10, benchClock))
			now, admits := benchStart, 0
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				now += path.step
				if s.AcquireAt(now, 1) == Admitted {
					admits++
				}
			}
			b.StopTimer()
			reportAdmits(b, int64(admits))
		})
	}
}
