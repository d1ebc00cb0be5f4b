package limiters

import (
	"fmt"
	"math"
	"time"
)

// KindGradient2 is Netflix's Gradient2Limit in specs.
const KindGradient2 Kind = "gradient2"

// Gradient2Spec configures Netflix concurrency-limits' Gradient2Limit:
// "gradient2:initial=20,min=20,max=200".
//
// The rule (Gradient2Limit._update), on each sample (rtt, inflight; didDrop is not read),
// with L the estimate (the limit is ⌊L⌋):
//
//	long = the exponential average of rtt: the plain mean of the first 10 samples, then
//	       long·(1 − f) + rtt·f with f = 2/(longWindow + 1) = 2/601
//	if long/rtt > 2: long = long·0.95 (recover faster after a long overload)
//	inflight < L/2:  unchanged (long is still updated)
//	gradient = max(0.5, min(1, tolerance·long/rtt))   (long as before the 0.95)
//	L = (1 − smoothing)·L + smoothing·(L·gradient + queue)
//	L = max(min, min(max, L))
//
// Worked, from the defaults (L = 20, queue 4, tolerance 1.5, smoothing 0.2): ten samples of
// 10ms with 20 in flight: long = 10ms, gradient 1, each adds 0.2·4 = 0.8: L = 28 after ten.
// Then 30ms with 28 in flight, the first sample past the warm-up: long = 10ms·599/601 +
// 30ms·2/601 = 10.067ms, gradient = max(0.5, 1.5·10.067/30) = 0.503, L = 0.8·28 +
// 0.2·(28·0.503 + 4) = 26.02 (the limit 26). Drops are not a signal:
// a server that fails fast without slowing is not shed. No probe: the long-term average is
// the reference, which drifts up under a sustained slowdown — the limit then recovers.
type Gradient2Spec struct {
	Initial, Min, Max int
	Smoothing         float64
	Tolerance         float64
	Queue             int // queue size (Netflix's queueSize, a constant 4)
	LongWindow        int // samples of the long-term average (Netflix's longWindow)
	Window            time.Duration
	WindowSize        int
}

var gradient2Kind = KindInfo{
	Kind: KindGradient2, Family: FamilyNetflix, Shape: ShapeAdaptive,
	Summary:      "Netflix Gradient2: L·min(1, 1.5·avgRTT_long/rtt) + 4, smoothed 0.2; no probe",
	Example:      "gradient2:initial=20,min=20,max=200",
	Checks:       CheckSpecs{Sizes: "gradient2:initial=5,min=1,max=5", Allocs: []string{"gradient2:initial=5,min=1,max=200"}},
	Fields:       FieldInfos[Gradient2Spec](),
	Ranges:       gradient2Ranges,
	Capabilities: []Capability{CapRelease, CapFeedback},
	Parse: SpecParser(Gradient2Spec{Initial: 20, Min: 20, Max: 200, Smoothing: 0.2, Tolerance: 1.5, Queue: 4,
		LongWindow: 600, WindowSize: 10}),
	Explain: explainAdaptive,
}

func (s *Gradient2Spec) Fields() []Field {
	return append([]Field{
		IntField("initial", false, "the limit at start (default 20)", &s.Initial),
		IntField("min", false, "the least the limit falls to (default 20)", &s.Min),
		IntField("max", false, "the most the limit grows to (default 200)", &s.Max),
		floatField("smoothing", "weight of the new estimate, in (0, 1] (default 0.2)", &s.Smoothing, 0.2),
		floatField("tolerance", "RTT over the long-term average tolerated, ≥ 1 (default 1.5)", &s.Tolerance, 1.5),
		optionalInt("queue", "growth allowed per update while latency holds (default 4)", &s.Queue, 4),
		optionalInt("long_window", "samples of the long-term RTT average (default 600)", &s.LongWindow, 600),
	}, windowFields(&s.Window, &s.WindowSize)...)
}

// Kind is KindGradient2.
func (s Gradient2Spec) Kind() Kind { return KindGradient2 }

// String is "gradient2:initial=20,min=20,max=200" and any field not at its default.
func (s Gradient2Spec) String() string { return FormatSpec(KindGradient2, s.Fields()) }

// Validate refuses limits out of order, a tolerance below 1 and a smoothing outside (0, 1].
func (s Gradient2Spec) Validate() error {
	if err := validateLimits(KindGradient2, s.Initial, s.Min, s.Max); err != nil {
		return err
	}
	if !(s.Smoothing > 0 && s.Smoothing <= 1) {
		return NewConfigError(KindGradient2, "smoothing", fmt.Sprint(s.Smoothing), "must be in (0, 1]")
	}
	if !(s.Tolerance >= 1 && s.Tolerance < 1e9) {
		return NewConfigError(KindGradient2, "tolerance", fmt.Sprint(s.Tolerance), "must be at least 1")
	}
	return validateWindow(KindGradient2, s.Window, s.WindowSize)
}

// gradient2Ranges are what Gradient2Spec.Validate accepts, field by field:
// docs/LIMITS.md's rows for gradient2, with specs at and just past each edge that the registry
// test holds to Validate.
var gradient2Ranges = []FieldRange{
	{Field: "initial", Accepted: "between min and max (default 20)",
		Why:     "the limit is a count of permits held, in 32 bits, and starts inside [min, max]",
		Valid:   []string{"gradient2:initial=1,min=1,max=1", "gradient2:initial=200,min=20,max=200"},
		Invalid: []string{"gradient2:initial=19,min=20,max=200"}},
	{Field: "min", Accepted: "1 to max (default 20)",
		Why:     "the limit is a count of permits held, in 32 bits, and starts inside [min, max]",
		Valid:   []string{"gradient2:initial=20,min=1,max=200", "gradient2:initial=200,min=200,max=200"},
		Invalid: []string{"gradient2:initial=20,min=0,max=200", "gradient2:min=30,max=20"}},
	{Field: "max", Accepted: "1 to 2147483647 (default 200)",
		Why:     "the limit is a count of permits held, in 32 bits, and starts inside [min, max]",
		Valid:   []string{"gradient2:initial=1,min=1,max=1", "gradient2:initial=20,min=20,max=2147483647"},
		Invalid: []string{"gradient2:initial=20,min=20,max=2147483648"}},
	{Field: "smoothing", Accepted: "a number in (0, 1] (default 0.2)",
		Why:     "the weight of the new estimate in a convex combination: past 1 the limit would overshoot",
		Valid:   []string{"gradient2:smoothing=1"},
		Invalid: []string{"gradient2:smoothing=2"}},
	{Field: "tolerance", Accepted: "a number, at least 1 (default 1.5)",
		Why:     "Netflix's builders refuse a tolerance below 1 (it would shrink on latencies at the minimum)",
		Valid:   []string{"gradient2:tolerance=1"},
		Invalid: []string{"gradient2:tolerance=0.5"}},
	{Field: "queue", Accepted: "1 to 2^63−1 (default 4)",
		Why:     "the growth allowed per update, in permits",
		Valid:   []string{"gradient2:queue=1"},
		Invalid: []string{"gradient2:queue=0"}},
	{Field: "long_window", Accepted: "1 to 2^63−1 samples (default 600)",
		Why:     "the exponential average's weight is 2/(long_window+1)",
		Valid:   []string{"gradient2:long_window=1"},
		Invalid: []string{"gradient2:long_window=0"}},
	{Field: "window", Accepted: "positive durations of at least 100ms, or omitted (every sample updates the limit)",
		Why:     "Netflix's WindowedLimit refuses windows under 100ms",
		Valid:   []string{"gradient2:window=100ms"},
		Invalid: []string{"gradient2:window=99ms"}},
	{Field: "window_size", Accepted: "at least 10 (default 10); read only with window",
		Why:     "Netflix's WindowedLimit refuses fewer than 10 samples a window",
		Valid:   []string{"gradient2:window=1s,window_size=10"},
		Invalid: []string{"gradient2:window=1s,window_size=9"}},
}

// New builds the limiter; the clock is not used.
func (s Gradient2Spec) New(Clock) (Limiter, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	r := &gradient2Rule{spec: s, est: float64(s.Initial)}
	return newAdaptive(s, r, s.Initial, s.Max, s.Window, s.WindowSize), nil
}

// AdmissionBound is false: no time axis.
func (s Gradient2Spec) AdmissionBound(time.Duration) (int64, bool) { return 0, false }

// NaturalWindow is 0: no time axis.
func (s Gradient2Spec) NaturalWindow() time.Duration { return 0 }

// NominalRate is false: no time axis.
func (s Gradient2Spec) NominalRate() (Rate, bool) { return Rate{}, false }

// InitialPermits is the initial limit.
func (s Gradient2Spec) InitialPermits() int { return s.Initial }

// gradient2Rule holds the estimate and ExpAvgMeasurement(longWindow, 10).
type gradient2Rule struct {
	spec      Gradient2Spec
	est       float64
	long, sum float64
	count     int
}

func (r *gradient2Rule) addLong(x float64) float64 {
	const warmup = 10
	if r.count < warmup {
		r.count++
		r.sum += x
		r.long = r.sum / float64(r.count)
	} else {
		f := 2.0 / float64(r.spec.LongWindow+1)
		r.long = float64(r.long*(1-f)) + float64(x*f)
	}
	return r.long
}

func (r *gradient2Rule) update(rtt time.Duration, inflight int, _ bool) int {
	s := &r.spec
	est := r.est
	queue := float64(s.Queue)
	short := float64(rtt)
	long := r.addLong(short)
	if long/short > 2 {
		r.long = float64(r.long * 0.95)
	}
	if float64(inflight) < est/2 {
		return int(est)
	}
	gradient := math.Max(0.5, math.Min(1, float64(s.Tolerance*long)/short))
	next := float64(est*gradient) + queue
	next = float64(est*(1-s.Smoothing)) + float64(next*s.Smoothing)
	next = math.Max(float64(s.Min), math.Min(float64(s.Max), next))
	r.est = next
	return int(next)
}

func (r *gradient2Rule) noLoad() time.Duration { return time.Duration(r.long) }
func (r *gradient2Rule) probes() int           { return 0 }
