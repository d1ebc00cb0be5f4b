package limiters

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// KindVegas is Netflix's VegasLimit in specs.
const KindVegas Kind = "vegas"

// VegasSpec configures Netflix concurrency-limits' VegasLimit: "vegas:initial=20,max=1000".
//
// The rule (VegasLimit._update), on each sample (rtt, inflight, didDrop), with L the estimate
// (a float; the limit is ⌊L⌋) and log(L) = max(1, ⌊log10 ⌊L⌋⌋):
//
//	probe: every probeCount ≥ jitter·probe·L samples (jitter uniform in [0.5, 1), drawn again
//	       at each probe), rtt_noload = rtt and nothing else
//	a sample below rtt_noload (or the first) becomes rtt_noload, nothing else
//	queue = ⌈L·(1 − rtt_noload/rtt)⌉
//	didDrop:                 L' = L − log(L)
//	inflight·2 < L:          unchanged (the caller does not use the limit)
//	queue ≤ log(L):          L' = L + 6·log(L)     (β: no queue, grow fast)
//	queue < 3·log(L):        L' = L + log(L)       (α)
//	queue > 6·log(L):        L' = L − log(L)
//	otherwise:               unchanged
//	L = (1 − smoothing)·L + smoothing·min(max, max(1, L'))
//
// Alpha and beta: the class Javadoc says alpha = max(3, 10% of the limit) and beta =
// max(6, 20%); the code (Builder's alphaFunc, betaFunc) is 3·log10 and 6·log10 of the limit,
// which this follows: at L = 20, log = 1, α = 3, β = 6; at L = 150, log = 2, α = 6, β = 12.
//
// Worked, from the defaults (L = 20, smoothing 1): a first sample of 10ms sets rtt_noload =
// 10ms. Then 20ms with 20 in flight: queue = ⌈20·(1 − 10/20)⌉ = 10 > β = 6, L = 19. Then 11ms
// with 19 in flight: queue = ⌈19·(1 − 10/11)⌉ = 2, between 1 and 3: L = 20. Then 10ms:
// queue = 0 ≤ 1: L = 26. The probe (every 300 to 600 samples at L = 20) re-reads rtt_noload
// from whatever the next sample is — under load, a high one, after which Vegas sees no queue
// and grows; a spike that raised rtt_noload can leave it high until the next probe.
// A sample with rtt ≤ 0, which Netflix's code refuses with an exception, is ignored.
type VegasSpec struct {
	Initial, Max int
	Smoothing    float64 // in (0, 1]
	Probe        int     // probe multiplier (Netflix's probeMultiplier)
	Seed         int
	Window       time.Duration
	WindowSize   int
}

var vegasKind = KindInfo{
	Kind: KindVegas, Family: FamilyNetflix, Shape: ShapeAdaptive,
	Summary:      "Netflix Vegas: grow while the queue estimate L·(1−rtt_noload/rtt) is small, shrink when large",
	Example:      "vegas:initial=20,max=1000",
	Checks:       CheckSpecs{Sizes: "vegas:initial=5,max=5", Allocs: []string{"vegas:initial=5,max=1000"}},
	Fields:       FieldInfos[VegasSpec](),
	Ranges:       vegasRanges,
	Capabilities: []Capability{CapRelease, CapFeedback},
	Parse:        SpecParser(VegasSpec{Initial: 20, Max: 1000, Smoothing: 1, Probe: 30, Seed: 1, WindowSize: 10}),
	Explain:      explainAdaptive,
}

func (s *VegasSpec) Fields() []Field {
	return append([]Field{
		IntField("initial", false, "the limit at start (default 20)", &s.Initial),
		IntField("max", false, "the most the limit grows to (default 1000)", &s.Max),
		floatField("smoothing", "weight of the new estimate, in (0, 1] (default 1)", &s.Smoothing, 1),
		optionalInt("probe", "probe rtt_noload every jitter·probe·limit samples (default 30)", &s.Probe, 30),
		seedField(&s.Seed),
	}, windowFields(&s.Window, &s.WindowSize)...)
}

// Kind is KindVegas.
func (s VegasSpec) Kind() Kind { return KindVegas }

// String is "vegas:initial=20,max=1000" and any field not at its default.
func (s VegasSpec) String() string { return FormatSpec(KindVegas, s.Fields()) }

// Validate refuses limits out of order, a smoothing outside (0, 1] and a bad window.
func (s VegasSpec) Validate() error {
	if err := validateLimits(KindVegas, s.Initial, 1, s.Max); err != nil {
		return err
	}
	if !(s.Smoothing > 0 && s.Smoothing <= 1) {
		return NewConfigError(KindVegas, "smoothing", fmt.Sprint(s.Smoothing), "must be in (0, 1]")
	}
	return validateWindow(KindVegas, s.Window, s.WindowSize)
}

// vegasRanges are what VegasSpec.Validate accepts, field by field:
// docs/LIMITS.md's rows for vegas, with specs at and just past each edge that the registry
// test holds to Validate.
var vegasRanges = []FieldRange{
	{Field: "initial", Accepted: "between 1 and max (default 20)",
		Why:     "the limit is a count of permits held, in 32 bits, and starts inside [min, max]",
		Valid:   []string{"vegas:initial=1,max=1", "vegas:initial=1000,max=1000"},
		Invalid: []string{"vegas:initial=1001,max=1000", "vegas:initial=0"}},
	{Field: "max", Accepted: "1 to 2147483647 (default 1000)",
		Why:     "the limit is a count of permits held, in 32 bits, and starts inside [min, max]",
		Valid:   []string{"vegas:initial=1,max=1", "vegas:initial=20,max=2147483647"},
		Invalid: []string{"vegas:initial=20,max=2147483648", "vegas:initial=20,max=0"}},
	{Field: "smoothing", Accepted: "a number in (0, 1] (default 1)",
		Why:     "the weight of the new estimate in a convex combination: past 1 the limit would overshoot",
		Valid:   []string{"vegas:smoothing=1", "vegas:smoothing=0.01"},
		Invalid: []string{"vegas:smoothing=0", "vegas:smoothing=1.5"}},
	{Field: "probe", Accepted: "1 to 2^63−1 samples (an int) (default 30)",
		Why:     "a count of samples",
		Valid:   []string{"vegas:probe=1", "vegas:probe=1000"},
		Invalid: []string{"vegas:probe=0"}},
	{Field: "seed", Accepted: "1 to 2^63−1 (default 1)",
		Why:     "the probe jitter's PCG seed: a run's probes fall on the same samples every time",
		Valid:   []string{"vegas:seed=1", "vegas:seed=99"},
		Invalid: []string{"vegas:seed=0"}},
	{Field: "window", Accepted: "positive durations of at least 100ms, or omitted (every sample updates the limit)",
		Why:     "Netflix's WindowedLimit refuses windows under 100ms",
		Valid:   []string{"vegas:window=100ms"},
		Invalid: []string{"vegas:window=10ms"}},
	{Field: "window_size", Accepted: "at least 10 (default 10); read only with window",
		Why:     "Netflix's WindowedLimit refuses fewer than 10 samples a window",
		Valid:   []string{"vegas:window=1s,window_size=10"},
		Invalid: []string{"vegas:window=1s,window_size=2"}},
}

// New builds the limiter; the clock is not used.
func (s VegasSpec) New(Clock) (Limiter, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	r := &vegasRule{spec: s, est: float64(s.Initial), rng: newJitter(s.Seed)}
	r.resetJitter()
	return newAdaptive(s, r, s.Initial, s.Max, s.Window, s.WindowSize), nil
}

// AdmissionBound is false: no time axis.
func (s VegasSpec) AdmissionBound(time.Duration) (int64, bool) { return 0, false }

// NaturalWindow is 0: no time axis.
func (s VegasSpec) NaturalWindow() time.Duration { return 0 }

// NominalRate is false: no time axis.
func (s VegasSpec) NominalRate() (Rate, bool) { return Rate{}, false }

// InitialPermits is the initial limit.
func (s VegasSpec) InitialPermits() int { return s.Initial }

type vegasRule struct {
	spec       VegasSpec
	est        float64
	noload     time.Duration
	probeCount int
	jitter     float64
	rng        *rand.Rand
	nprobes    int
}

func (r *vegasRule) resetJitter() { r.jitter = 0.5 + 0.5*r.rng.Float64() }

func (r *vegasRule) update(rtt time.Duration, inflight int, drop bool) int {
	if rtt <= 0 {
		return int(r.est)
	}
	r.probeCount++
	if float64(float64(r.jitter*float64(r.spec.Probe))*r.est) <= float64(r.probeCount) {
		r.resetJitter()
		r.probeCount = 0
		r.noload = rtt
		r.nprobes++
		return int(r.est)
	}
	if r.noload == 0 || rtt < r.noload {
		r.noload = rtt
		return int(r.est)
	}
	est := r.est
	queue := int(math.Ceil(float64(est * (1 - float64(r.noload)/float64(rtt)))))
	log := log10Root(int(est))
	var next float64
	switch {
	case drop:
		next = est - float64(log)
	case float64(inflight*2) < est:
		return int(est)
	case queue <= log:
		next = est + float64(6*log)
	case queue < 3*log:
		next = est + float64(log)
	case queue > 6*log:
		next = est - float64(log)
	default:
		return int(est)
	}
	next = math.Max(1, math.Min(float64(r.spec.Max), next))
	next = float64((1-r.spec.Smoothing)*est) + float64(r.spec.Smoothing*next)
	r.est = next
	return int(next)
}

func (r *vegasRule) noLoad() time.Duration { return r.noload }
func (r *vegasRule) probes() int           { return r.nprobes }
