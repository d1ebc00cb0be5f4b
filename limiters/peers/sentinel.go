package peers

import (
	"fmt"
	"github.com/ratelab/ratelab/limiters"
	"math"
	"math/big"
	"strconv"
	"sync"
	"time"

	"github.com/ratelab/ratelab/limiters/internal/bound"
)

// KindSentinel is Sentinel flow control's name in specs.
const KindSentinel limiters.Kind = "sentinel"

// FamilySentinel is Alibaba Sentinel's flow control (sentinel-golang, core/flow).
const FamilySentinel limiters.Family = "sentinel"

// SentinelStrategy is a flow rule's TokenCalculateStrategy: where the QPS threshold a
// request is checked against comes from.
type SentinelStrategy uint8

// The strategies, numbered as sentinel-golang numbers them.
const (
	// SentinelDirect (Direct): the rule's threshold, always.
	SentinelDirect SentinelStrategy = iota
	// SentinelWarmUp (WarmUp): a threshold that rises from threshold/cold_factor to the
	// threshold as traffic uses up the stored tokens.
	SentinelWarmUp
)

// SentinelBehavior is a flow rule's ControlBehavior: what happens to a request over the
// threshold.
type SentinelBehavior uint8

// The behaviours, numbered as sentinel-golang numbers them.
const (
	// SentinelReject (Reject): passes counted in the last second; over the threshold, blocked.
	SentinelReject SentinelBehavior = iota
	// SentinelThrottling (Throttling): requests paced one interval apart; a request whose turn
	// would come more than max_queue from now is blocked, the others wait for their turn.
	SentinelThrottling
)

// The model's clock and statistics, sentinel-golang's defaults.
const (
	sentinelBucketMs  = 500 // a leap-array bucket: 500ms
	sentinelBuckets   = 20  // the resource's leap array: 20 buckets, 10s
	sentinelSecondMs  = 1000
	sentinelMaxThresh = 1_000_000
	sentinelMaxWarmUp = 1_000_000 // seconds
	sentinelMaxCold   = 1000
	// sentinelMaxQueueWarm is the longest max_queue with strategy=warmup: a queued pass is
	// counted when it leaves the queue, and one counted more than 8.5s ahead would land in
	// a bucket of the 10s leap array that sentinel still reads.
	sentinelMaxQueueWarm = 8 * time.Second
)

// Sentinel is a model, decision for decision, of one flow rule of Alibaba Sentinel's Go
// library on one resource (sentinel-golang v1.0.4, core/flow and core/stat, with its default
// statistics: StatIntervalInMs 0, a 1s window of two 500ms buckets). Each combination of
// strategy and behaviour is sentinel's own (checked against the real library, driven on a
// mock clock, by the crosscheck module at the repository's root):
//
//	flow.Rule{Threshold: 100}                                     ⇔ sentinel:threshold=100
//	flow.Rule{Threshold: 100, TokenCalculateStrategy: flow.WarmUp,
//	          WarmUpPeriodSec: 10, WarmUpColdFactor: 3}           ⇔ sentinel:threshold=100,strategy=warmup,warmup=10s
//	flow.Rule{Threshold: 10, ControlBehavior: flow.Throttling,
//	          MaxQueueingTimeMs: 500}                             ⇔ sentinel:threshold=10,behavior=throttling,max_queue=500ms
//
// Statistics. Sentinel counts passes per resource in a leap array of 20 buckets of 500ms,
// aligned to the epoch's millisecond clock (a bucket starts at a multiple of 500ms); a bucket
// is reset when the first pass of a newer 500ms lands in its slot. A rule reads the sum of
// the current bucket and the one before — "the last second" is 500 to 1000ms long. Direct +
// reject blocks a request of n when passes + n > threshold, so threshold=100 admits 100 at
// 0.7s and then refuses until 1.5s (the buckets [0.5s, 1s) and [1s, 1.5s) hold them), but
// admits 100 at 0.499s and 100 more at 1s: 200 within 501ms.
//
// Warm-up. Stored tokens rise to maxToken while the resource is cold and are used up by
// passes; while more than warningToken remain the threshold is lowered. With threshold T,
// warm-up period P (whole seconds) and cold factor c (default 3):
//
//	warningToken = ⌊P·T/(c−1)⌋          100/s, 10s, 3: 500
//	maxToken     = warningToken + ⌊2·P·T/(c+1)⌋               1000
//	slope        = (c−1)/T/(maxToken − warningToken)          0.00004
//	QPS(tokens)  = 1/((tokens − warningToken)·slope + 1/T)    above warningToken, else T
//
// (QPS nudged up by one ulp). Tokens are synced at the first request of each whole second of
// the clock: tokens grow by T per elapsed second (to at most maxToken) if they are below
// warningToken, or above it while the previous QPS is under ⌊T⌋/c (integer division: 33 for
// 100/3); then the previous QPS is taken off. "The previous QPS" is the passes of the two
// buckets before the current one — the previous whole second only when the syncing request
// comes in the first half of the second. A process that has run since the epoch syncs its
// first request from a lastFilledTime of 0: tokens start at maxToken, cold. 100/s, 10s: 33
// pass in the first second (QPS 33.3); under saturating demand the seconds after admit 34,
// 36, 38, 41, 44, 47, 52, 58, 68, 83, and 100 from the 12th on, when fewer than 500 remain.
//
// Throttling. Requests of n are paced interval = ⌈n/QPS·10⁹⌉ ns apart (QPS: T, or the
// warm-up's), on sentinel's nanosecond clock: a request passes at once if the last pass was
// at least an interval ago, else it takes the next turn, last + interval, and waits until
// then — unless that is more than max_queue away, when it is blocked and takes nothing.
// 10/s with max_queue=500ms, ten at once: waits 0, 100, 200, 300, 400 and 500ms, four
// blocked. 3/s: the interval is 333,333,334ns, so with max_queue=1s the fourth of four at
// once would wait 1.000000002s and is blocked. max_queue=0 (the default) paces strictly.
// The waiting caller is the product's only call (sentinel's Entry sleeps), so the spec's
// CallerWait is max_queue (limiters.Waiting): the simulator holds a sentinel stage's
// requests as sentinel does. A queued warm-up pass is counted when its wait ends.
//
// Where it differs from ratelab's nearest kinds, and why it matters:
//
//	                    sentinel                              ratelab
//	direct + reject     two 500ms buckets of the epoch's      sliding-window:limit=100,window=1s,slots=2
//	                    ms clock: the same decisions for a    decides the same for whole thresholds and
//	                    whole threshold; a fractional one     clocks that never run back
//	                    (2.5) admits ⌊2.5⌋ per window
//	warm-up             steps once per whole second, from     warm-up: a ramp continuous in time, from
//	                    the previous second's passes: cold    the limiter's age, whatever the traffic
//	                    until traffic has used the tokens;
//	                    idle (or QPS < ⌊T⌋/c) cools it again
//	throttling          a GCRA with τ = max_queue, its        leaky-bucket with a caller's maximum wait:
//	                    interval ⌈n/QPS·1s⌉ rounded per       T = ⌈window/permits⌉ per permit; the caller
//	                    request; max_queue is the rule's      chooses the wait
//	starts              reject: empty; warm-up: cold (full    full
//	                    tokens); throttling: the first passes
//	time resolution     statistics: whole ms; throttling: ns  ns
//	late clock reading  a pass behind its bucket's start is   counted against the newest window
//	                    not counted (sentinel drops it)
//	contention          check and count are separate steps:   lock-free, never over the limit
//	                    racing callers can overshoot; the
//	                    model serialises them
//
// Offset says where the run starts on sentinel's clock (the epoch aligned to 10s, the leap
// array's span): offset=250ms starts a run 250ms into a bucket and a second.
//
// The model keeps sentinel's state under a mutex: the leap array's 20 buckets, the warm-up's
// tokens and last fill, the throttling's last pass. It allocates nothing. AcquireAt is a
// caller that cannot wait: a throttled request that would wait is Rejected and takes
// nothing. RefundAt and CancelAt undo the latest pass exactly at the instant it was made (a
// later stage of a stack refused it, as sentinel does not count a pass that a later slot
// blocks); the warm-up's sync, which sentinel does for refused requests too, stays.
//
// The zero value grants nothing: every request is Never; NewSentinel makes a working one.
type Sentinel struct {
	mu      sync.Mutex
	buckets [sentinelBuckets]sentinelBucket
	warm    sentinelWarm
	last    int64 // throttling: lastPassedTime, ns on the model's clock
	passed  bool  // throttling: some request has passed (sentinel's lastPassedTime 0 is long ago)
	undo    sentinelUndo

	params     sentinelParams
	maxQueue   int64 // ns
	offset     int64 // ns
	maxPermits int
	spec       SentinelSpec
	clock      limiters.Clock
	live       bool
}

// sentinelBucket is one bucket of the leap array: its 500ms index (ms/500) and its passes.
type sentinelBucket struct{ start, passes int64 }

// sentinelWarm is WarmUpTrafficShapingCalculator's state.
type sentinelWarm struct {
	stored int64 // storedTokens
	filled int64 // lastFilledTime, ms, a whole second
	synced bool  // false: lastFilledTime is sentinel's 0, the epoch
}

// sentinelUndo is the latest pass: what RefundAt and CancelAt undo at its instant.
type sentinelUndo struct {
	ok           bool
	at           time.Duration
	n            int
	bucket       int64 // the bucket the pass was counted in, −1 for none
	throttled    bool
	lastBefore   int64
	passedBefore bool
	lastAfter    int64
}

// sentinelParams are the rule's numbers as sentinel computes them.
type sentinelParams struct {
	threshold  float64
	warm       bool
	throttling bool
	warning    int64   // warningToken
	maxToken   int64   // maxToken
	slope      float64 // slope
	coldQps    float64 // float64(uint32(threshold)/coldFactor)
}

var (
	_ limiters.Limiter  = (*Sentinel)(nil)
	_ limiters.Clocked  = (*Sentinel)(nil)
	_ limiters.Reserver = (*Sentinel)(nil)
	_ limiters.Refunder = (*Sentinel)(nil)
	_ limiters.Waiting  = SentinelSpec{}
)

// SentinelSpec configures a Sentinel: "sentinel:threshold=100,strategy=warmup,warmup=10s".
type SentinelSpec struct {
	// Threshold is the rule's Threshold, requests per second: 1 to 10⁶, at most three
	// decimals (2.5 admits 2 per window).
	Threshold float64
	Strategy  SentinelStrategy
	Behavior  SentinelBehavior
	// WarmUp is WarmUpPeriodSec, whole seconds; required with strategy=warmup, and only then.
	WarmUp time.Duration
	// ColdFactor is WarmUpColdFactor (3 when a spec omits it), with strategy=warmup only.
	ColdFactor int
	// MaxQueue is MaxQueueingTimeMs, whole ms, with behavior=throttling only (0: none).
	MaxQueue time.Duration
	// Offset is where the run starts on sentinel's clock, from a 10s boundary of the epoch:
	// 0 (the default) to less than 10s.
	Offset time.Duration
}

// sentinelDefaultCold is config.DefaultWarmUpColdFactor.
const sentinelDefaultCold = 3

var sentinelKind = limiters.KindInfo{
	Kind: KindSentinel, Family: FamilySentinel, Shape: limiters.ShapeLevel,
	Summary:      "Sentinel flow control: passes in two 500ms buckets (reject), a cold start (warmup), or paced with a queue (throttling)",
	Example:      "sentinel:threshold=100",
	Checks:       limiters.CheckSpecs{Sizes: "sentinel:threshold=5", Allocs: []string{"sentinel:threshold=100", "sentinel:threshold=100,strategy=warmup,warmup=10s,behavior=throttling,max_queue=500ms"}},
	Fields:       limiters.FieldInfos[SentinelSpec](),
	Ranges:       sentinelRanges,
	Capabilities: []limiters.Capability{limiters.CapRetryAfter, limiters.CapReserve, limiters.CapRefund},
	Parse:        limiters.SpecParser(SentinelSpec{ColdFactor: sentinelDefaultCold}),
	Explain:      explainSentinel,
}

// String is "direct" or "warmup".
func (s SentinelStrategy) String() string {
	if s == SentinelWarmUp {
		return "warmup"
	}
	return "direct"
}

// String is "reject" or "throttling".
func (b SentinelBehavior) String() string {
	if b == SentinelThrottling {
		return "throttling"
	}
	return "reject"
}

func (s *SentinelSpec) Fields() []limiters.Field {
	threshold := limiters.Field{
		FieldInfo: limiters.FieldInfo{Name: "threshold", Required: true, Meaning: "the rule's QPS threshold, e.g. 100 or 2.5"},
		Set: func(text string) error {
			v, err := strconv.ParseFloat(text, 64)
			if err != nil {
				return fmt.Errorf("%q is not a number", text)
			}
			s.Threshold = v
			return nil
		},
		Get: func() string { return strconv.FormatFloat(s.Threshold, 'f', -1, 64) },
	}
	strategy := limiters.Field{
		FieldInfo: limiters.FieldInfo{Name: "strategy", Meaning: "direct (the threshold, the default) or warmup (a cold start)"},
		Set: func(text string) error {
			switch text {
			case "direct":
				s.Strategy = SentinelDirect
			case "warmup":
				s.Strategy = SentinelWarmUp
			default:
				return fmt.Errorf("expected direct or warmup")
			}
			return nil
		},
		Get:  func() string { return s.Strategy.String() },
		Omit: func() bool { return s.Strategy == SentinelDirect },
	}
	behavior := limiters.Field{
		FieldInfo: limiters.FieldInfo{Name: "behavior", Meaning: "reject (block over the threshold, the default) or throttling (pace, queue up to max_queue)"},
		Set: func(text string) error {
			switch text {
			case "reject":
				s.Behavior = SentinelReject
			case "throttling":
				s.Behavior = SentinelThrottling
			default:
				return fmt.Errorf("expected reject or throttling")
			}
			return nil
		},
		Get:  func() string { return s.Behavior.String() },
		Omit: func() bool { return s.Behavior == SentinelReject },
	}
	warmup := limiters.DurationField("warmup", false, "the warm-up period, whole seconds (strategy=warmup)", &s.WarmUp)
	warmup.Omit = func() bool { return s.WarmUp == 0 }
	cold := limiters.IntField("cold_factor", false, "the cold factor, at least 2 (strategy=warmup; default 3)", &s.ColdFactor)
	cold.Omit = func() bool { return s.ColdFactor == sentinelDefaultCold }
	maxQueue := nonNegativeDurationField("max_queue", "the longest a throttled request waits, whole ms (behavior=throttling; default 0)", &s.MaxQueue)
	offset := nonNegativeDurationField("offset", "where the run starts on sentinel's clock, from a 10s boundary (default 0)", &s.Offset)
	return []limiters.Field{threshold, strategy, behavior, warmup, cold, maxQueue, offset}
}

// nonNegativeDurationField is an optional duration that may be 0, omitted when it is.
func nonNegativeDurationField(name, meaning string, v *time.Duration) limiters.Field {
	return limiters.Field{
		FieldInfo: limiters.FieldInfo{Name: name, Meaning: meaning},
		Set: func(text string) error {
			d, err := time.ParseDuration(text)
			if err != nil {
				return fmt.Errorf("%q is not a duration (e.g. 500ms)", text)
			}
			if d < 0 {
				return fmt.Errorf("must not be negative")
			}
			*v = d
			return nil
		},
		Get:  func() string { return limiters.FormatDuration(*v) },
		Omit: func() bool { return *v == 0 },
	}
}

// Kind is KindSentinel.
func (s SentinelSpec) Kind() limiters.Kind { return KindSentinel }

// String is "sentinel:threshold=100" with the fields that differ from their defaults.
func (s SentinelSpec) String() string { return limiters.FormatSpec(KindSentinel, s.Fields()) }

func (s SentinelSpec) coldFactor() int {
	if s.ColdFactor == 0 {
		return sentinelDefaultCold
	}
	return s.ColdFactor
}

// Validate refuses a threshold outside 1 to 10⁶ or with more than three decimals, an unknown
// strategy or behaviour, a warm-up period that is missing with strategy=warmup, given
// without it, or not whole seconds from 1s to 10⁶s, a cold factor other than 3 without
// strategy=warmup or outside 2 to 1000, a warm-up whose warning and max tokens coincide
// (sentinel's slope would be infinite: its QPS NaN, and it would admit everything while
// cold), a max_queue given without behavior=throttling, not whole ms or beyond 2³²−1 ms
// (8s with strategy=warmup), and an offset outside [0, 10s).
func (s SentinelSpec) Validate() error {
	thr := s.Threshold
	if !(thr >= 1 && thr <= sentinelMaxThresh) || math.Round(thr*1000)/1000 != thr {
		return limiters.NewConfigError(KindSentinel, "threshold", strconv.FormatFloat(thr, 'g', -1, 64),
			"must be 1 to 1000000 with at most three decimals (below 1 sentinel passes nothing: one request is more than the threshold)")
	}
	if s.Strategy > SentinelWarmUp {
		return limiters.NewConfigError(KindSentinel, "strategy", strconv.Itoa(int(s.Strategy)), "must be direct or warmup")
	}
	if s.Behavior > SentinelThrottling {
		return limiters.NewConfigError(KindSentinel, "behavior", strconv.Itoa(int(s.Behavior)), "must be reject or throttling")
	}
	if s.Strategy == SentinelWarmUp {
		if s.WarmUp < time.Second || s.WarmUp%time.Second != 0 || s.WarmUp > sentinelMaxWarmUp*time.Second {
			return limiters.NewConfigError(KindSentinel, "warmup", limiters.FormatDuration(s.WarmUp),
				"with strategy=warmup must be whole seconds from 1s to 1000000s (WarmUpPeriodSec; sentinel has no default)")
		}
		if c := s.coldFactor(); c < 2 || c > sentinelMaxCold {
			return limiters.NewConfigError(KindSentinel, "cold_factor", strconv.Itoa(s.ColdFactor), "must be between 2 and 1000")
		}
		if p := s.params(); p.maxToken <= p.warning {
			return limiters.NewConfigError(KindSentinel, "warmup", limiters.FormatDuration(s.WarmUp), fmt.Sprintf(
				"too short for threshold=%s and cold_factor=%d: sentinel's warning and max tokens are both %d, its slope is infinite "+
					"and it would admit everything while cold", strconv.FormatFloat(thr, 'f', -1, 64), s.coldFactor(), p.warning))
		}
	} else {
		if s.WarmUp != 0 {
			return limiters.NewConfigError(KindSentinel, "warmup", limiters.FormatDuration(s.WarmUp), "applies to strategy=warmup only")
		}
		if s.ColdFactor != 0 && s.ColdFactor != sentinelDefaultCold {
			return limiters.NewConfigError(KindSentinel, "cold_factor", strconv.Itoa(s.ColdFactor), "applies to strategy=warmup only")
		}
	}
	if s.Behavior != SentinelThrottling && s.MaxQueue != 0 {
		return limiters.NewConfigError(KindSentinel, "max_queue", limiters.FormatDuration(s.MaxQueue), "applies to behavior=throttling only")
	}
	if s.MaxQueue < 0 || s.MaxQueue%time.Millisecond != 0 || s.MaxQueue > math.MaxUint32*time.Millisecond {
		return limiters.NewConfigError(KindSentinel, "max_queue", limiters.FormatDuration(s.MaxQueue),
			"must be whole milliseconds from 0 to 4294967295ms (MaxQueueingTimeMs)")
	}
	if s.Strategy == SentinelWarmUp && s.MaxQueue > sentinelMaxQueueWarm {
		return limiters.NewConfigError(KindSentinel, "max_queue", limiters.FormatDuration(s.MaxQueue),
			"with strategy=warmup must be at most 8s: a queued pass is counted when it leaves the queue, and further ahead it "+
				"would land in a bucket of the 10s leap array that sentinel still reads")
	}
	if s.Offset < 0 || s.Offset >= sentinelBuckets*sentinelBucketMs*time.Millisecond {
		return limiters.NewConfigError(KindSentinel, "offset", limiters.FormatDuration(s.Offset), "must be from 0 to less than 10s")
	}
	return nil
}

// sentinelRanges are what SentinelSpec.Validate accepts, field by field:
// docs/LIMITS.md's rows for sentinel, with specs at and just past each edge that the registry
// test holds to Validate.
var sentinelRanges = []limiters.FieldRange{
	{Field: "threshold", Accepted: "1 to 1000000, at most three decimals",
		Why:     "below 1 sentinel passes nothing: one request is more than the threshold",
		Valid:   []string{"sentinel:threshold=1", "sentinel:threshold=1000000", "sentinel:threshold=2.125"},
		Invalid: []string{"sentinel:threshold=0.999", "sentinel:threshold=1000001", "sentinel:threshold=1.0005"}},
	{Field: "strategy", Accepted: "direct or warmup",
		Why:     "sentinel's TokenCalculateStrategy (its memory-adaptive one is not modelled)",
		Valid:   []string{"sentinel:threshold=10,strategy=direct", "sentinel:threshold=10,strategy=warmup,warmup=10s"},
		Invalid: []string{"sentinel:threshold=10,strategy=adaptive"}},
	{Field: "behavior", Accepted: "reject or throttling",
		Why:     "sentinel's ControlBehavior",
		Valid:   []string{"sentinel:threshold=10,behavior=reject", "sentinel:threshold=10,behavior=throttling"},
		Invalid: []string{"sentinel:threshold=10,behavior=queue"}},
	{Field: "warmup", Accepted: "whole seconds from 1s to 1000000s, required with strategy=warmup and only then; threshold × warmup large enough that maxToken exceeds warningToken",
		Why:     "WarmUpPeriodSec; where the two token counts coincide sentinel's slope is 1/0 and a cold rule admits everything",
		Valid:   []string{"sentinel:threshold=10,strategy=warmup,warmup=1s", "sentinel:threshold=10,strategy=warmup,warmup=1000000s"},
		Invalid: []string{"sentinel:threshold=10,strategy=warmup", "sentinel:threshold=10,strategy=warmup,warmup=1500ms", "sentinel:threshold=1,strategy=warmup,warmup=1s", "sentinel:threshold=10,warmup=1s"}},
	{Field: "cold_factor", Accepted: "2 to 1000 (default 3), with strategy=warmup",
		Why:     "WarmUpColdFactor: sentinel refuses 1",
		Valid:   []string{"sentinel:threshold=10,strategy=warmup,warmup=1s,cold_factor=2", "sentinel:threshold=1000,strategy=warmup,warmup=1s,cold_factor=1000"},
		Invalid: []string{"sentinel:threshold=10,strategy=warmup,warmup=1s,cold_factor=1", "sentinel:threshold=10,cold_factor=4"}},
	{Field: "max_queue", Accepted: "whole ms from 0 to 4294967295ms, with behavior=throttling; at most 8s with strategy=warmup",
		Why:     "MaxQueueingTimeMs, a uint32; a warm-up's queued pass is counted when it leaves the queue, and further ahead it would land in a bucket of the 10s leap array still read",
		Valid:   []string{"sentinel:threshold=10,behavior=throttling,max_queue=4294967295ms", "sentinel:threshold=10,strategy=warmup,warmup=2s,behavior=throttling,max_queue=8s"},
		Invalid: []string{"sentinel:threshold=10,behavior=throttling,max_queue=4294967296ms", "sentinel:threshold=10,max_queue=1s", "sentinel:threshold=10,strategy=warmup,warmup=2s,behavior=throttling,max_queue=8001ms"}},
	{Field: "offset", Accepted: "0 to less than 10s",
		Why:     "where the run starts within the leap array's 10s",
		Valid:   []string{"sentinel:threshold=10,offset=0s", "sentinel:threshold=10,offset=9999ms"},
		Invalid: []string{"sentinel:threshold=10,offset=10s"}},
}

// params computes the rule's numbers in sentinel's own arithmetic (NewWarmUpTrafficShapingCalculator):
// the same conversions and order of float operations.
func (s SentinelSpec) params() sentinelParams {
	p := sentinelParams{threshold: s.Threshold, warm: s.Strategy == SentinelWarmUp, throttling: s.Behavior == SentinelThrottling}
	if !p.warm {
		return p
	}
	period := float64(uint32(s.WarmUp / time.Second))
	cold := uint32(s.coldFactor())
	warning := uint64((period * s.Threshold) / float64(cold-1))
	maxToken := warning + uint64(2*period*s.Threshold/float64(1+cold))
	p.warning, p.maxToken = int64(warning), int64(maxToken)
	p.slope = float64(cold-1) / s.Threshold / float64(maxToken-warning)
	p.coldQps = float64(uint32(s.Threshold) / cold)
	return p
}

// qps is CalculateAllowedTokens for stored tokens: the threshold, or below it while more than
// warningToken are stored.
func (p *sentinelParams) qps(stored int64) float64 {
	if !p.warm {
		return p.threshold
	}
	stored = max(stored, 0)
	if stored < p.warning {
		return p.threshold
	}
	above := stored - p.warning
	// Sentinel's expression as it writes it (the product is not converted before the sum),
	// so that the compiler treats it alike on every platform.
	return math.Nextafter(1.0/(float64(above)*p.slope+1.0/p.threshold), math.MaxFloat64)
}

// topQps is the highest QPS the rule ever allows: the threshold, or the warm-up's just above it.
func (p *sentinelParams) topQps() float64 { return max(p.threshold, p.qps(p.warning)) }

// New is NewSentinel(s, clock).
func (s SentinelSpec) New(clock limiters.Clock) (limiters.Limiter, error) {
	return NewSentinel(s, clock)
}

// CallerWait is max_queue with behavior=throttling (a throttled caller waits for its turn,
// as sentinel's Entry sleeps), else 0 (limiters.Waiting).
func (s SentinelSpec) CallerWait() time.Duration {
	if s.Behavior == SentinelThrottling {
		return s.MaxQueue
	}
	return 0
}

// AdmissionBound, with behavior=reject, is the two-bucket window's: M·⌈k/2⌉ for the k
// 500ms buckets an interval of length L touches, with M = ⌊QPS⌋ at its highest (100 over
// 1s: 200; over 500ms: 200 too — 100 at the end of a bucket, 100 at the start of the one
// after next is 501ms). With behavior=throttling, by when requests are decided (their wait
// ends later): M + ⌊(L − 1ns + max_queue)·QPS/1s⌋, one request at once, then one per
// interval, plus the queue (10/s, max_queue=500ms over 1s: 10 + 14 = 24), less a rounding
// margin of 2⁻⁵¹ in sentinel's favour. A bound, reached by saturating demand (throttled: a
// request of ⌊QPS⌋, whose own interval nobody waits for, then single requests); for reject it
// holds while clock readings never run backwards.
func (s SentinelSpec) AdmissionBound(L time.Duration) (int64, bool) {
	p := s.params()
	top := p.topQps()
	m := int64(math.Floor(top))
	if !p.throttling {
		k := bound.Touched(L, sentinelBucketMs*time.Millisecond)
		return bound.SaturatingMul(m, bound.DivCeil(k, 2)), true
	}
	span := new(big.Rat).SetInt64(int64(L) - 1)
	span.Add(span, new(big.Rat).SetInt64(int64(s.MaxQueue)))
	span.Mul(span, new(big.Rat).SetFloat64(top))
	span.Mul(span, new(big.Rat).SetFrac64(1<<51, 1<<51-1))
	span.Quo(span, new(big.Rat).SetInt64(int64(time.Second)))
	rest := new(big.Int).Quo(span.Num(), span.Denom())
	if !rest.IsInt64() {
		return math.MaxInt64, true
	}
	return bound.SaturatingAdd(m, rest.Int64()), true
}

// NaturalWindow is 1s, the statistic interval.
func (s SentinelSpec) NaturalWindow() time.Duration { return time.Second }

// NominalRate is the threshold per second, in lowest terms: 2.5 is 5/2s.
func (s SentinelSpec) NominalRate() (limiters.Rate, bool) {
	milli := int64(math.Round(s.Threshold * 1000))
	g := gcd(milli, 1000)
	return limiters.Rate{Permits: int(milli / g), Window: time.Duration(1000/g) * time.Second}, true
}

// InitialPermits is what a request at 0 could take: ⌊threshold⌋, or a cold warm-up's ⌊QPS⌋
// (100/s, cold factor 3: 33).
func (s SentinelSpec) InitialPermits() int { return sentinelOf(s, nil).AvailableAt(0) }

// NewSentinel returns one sentinel flow rule for spec on clock. It refuses what
// SentinelSpec.Validate refuses and a nil clock.
func NewSentinel(spec SentinelSpec, clock limiters.Clock) (*Sentinel, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := limiters.RequireClock(KindSentinel, clock); err != nil {
		return nil, err
	}
	return sentinelOf(spec, clock), nil
}

func sentinelOf(spec SentinelSpec, clock limiters.Clock) *Sentinel {
	if spec.ColdFactor == 0 {
		spec.ColdFactor = sentinelDefaultCold
	}
	l := &Sentinel{params: spec.params(), maxQueue: int64(spec.MaxQueue), offset: int64(spec.Offset),
		spec: spec, clock: clock, live: true}
	l.maxPermits = int(math.Floor(l.params.topQps()))
	// The leap array as sentinel makes it at creation (time 0): the bucket of now and the 19
	// after it, each in its slot.
	first := l.offset / int64(time.Millisecond) / sentinelBucketMs
	for i := range l.buckets {
		l.buckets[i].start = first + (int64(i)-first%sentinelBuckets+sentinelBuckets)%sentinelBuckets
	}
	l.undo.bucket = -1
	return l
}

// nanos is sentinel's nanosecond clock for the run's time now, from the 10s boundary the run
// is offset from (0 before 0).
func (l *Sentinel) nanos(now time.Duration) int64 { return l.offset + max(int64(now), 0) }

// passesIn is the passes a read finds in bucket k (ms/500): its slot's, if the slot holds k.
func (l *Sentinel) passesIn(k int64) int64 {
	if k < 0 {
		return 0
	}
	if b := &l.buckets[k%sentinelBuckets]; b.start == k {
		return b.passes
	}
	return 0
}

// count adds n passes to bucket k as the leap array does: into the slot if it holds k,
// resetting it if it holds an older bucket; a pass behind the slot's bucket is dropped
// (sentinel logs "already behind" and counts nothing).
func (l *Sentinel) count(k, n int64) bool {
	b := &l.buckets[k%sentinelBuckets]
	switch {
	case b.start == k:
		b.passes += n
	case b.start < k:
		b.start, b.passes = k, n
	default:
		return false
	}
	return true
}

// synced is syncToken's result at ms without storing it: at the first request of a whole
// second, the tokens cool down (grow) by the elapsed time and lose the previous QPS.
func (l *Sentinel) synced(ms int64) sentinelWarm {
	w := l.warm
	p := &l.params
	second := ms - ms%sentinelSecondMs
	if w.synced && second <= w.filled {
		return w
	}
	k := ms / sentinelBucketMs
	passQps := float64(l.passesIn(k-1)+l.passesIn(k-2)) / 1.0 // the 1s interval, in seconds
	old := w.stored
	next := old
	switch {
	case old < p.warning && !w.synced:
		next = p.maxToken // from lastFilledTime 0, the epoch: far past maxToken
	case old < p.warning:
		next = int64(float64(old) + (float64(second)-float64(w.filled))*p.threshold/1000.0)
	case old > p.warning && passQps < p.coldQps:
		next = int64(float64(old) + float64(second-w.filled)*p.threshold/1000.0)
	}
	next = min(next, p.maxToken)
	w.stored = max(next+int64(-passQps), 0)
	w.filled, w.synced = second, true
	return w
}

// interval is the throttling interval of n at qps: ⌈n/qps·10⁹⌉ ns.
func sentinelInterval(n int, qps float64) int64 {
	return int64(math.Ceil(float64(n) / qps * float64(time.Second)))
}

// ReserveAt decides n requests at now as sentinel does: with behavior=reject, Admitted if
// the passes of the last two buckets plus n are within the threshold, else Rejected; with
// behavior=throttling, Admitted at once when an interval has passed since the last pass,
// Admitted with the wait for its turn when that is at most max_queue and maxWait, else
// Rejected, taking nothing. The warm-up syncs first, as sentinel does for every request.
func (l *Sentinel) ReserveAt(now time.Duration, n int, maxWait time.Duration) limiters.Reservation {
	r := limiters.Reservation{Decision: limiters.CheckN(n, l.maxPermits), Permits: n, At: now}
	if r.Decision == limiters.Invalid || !l.live {
		return r
	}
	ns := l.nanos(now)
	ms := ns / int64(time.Millisecond)
	l.mu.Lock()
	defer l.mu.Unlock()
	qps := l.params.threshold
	if l.params.warm {
		l.warm = l.synced(ms)
		qps = l.params.qps(l.warm.stored)
	}
	if r.Decision != limiters.Admitted {
		return r
	}
	if !l.params.throttling {
		k := ms / sentinelBucketMs
		if float64(l.passesIn(k)+l.passesIn(k-1))+float64(n) > qps {
			r.Decision = limiters.Rejected
			return r
		}
		counted := l.count(k, int64(n))
		l.undo = sentinelUndo{ok: true, at: now, n: n, bucket: -1}
		if counted {
			l.undo.bucket = k
		}
		return r
	}
	if float64(n) > qps {
		r.Decision = limiters.Rejected
		return r
	}
	interval := sentinelInterval(n, qps)
	undo := sentinelUndo{ok: true, at: now, n: n, bucket: -1, throttled: true, lastBefore: l.last, passedBefore: l.passed}
	if !l.passed || l.last+interval <= ns {
		l.last, l.passed = ns, true
	} else {
		wait := l.last + interval - ns
		if wait > l.maxQueue || wait > int64(max(maxWait, 0)) {
			r.Decision = limiters.Rejected
			r.Wait = time.Duration(wait)
			return r
		}
		l.last += interval
		r.Wait = time.Duration(wait)
	}
	undo.lastAfter = l.last
	if l.params.warm {
		// Sentinel counts the pass when the caller's sleep ends.
		if k := (ns + int64(r.Wait)) / int64(time.Millisecond) / sentinelBucketMs; l.count(k, int64(n)) {
			undo.bucket = k
		}
	}
	l.undo = undo
	return r
}

// CancelAt undoes an admitted reservation at the instant it was made (see RefundAt); later
// it gives nothing back.
func (l *Sentinel) CancelAt(now time.Duration, r limiters.Reservation) {
	if r.Decision == limiters.Admitted && now == r.At {
		l.RefundAt(now, r.Permits)
	}
}

// RefundAt undoes the latest pass exactly when it was of n permits at now and nothing has
// changed it since; otherwise it gives nothing back.
func (l *Sentinel) RefundAt(now time.Duration, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	u := l.undo
	if !u.ok || u.at != now || u.n != n {
		return
	}
	if u.throttled && l.last != u.lastAfter {
		return
	}
	if u.bucket >= 0 {
		b := &l.buckets[u.bucket%sentinelBuckets]
		if b.start != u.bucket || b.passes < int64(n) {
			return
		}
		b.passes -= int64(n)
	}
	if u.throttled {
		l.last, l.passed = u.lastBefore, u.passedBefore
	}
	l.undo.ok = false
}

// AcquireAt takes n permits at now if sentinel passes the requests without a wait; a
// throttled request that would wait is Rejected and takes nothing.
func (l *Sentinel) AcquireAt(now time.Duration, n int) limiters.Decision {
	return l.ReserveAt(now, n, 0).Decision
}

// TryAcquireAt reports whether n permits were taken at time now.
func (l *Sentinel) TryAcquireAt(now time.Duration, n int) bool {
	return l.AcquireAt(now, n) == limiters.Admitted
}

// TryAcquire takes n permits now, by the limiter's clock.
func (l *Sentinel) TryAcquire(n int) bool { return l.TryAcquireAt(limiters.ReadClock(l.clock), n) }

// view is what a request at ns would be judged against, without changing anything: the
// QPS after the warm-up's sync, the passes in the window (reject) and how many requests
// pass at once.
func (l *Sentinel) view(ns int64) (qps float64, passes int64, available int) {
	ms := ns / int64(time.Millisecond)
	qps = l.params.threshold
	if l.params.warm {
		qps = l.params.qps(l.synced(ms).stored)
	}
	top := min(int64(math.Floor(qps)), int64(l.maxPermits))
	if !l.params.throttling {
		k := ms / sentinelBucketMs
		passes = l.passesIn(k) + l.passesIn(k-1)
		return qps, passes, int(min(max(top-passes, 0), top))
	}
	if !l.passed {
		return qps, 0, int(top)
	}
	// The largest n whose interval has passed since the last pass (intervals grow with n).
	lo, hi := int64(0), top
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if l.last+sentinelInterval(int(mid), qps) <= ns {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return qps, 0, int(lo)
}

// AvailableAt is how many requests sentinel would pass at once at now.
func (l *Sentinel) AvailableAt(now time.Duration) int {
	if !l.live {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _, available := l.view(l.nanos(now))
	return available
}

// RetryAfterAt is how long after now a request for n would first pass, nothing else
// arriving: the first nanosecond at which AvailableAt reaches n (the statistic's buckets
// expire and, warming up, the threshold rises), found by a search of AvailableAt, which
// reads without deciding. ok is false for n the rule can never pass at once.
func (l *Sentinel) RetryAfterAt(now time.Duration, n int) (time.Duration, bool) {
	if !l.live || limiters.CheckN(n, l.MaxPermits()) != limiters.Admitted {
		return 0, false
	}
	return limiters.FirstInstant(func(d time.Duration) bool { return l.AvailableAt(now+d) >= n })
}

// Available is AvailableAt at the clock's current time.
func (l *Sentinel) Available() int { return l.AvailableAt(limiters.ReadClock(l.clock)) }

// MaxPermits is ⌊threshold⌋ (a warm-up's ⌊QPS⌋ once warm): sentinel blocks a request of
// more at any time.
func (l *Sentinel) MaxPermits() int { return l.maxPermits }

// Kind is KindSentinel.
func (l *Sentinel) Kind() limiters.Kind { return KindSentinel }

// String is the spec.
func (l *Sentinel) String() string {
	if !l.live {
		return string(KindSentinel)
	}
	return l.spec.String()
}

// Spec is the limiter's configuration.
func (l *Sentinel) Spec() SentinelSpec { return l.spec }

// Snapshot is, with behavior=reject, the passes counted in the last two buckets (Level) of
// the QPS threshold in force (LevelMax, the warm-up's when warming); with
// behavior=throttling, the requests queued ahead (Level, the time to the last pass's turn in
// intervals of one request) of what max_queue holds (LevelMax). NextFree is when one request
// next passes at once, at the current threshold.
func (l *Sentinel) Snapshot(now time.Duration) limiters.State {
	st := limiters.State{Kind: KindSentinel, At: now, LevelName: "passes", NextFree: now}
	if !l.live {
		return st
	}
	ns := l.nanos(now)
	l.mu.Lock()
	defer l.mu.Unlock()
	qps, passes, available := l.view(ns)
	st.Available, st.MaxPermits = available, l.maxPermits
	if !l.params.throttling {
		st.Level, st.LevelMax = float64(passes), qps
		if available == 0 {
			// The oldest bucket leaves the window at the next boundary; if the newest alone
			// is full, at the one after.
			k := ns / int64(time.Millisecond) / sentinelBucketMs
			next := k + 1
			if float64(l.passesIn(k))+1 > qps {
				next = k + 2
			}
			st.NextFree = l.runTime(next * sentinelBucketMs * int64(time.Millisecond))
		}
		return st
	}
	one := float64(sentinelInterval(1, qps))
	st.LevelName = "queued"
	st.LevelMax = float64(l.maxQueue) / one
	if l.passed && l.last > ns {
		st.Level = float64(l.last-ns) / one
	}
	if available == 0 {
		st.NextFree = l.runTime(l.last + sentinelInterval(1, qps))
	}
	return st
}

// runTime is the run's time of sentinel's nanosecond ns.
func (l *Sentinel) runTime(ns int64) time.Duration {
	return time.Duration(min(ns-l.offset, limiters.MaxSpan))
}

// explainSentinel: the passes against the threshold (reject), or the queue (throttling).
func explainSentinel(s limiters.State, n int, d limiters.Decision) string {
	if s.LevelName == "queued" {
		head := fmt.Sprintf("sentinel's queue holds %s requests of the %s max_queue allows", levelText(s.Level), levelText(s.LevelMax))
		switch {
		case d == limiters.Admitted && n <= s.Available:
			return head + ": an interval has passed since the last pass, so it passes at once"
		case d == limiters.Admitted:
			return head + ": it takes the next turn, one interval after the last, and waits for it"
		case s.Level+float64(n) > s.LevelMax:
			return head + ": its turn would come after max_queue, so sentinel blocks it"
		}
		return fmt.Sprintf("%s: it would wait for its turn; a caller that cannot wait is refused (one passes at once in %s)",
			head, limiters.FormatDuration(s.NextFree-s.At))
	}
	head := fmt.Sprintf("sentinel counts %s passes in its last two 500ms buckets against a threshold of %s",
		levelText(s.Level), levelText(s.LevelMax))
	if d == limiters.Admitted {
		return fmt.Sprintf("%s: %d more fit", head, n)
	}
	return fmt.Sprintf("%s: %d more would exceed it, so it is blocked (one passes in %s, when the older bucket leaves the window)",
		head, n, limiters.FormatDuration(s.NextFree-s.At))
}

// Grid is the leap array's 500ms buckets on sentinel's clock, which the run enters Offset
// after a 10s boundary; with behavior=throttling the rule paces requests and counts nothing,
// so there is none.
func (s SentinelSpec) Grid() (limiters.Grid, bool) {
	if s.Behavior != SentinelReject {
		return limiters.Grid{}, false
	}
	b := time.Duration(sentinelBucketMs) * time.Millisecond
	return limiters.Grid{Period: b, Parts: 1, Phase: (b - s.Offset%b) % b, What: "bucket"}, true
}
