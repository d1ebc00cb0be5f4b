package fit

import (
	"context"
	"math/bits"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/trace"
)

// Relaxed answers "the smallest capacity that refuses at most PPM parts per million of the
// permits" at one rate.
type Relaxed struct {
	PPM      int64  `json:"ppm"`
	Rate     string `json:"rate"`
	Capacity int64  `json:"capacity"`
	Spec     string `json:"spec"`
	// RefusedPermits and RefusedRequests are what Capacity refuses; Below what Capacity − 1
	// refuses (more than allowed; 0 permits when Capacity is 1, the least there is).
	RefusedPermits  int64 `json:"refused_permits"`
	RefusedRequests int64 `json:"refused_requests"`
	BelowPermits    int64 `json:"below_refused_permits"`
	// Passes is how many batches of capacities the search replayed.
	Passes int `json:"passes"`
}

// batch is how many capacities one pass of the search tries: the interval shrinks 16-fold
// per pass, so a capacity up to 2²⁰ takes 5 passes.
const batch = 15

// buckets replays the trace through token buckets of one rate and several capacities, in the
// token bucket's own arithmetic (limiters/gcra.go): n > capacity is never admitted; else
// admitted when max(TAT − now, 0) ≤ τ − n·T, and then TAT = max(TAT, now) + n·T. A refused
// request leaves TAT as it was.
type buckets struct {
	interval  int64
	capacity  []int64
	tolerance []int64
	tat       []int64
	refused   []int64 // permits
	requests  []int64 // requests
}

func newBuckets(rate limiters.Rate, capacities []int64) *buckets {
	k := len(capacities)
	b := &buckets{interval: int64(rate.Interval()), capacity: capacities, tolerance: make([]int64, k),
		tat: make([]int64, k), refused: make([]int64, k), requests: make([]int64, k)}
	for i, c := range capacities {
		b.tolerance[i] = c * b.interval // capacity ≤ σ, and σ·T ≤ 2⁶²
	}
	return b
}

func (b *buckets) add(now, n int64) {
	for i, c := range b.capacity {
		if n > c {
			b.refused[i] += n
			b.requests[i]++
			continue
		}
		cost := n * b.interval
		backlog := max(b.tat[i]-now, 0)
		if backlog > b.tolerance[i]-cost {
			b.refused[i] += n
			b.requests[i]++
			continue
		}
		b.tat[i] = now + backlog + cost
	}
}

// within is whether refused permits are at most ppm per million of total: refused·10⁶ ≤
// ppm·total, compared in 128 bits.
func within(refused, total, ppm int64) bool {
	hi1, lo1 := bits.Mul64(uint64(refused), 1e6)
	hi2, lo2 := bits.Mul64(uint64(ppm), uint64(total))
	return hi1 < hi2 || (hi1 == hi2 && lo1 <= lo2)
}

// mostWithin is the most refused permits within ppm per million of total: ⌊ppm·total/10⁶⌋,
// in 128 bits (ppm ≤ 10⁶ keeps the quotient within an int64).
func mostWithin(total, ppm int64) int64 {
	hi, lo := bits.Mul64(uint64(ppm), uint64(total))
	q, _ := bits.Div64(hi, lo, 1e6)
	return int64(q)
}

// relax searches capacities 1 … p.Capacity (which refuses nothing) for the smallest that
// refuses at most ppm of total permits. Each pass tries batch capacities spread over the
// interval still open and keeps the smallest within the target, so the answer is within it
// and capacity − 1 is not. With one permit per request refusals never grow with capacity, and
// the answer is the smallest of all; with larger requests they can (a larger bucket admits a
// small request that then crowds out a larger one; TestRefusalsFallWithCapacity finds such
// traces), and a smaller capacity further down may happen to be within the target too.
func relax(ctx context.Context, read passes, p Point, total, ppm int64) (Relaxed, error) {
	r := Relaxed{PPM: ppm, Rate: p.RateText}
	lo, hi := int64(0), p.Capacity // lo refuses too much (0: no bucket at all); hi does not
	hiRefused, hiRequests, loRefused := int64(0), int64(0), total
	limit := mostWithin(total, ppm) // a count past it is not within the target, whatever more it is
	for hi-lo > 1 {
		var caps []int64
		step := float64(hi-lo) / (batch + 1)
		for i := 1; i <= batch; i++ {
			c := lo + int64(float64(i)*step+0.5)
			if c > lo && c < hi && (len(caps) == 0 || c > caps[len(caps)-1]) {
				caps = append(caps, c)
			}
		}
		refusals := read.refusals
		if t, ok := read.(*table); ok {
			// Only the batch's first capacity within the target is read below: the later
			// ones (each refusing what a full count over its segments finds) go uncounted.
			refusals = func(ctx context.Context, rate limiters.Rate, caps []int64, limit int64) ([]int64, []int64, error) {
				return t.refusalsUntil(ctx, rate, caps, limit, true)
			}
		}
		refused, requests, err := refusals(ctx, p.Rate, caps, limit)
		if err != nil {
			return r, err
		}
		r.Passes++
		newLo := lo
		for i, c := range caps {
			if within(refused[i], total, ppm) {
				hi, hiRefused, hiRequests = c, refused[i], requests[i]
				break
			}
			newLo, loRefused = c, refused[i]
		}
		lo = newLo
	}
	r.Capacity, r.RefusedPermits, r.RefusedRequests = hi, hiRefused, hiRequests
	if lo > 0 {
		if loRefused > limit { // counted only until it passed the target: count it all
			refused, _, err := read.refusals(ctx, p.Rate, []int64{lo}, -1)
			if err != nil {
				return r, err
			}
			loRefused = refused[0]
		}
		r.BelowPermits = loRefused
	}
	r.Spec = limiters.TokenBucketSpec{Capacity: int(hi), Rate: p.Rate}.String()
	return r, nil
}

// Refusals replays src through token buckets of the given rate and capacities in the token
// bucket's arithmetic and returns the permits and requests each refuses.
func Refusals(ctx context.Context, src Source, rate limiters.Rate, capacities []int64) (permits, requests []int64, err error) {
	b := newBuckets(rate, capacities)
	err = each(ctx, src, func(row *trace.Row) error {
		b.add(int64(row.At), int64(row.Permits))
		return nil
	})
	return b.refused, b.requests, err
}
