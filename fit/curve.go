package fit

import (
	"context"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/trace"
)

// maxTolerance is the largest tolerance capacity·T a token bucket accepts: 2⁶² ns.
const maxTolerance = int64(1) << 62

// clientStep is one request of n permits at now for one client at one rate of interval t,
// the per-client curve's step row by row: backlog = max(TAT − now, 0), need = backlog + n·T,
// TAT = now + need, the client's largest need kept in *need. It reports false, leaving both
// alone, when the need would pass 2⁶² ns (no capacity holds it at this rate): at T = 1ms a
// request of 4.6·10¹² permits, or a backlog of 146 years. The caller marks the rate dropped.
func clientStep(tat, need *int64, now, n, t int64) bool {
	backlog := max(*tat-now, 0)
	if n > maxTolerance/t || backlog > maxTolerance-n*t {
		return false
	}
	nd := backlog + n*t
	*tat = now + nd
	*need = max(*need, nd)
	return true
}

// Point is σ at one rate: the smallest capacity of token-bucket:capacity=σ,rate=Rate that
// admits every request of the trace, and the burst that needs it.
type Point struct {
	Rate     limiters.Rate `json:"-"`
	RateText string        `json:"rate"`        // "120/1s"
	PerSec   float64       `json:"per_s"`       // the rate in permits per second (1e9/T: after rounding T up)
	Interval time.Duration `json:"interval_ns"` // T, rounded up to a whole ns
	// Capacity is σ(ρ) = ⌈need/T⌉; 0 when no token bucket at this rate admits the trace (its
	// tolerance would pass 2⁶² ns: the rate is far below the trace's).
	Capacity int64 `json:"capacity"`
	// Burst is σ*(ρ) = need/T = A[From, To] − (To − From)/T: the real-valued excess, of which
	// Capacity is the ceiling.
	Burst float64 `json:"burst"`
	// Need is the most tolerance a request needed: max(TAT − now, 0) + n·T at To, in ns.
	Need time.Duration `json:"need_ns"`
	// From and To bound the worst burst: the busy period (the bucket never full again) that
	// ends with the request needing Need; Permits is what it asked for, A[From, To].
	From    time.Duration `json:"from_ns"`
	To      time.Duration `json:"to_ns"`
	Permits int64         `json:"permits"`
}

// Fits is whether a token bucket at this rate admits the trace.
func (p Point) Fits() bool { return p.Capacity > 0 }

// Spec is token-bucket:capacity=σ,rate=ρ (ok false when none fits).
func (p Point) Spec() (limiters.TokenBucketSpec, bool) {
	return limiters.TokenBucketSpec{Capacity: int(p.Capacity), Rate: p.Rate}, p.Fits()
}

// curve runs the token bucket's schedule for many rates at once, with no capacity: nothing
// is refused, so each rate's TAT follows the trace alone and its largest need is σ·T. The
// state is a few words per rate, in parallel slices that the per-row loop walks in order.
type curve struct {
	rates    []limiters.Rate
	interval []int64 // T
	maxN     []int64 // the largest n with n·T ≤ 2⁶² (a larger request overflows every capacity)
	tat      []int64
	need     []int64 // the largest need so far; -1 once it passed 2⁶² ns
	start    []int64 // when the current busy period began
	startSum []int64 // permits before it
	from     []int64 // the worst busy period's start, its end, and the permits before it
	to       []int64
	fromSum  []int64
	toSum    []int64
	sum      int64 // permits so far
}

func newCurve(rates []limiters.Rate) *curve {
	k := len(rates)
	c := &curve{rates: rates, interval: make([]int64, k), maxN: make([]int64, k), tat: make([]int64, k),
		need: make([]int64, k), start: make([]int64, k), startSum: make([]int64, k),
		from: make([]int64, k), to: make([]int64, k), fromSum: make([]int64, k), toSum: make([]int64, k)}
	for i, r := range rates {
		c.interval[i] = int64(r.Interval())
		c.maxN[i] = maxTolerance / c.interval[i]
	}
	return c
}

// add is one request of n permits at now: for each rate, backlog = max(TAT − now, 0), need =
// backlog + n·T, TAT = now + need. Times are below 2⁶² and needs are kept at most 2⁶², so
// nothing overflows: a rate whose need passes 2⁶² is dropped (no capacity can hold it).
func (c *curve) add(now int64, n int64) {
	before := c.sum
	c.sum += n
	for k, t := range c.interval {
		if c.need[k] < 0 {
			continue
		}
		backlog := c.tat[k] - now
		if backlog <= 0 {
			backlog = 0
			c.start[k], c.startSum[k] = now, before // the bucket is full: a new busy period
		}
		if n > c.maxN[k] || backlog > maxTolerance-n*t {
			c.need[k] = -1
			continue
		}
		need := backlog + n*t
		c.tat[k] = now + need
		if need > c.need[k] {
			c.need[k] = need
			c.from[k], c.to[k], c.fromSum[k], c.toSum[k] = c.start[k], now, c.startSum[k], c.sum
		}
	}
}

// points is σ at each rate.
func (c *curve) points() []Point {
	out := make([]Point, len(c.rates))
	for k, r := range c.rates {
		t := c.interval[k]
		p := Point{Rate: r, RateText: r.String(), PerSec: 1e9 / float64(t), Interval: time.Duration(t)}
		if need := c.need[k]; need > 0 {
			capacity := (need-1)/t + 1
			if capacity <= maxTolerance/t { // TokenBucketSpec.Validate: capacity·T ≤ 2⁶²
				p.Capacity = capacity
			}
			p.Burst = float64(need) / float64(t)
			p.Need = time.Duration(need)
			p.From, p.To = time.Duration(c.from[k]), time.Duration(c.to[k])
			p.Permits = c.toSum[k] - c.fromSum[k]
		}
		out[k] = p
	}
	return out
}

// Curve is σ at each of rates (in their order), in one pass over src: for a caller that has
// its own rates, as a sweep over token-bucket rates does to draw σ(ρ) over its grid. Each
// rate must be one a token bucket accepts (limiters.TokenBucketSpec.Validate with capacity 1).
func Curve(ctx context.Context, src Source, rates []limiters.Rate) ([]Point, error) {
	for _, r := range rates {
		if err := (limiters.TokenBucketSpec{Capacity: 1, Rate: r}).Validate(); err != nil {
			return nil, err
		}
	}
	c := newCurve(rates)
	if err := each(ctx, src, func(row *trace.Row) error {
		c.add(int64(row.At), int64(row.Permits))
		return nil
	}); err != nil {
		return nil, err
	}
	return c.points(), nil
}
