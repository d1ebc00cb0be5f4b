package limiters

import (
	"fmt"
	"time"
)

// KindAIMD is Netflix's AIMDLimit in specs.
const KindAIMD Kind = "aimd"

// AIMDSpec configures Netflix concurrency-limits' AIMDLimit: "aimd:initial=20,min=20,max=200".
//
// The rule (AIMDLimit._update), on each sample (rtt, inflight, didDrop):
//
//	if didDrop or rtt > timeout:    limit = ⌊limit · backoff⌋
//	else if inflight·2 ≥ limit:     limit = limit + 1
//	limit = min(max, max(min, limit))
//
// With the defaults (initial 20, min 20, max 200, backoff 0.9, timeout 5s): 20 samples
// answered with 20 in flight raise it to 40; one failure then cuts it to ⌊40·0.9⌋ = 36; a
// sample with 10 in flight (10·2 < 36: the caller does not use the limit) leaves it at 36;
// a 6s answer counts as a drop: 32. It never goes below 20, so at the defaults it sheds
// nothing until 20 are in flight. Loss-based only: a server that slows without failing
// raises it until the 5s timeout.
type AIMDSpec struct {
	Initial, Min, Max int
	Backoff           float64       // in [0.5, 1)
	Timeout           time.Duration // an answer slower than this counts as a drop
	Window            time.Duration // the windowed wrapper (adaptive): 0 for none
	WindowSize        int
}

var aimdKind = KindInfo{
	Kind: KindAIMD, Family: FamilyNetflix, Shape: ShapeAdaptive,
	Summary:      "Netflix AIMD: +1 per sample using half the limit, ×0.9 on a drop or timeout",
	Example:      "aimd:initial=20,min=20,max=200",
	Checks:       CheckSpecs{Sizes: "aimd:initial=5,min=1,max=5", Allocs: []string{"aimd:initial=5,min=1,max=200"}},
	Fields:       FieldInfos[AIMDSpec](),
	Ranges:       aimdRanges,
	Capabilities: []Capability{CapRelease, CapFeedback},
	Parse:        SpecParser(AIMDSpec{Initial: 20, Min: 20, Max: 200, Backoff: 0.9, Timeout: 5 * time.Second, WindowSize: 10}),
	Explain:      explainAdaptive,
}

func (s *AIMDSpec) Fields() []Field {
	return append([]Field{
		IntField("initial", false, "the limit at start (default 20)", &s.Initial),
		IntField("min", false, "the least the limit falls to (default 20)", &s.Min),
		IntField("max", false, "the most the limit grows to (default 200)", &s.Max),
		floatField("backoff", "factor applied on a drop, in [0.5, 1) (default 0.9)", &s.Backoff, 0.9),
		optionalDuration("timeout", "an answer slower than this counts as a drop (default 5s)", &s.Timeout, 5*time.Second),
	}, windowFields(&s.Window, &s.WindowSize)...)
}

// Kind is KindAIMD.
func (s AIMDSpec) Kind() Kind { return KindAIMD }

// String is "aimd:initial=20,min=20,max=200" and any field not at its default.
func (s AIMDSpec) String() string { return FormatSpec(KindAIMD, s.Fields()) }

// Validate refuses limits out of order, a backoff outside [0.5, 1) (as Netflix's builder), a
// non-positive timeout and a bad window.
func (s AIMDSpec) Validate() error {
	if err := validateLimits(KindAIMD, s.Initial, s.Min, s.Max); err != nil {
		return err
	}
	if !(s.Backoff >= 0.5 && s.Backoff < 1) {
		return NewConfigError(KindAIMD, "backoff", fmt.Sprint(s.Backoff), "must be in [0.5, 1)")
	}
	if s.Timeout <= 0 {
		return NewConfigError(KindAIMD, "timeout", FormatDuration(s.Timeout), "must be positive")
	}
	return validateWindow(KindAIMD, s.Window, s.WindowSize)
}

// aimdRanges are what AIMDSpec.Validate accepts, field by field:
// docs/LIMITS.md's rows for aimd, with specs at and just past each edge that the registry
// test holds to Validate.
var aimdRanges = []FieldRange{
	{Field: "initial", Accepted: "between min and max (default 20)",
		Why:     "the limit is a count of permits held, in 32 bits, and starts inside [min, max]",
		Valid:   []string{"aimd:initial=1,min=1,max=1", "aimd:initial=200,min=20,max=200"},
		Invalid: []string{"aimd:initial=201,min=20,max=200", "aimd:initial=19,min=20,max=200"}},
	{Field: "min", Accepted: "1 to max (default 20)",
		Why:     "the limit is a count of permits held, in 32 bits, and starts inside [min, max]",
		Valid:   []string{"aimd:initial=1,min=1,max=200", "aimd:initial=200,min=200,max=200"},
		Invalid: []string{"aimd:initial=20,min=0,max=200", "aimd:initial=20,min=201,max=200"}},
	{Field: "max", Accepted: "1 to 2147483647 (default 200)",
		Why:     "the limit is a count of permits held, in 32 bits, and starts inside [min, max]",
		Valid:   []string{"aimd:initial=1,min=1,max=1", "aimd:initial=20,min=20,max=2147483647"},
		Invalid: []string{"aimd:initial=20,min=20,max=2147483648"}},
	{Field: "backoff", Accepted: "a number in [0.5, 1) (default 0.9)",
		Why:     "Netflix's AIMDLimit.Builder refuses others",
		Valid:   []string{"aimd:backoff=0.5", "aimd:backoff=0.99"},
		Invalid: []string{"aimd:backoff=1", "aimd:backoff=0.49"}},
	{Field: "timeout", Accepted: "a positive duration (default 5s)",
		Why:     "an answer slower than this counts as a drop",
		Valid:   []string{"aimd:timeout=1ns", "aimd:timeout=1h"},
		Invalid: []string{"aimd:timeout=0s", "aimd:timeout=-1s"}},
	{Field: "window", Accepted: "positive durations of at least 100ms, or omitted (every sample updates the limit)",
		Why:     "Netflix's WindowedLimit refuses windows under 100ms",
		Valid:   []string{"aimd:window=100ms", "aimd:window=1m"},
		Invalid: []string{"aimd:window=99ms"}},
	{Field: "window_size", Accepted: "at least 10 (default 10); read only with window",
		Why:     "Netflix's WindowedLimit refuses fewer than 10 samples a window",
		Valid:   []string{"aimd:window=1s,window_size=10", "aimd:window=1s,window_size=1000"},
		Invalid: []string{"aimd:window=1s,window_size=9"}},
}

// New builds the limiter; the clock is not used (feedback carries its time).
func (s AIMDSpec) New(Clock) (Limiter, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return newAdaptive(s, &aimdRule{spec: s, limit: s.Initial}, s.Initial, s.Max, s.Window, s.WindowSize), nil
}

// AdmissionBound is false: no time axis.
func (s AIMDSpec) AdmissionBound(time.Duration) (int64, bool) { return 0, false }

// NaturalWindow is 0: no time axis.
func (s AIMDSpec) NaturalWindow() time.Duration { return 0 }

// NominalRate is false: no time axis.
func (s AIMDSpec) NominalRate() (Rate, bool) { return Rate{}, false }

// InitialPermits is the initial limit.
func (s AIMDSpec) InitialPermits() int { return s.Initial }

type aimdRule struct {
	spec  AIMDSpec
	limit int
}

func (r *aimdRule) update(rtt time.Duration, inflight int, drop bool) int {
	limit := r.limit
	if drop || rtt > r.spec.Timeout {
		limit = int(float64(float64(limit) * r.spec.Backoff))
	} else if inflight*2 >= limit {
		limit++
	}
	r.limit = min(r.spec.Max, max(r.spec.Min, limit))
	return r.limit
}

func (r *aimdRule) noLoad() time.Duration { return 0 }
func (r *aimdRule) probes() int           { return 0 }
