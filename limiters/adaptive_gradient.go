package limiters

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// KindGradient is Netflix's GradientLimit in specs.
const KindGradient Kind = "gradient"

// GradientSpec configures Netflix concurrency-limits' GradientLimit:
// "gradient:initial=50,min=1,max=1000".
//
// The rule (GradientLimit._update), on each sample (rtt, inflight, didDrop), with L the
// estimate (the limit is ⌊L⌋) and queue = max(4, ⌊√⌊L⌋⌋) (SquareRootFunction.create(4): its
// Javadoc says 4 + √L, its code takes the larger of the two, as here):
//
//	probe: every probe + U{0, …, probe−1} samples, L = max(min, queue) and the minimum RTT is
//	       forgotten; nothing else
//	rtt_noload = the least RTT since the last probe (this sample included)
//	gradient = max(0.5, min(1, tolerance·rtt_noload/rtt))
//	didDrop:              L' = L·backoff
//	inflight < L/2:       unchanged
//	otherwise:            L' = L·gradient + queue
//	if L' < L:            L' = max(min, (1 − smoothing)·L + smoothing·L')
//	L = max(queue, min(max, L'))
//
// Worked, from the defaults (L = 50, tolerance 2, smoothing 0.2): a sample of 10ms with 50 in
// flight: rtt_noload 10ms, gradient = min(1, 2·10/10) = 1, queue = 7, L = 57. 30ms with 57 in
// flight: gradient = max(0.5, 2·10/30) = 0.667, L' = 57·0.667 + 7 = 45, smoothed down:
// 0.8·57 + 0.2·45 = 54.6. So the limit grows by √L per sample while latency stays within
// twice the minimum, and sheds at most 10% a sample (0.2 of halving) when it does not. The
// probe (every 1000 to 1999 samples) drops the limit to the queue size, max(min, 4 or √L) —
// 7 at L = 50 — and the refusals that follow are its cost.
type GradientSpec struct {
	Initial, Min, Max int
	Smoothing         float64
	Tolerance         float64
	Backoff           float64
	Probe             int // probe interval in samples (Netflix's probeInterval)
	Seed              int
	Window            time.Duration
	WindowSize        int
}

var gradientKind = KindInfo{
	Kind: KindGradient, Family: FamilyNetflix, Shape: ShapeAdaptive,
	Summary:      "Netflix Gradient: L·min(1, 2·minRTT/rtt) + √L, probing minRTT every 1000-2000 samples",
	Example:      "gradient:initial=50,min=1,max=1000",
	Checks:       CheckSpecs{Sizes: "gradient:initial=5,min=1,max=5", Allocs: []string{"gradient:initial=5,min=1,max=1000"}},
	Fields:       FieldInfos[GradientSpec](),
	Ranges:       gradientRanges,
	Capabilities: []Capability{CapRelease, CapFeedback},
	Parse: SpecParser(GradientSpec{Initial: 50, Min: 1, Max: 1000, Smoothing: 0.2, Tolerance: 2, Backoff: 0.9,
		Probe: 1000, Seed: 1, WindowSize: 10}),
	Explain: explainAdaptive,
}

func (s *GradientSpec) Fields() []Field {
	return append([]Field{
		IntField("initial", false, "the limit at start (default 50)", &s.Initial),
		IntField("min", false, "the least the limit falls to (default 1)", &s.Min),
		IntField("max", false, "the most the limit grows to (default 1000)", &s.Max),
		floatField("smoothing", "weight of a lower estimate, in (0, 1] (default 0.2)", &s.Smoothing, 0.2),
		floatField("tolerance", "RTT over the minimum tolerated before shrinking, ≥ 1 (default 2)", &s.Tolerance, 2),
		floatField("backoff", "factor applied on a drop, in [0.5, 1] (default 0.9)", &s.Backoff, 0.9),
		optionalInt("probe", "probe the minimum RTT every probe to 2·probe−1 samples (default 1000)", &s.Probe, 1000),
		seedField(&s.Seed),
	}, windowFields(&s.Window, &s.WindowSize)...)
}

// Kind is KindGradient.
func (s GradientSpec) Kind() Kind { return KindGradient }

// String is "gradient:initial=50,min=1,max=1000" and any field not at its default.
func (s GradientSpec) String() string { return FormatSpec(KindGradient, s.Fields()) }

// Validate refuses limits out of order, max below 4 (the queue size floor would set the
// limit above it), and the builder's ranges: tolerance ≥ 1, backoff in [0.5, 1], smoothing
// in (0, 1].
func (s GradientSpec) Validate() error {
	if err := validateLimits(KindGradient, s.Initial, s.Min, s.Max); err != nil {
		return err
	}
	if s.Max < 4 {
		return NewConfigError(KindGradient, "max", fmt.Sprint(s.Max), "must be at least 4: the limit never falls below the queue size, at least 4")
	}
	if !(s.Smoothing > 0 && s.Smoothing <= 1) {
		return NewConfigError(KindGradient, "smoothing", fmt.Sprint(s.Smoothing), "must be in (0, 1]")
	}
	if !(s.Tolerance >= 1 && s.Tolerance < 1e9) {
		return NewConfigError(KindGradient, "tolerance", fmt.Sprint(s.Tolerance), "must be at least 1")
	}
	if !(s.Backoff >= 0.5 && s.Backoff <= 1) {
		return NewConfigError(KindGradient, "backoff", fmt.Sprint(s.Backoff), "must be in [0.5, 1]")
	}
	return validateWindow(KindGradient, s.Window, s.WindowSize)
}

// gradientRanges are what GradientSpec.Validate accepts, field by field:
// docs/LIMITS.md's rows for gradient, with specs at and just past each edge that the registry
// test holds to Validate.
var gradientRanges = []FieldRange{
	{Field: "initial", Accepted: "between min and max (default 50)",
		Why:     "the limit is a count of permits held, in 32 bits, and starts inside [min, max]",
		Valid:   []string{"gradient:initial=1,min=1,max=4", "gradient:initial=1000,min=1,max=1000"},
		Invalid: []string{"gradient:initial=1001,min=1,max=1000"}},
	{Field: "min", Accepted: "1 to max (default 1)",
		Why:     "the limit is a count of permits held, in 32 bits, and starts inside [min, max]",
		Valid:   []string{"gradient:initial=50,min=1,max=1000", "gradient:initial=50,min=50,max=1000"},
		Invalid: []string{"gradient:initial=50,min=0,max=1000", "gradient:initial=50,min=51,max=1000"}},
	{Field: "max", Accepted: "4 to 2147483647 (default 1000)",
		Why:     "the limit never falls below the queue size, max(4, √limit): a max below 4 could not hold",
		Valid:   []string{"gradient:initial=4,min=1,max=4", "gradient:initial=50,min=1,max=2147483647"},
		Invalid: []string{"gradient:initial=3,min=1,max=3", "gradient:initial=50,min=1,max=2147483648"}},
	{Field: "smoothing", Accepted: "a number in (0, 1] (default 0.2)",
		Why:     "the weight of the new estimate in a convex combination: past 1 the limit would overshoot",
		Valid:   []string{"gradient:smoothing=1"},
		Invalid: []string{"gradient:smoothing=0"}},
	{Field: "tolerance", Accepted: "a number, at least 1 (default 2)",
		Why:     "Netflix's builders refuse a tolerance below 1 (it would shrink on latencies at the minimum)",
		Valid:   []string{"gradient:tolerance=1"},
		Invalid: []string{"gradient:tolerance=0.99"}},
	{Field: "backoff", Accepted: "a number in [0.5, 1] (default 0.9)",
		Why:     "Netflix's GradientLimit.Builder refuses others",
		Valid:   []string{"gradient:backoff=0.5", "gradient:backoff=1"},
		Invalid: []string{"gradient:backoff=0.4", "gradient:backoff=1.1"}},
	{Field: "probe", Accepted: "1 to 2^63−1 samples (an int) (default 1000)",
		Why:     "a count of samples",
		Valid:   []string{"gradient:probe=1"},
		Invalid: []string{"gradient:probe=0"}},
	{Field: "seed", Accepted: "1 to 2^63−1 (default 1)",
		Why:     "the probe jitter's PCG seed: a run's probes fall on the same samples every time",
		Valid:   []string{"gradient:seed=1"},
		Invalid: []string{"gradient:seed=0"}},
	{Field: "window", Accepted: "positive durations of at least 100ms, or omitted (every sample updates the limit)",
		Why:     "Netflix's WindowedLimit refuses windows under 100ms",
		Valid:   []string{"gradient:window=100ms"},
		Invalid: []string{"gradient:window=1ms"}},
	{Field: "window_size", Accepted: "at least 10 (default 10); read only with window",
		Why:     "Netflix's WindowedLimit refuses fewer than 10 samples a window",
		Valid:   []string{"gradient:window=1s,window_size=10"},
		Invalid: []string{"gradient:window=1s,window_size=1"}},
}

// New builds the limiter; the clock is not used.
func (s GradientSpec) New(Clock) (Limiter, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	r := &gradientRule{spec: s, est: float64(s.Initial), rng: newJitter(s.Seed)}
	r.countdown = r.nextCountdown()
	return newAdaptive(s, r, s.Initial, s.Max, s.Window, s.WindowSize), nil
}

// AdmissionBound is false: no time axis.
func (s GradientSpec) AdmissionBound(time.Duration) (int64, bool) { return 0, false }

// NaturalWindow is 0: no time axis.
func (s GradientSpec) NaturalWindow() time.Duration { return 0 }

// NominalRate is false: no time axis.
func (s GradientSpec) NominalRate() (Rate, bool) { return Rate{}, false }

// InitialPermits is the initial limit.
func (s GradientSpec) InitialPermits() int { return s.Initial }

type gradientRule struct {
	spec      GradientSpec
	est       float64
	minRTT    float64 // MinimumMeasurement: 0 when reset
	countdown int
	rng       *rand.Rand
	nprobes   int
}

func (r *gradientRule) nextCountdown() int { return r.spec.Probe + r.rng.IntN(r.spec.Probe) }

func (r *gradientRule) update(rtt time.Duration, inflight int, drop bool) int {
	s := &r.spec
	queue := float64(sqrtRoot(4, int(r.est)))
	old := r.countdown
	r.countdown--
	if old <= 0 {
		r.countdown = r.nextCountdown()
		r.est = math.Max(float64(s.Min), queue)
		r.minRTT = 0
		r.nprobes++
		return int(r.est)
	}
	if r.minRTT == 0 || float64(rtt) < r.minRTT {
		r.minRTT = float64(rtt)
	}
	gradient := math.Max(0.5, math.Min(1, float64(s.Tolerance*r.minRTT)/float64(rtt)))
	var next float64
	switch {
	case drop:
		next = float64(r.est * s.Backoff)
	case float64(inflight) < r.est/2:
		return int(r.est)
	default:
		next = float64(r.est*gradient) + queue
	}
	if next < r.est {
		next = math.Max(float64(s.Min), float64(r.est*(1-s.Smoothing))+float64(s.Smoothing*next))
	}
	r.est = math.Max(queue, math.Min(float64(s.Max), next))
	return int(r.est)
}

func (r *gradientRule) noLoad() time.Duration { return time.Duration(r.minRTT) }
func (r *gradientRule) probes() int           { return r.nprobes }
