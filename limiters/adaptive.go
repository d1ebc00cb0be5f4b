package limiters

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// FamilyNetflix is Netflix concurrency-limits' algorithms (AIMD, Vegas, Gradient, Gradient2),
// ported rule for rule from concurrency-limits-core's limit/*.java.
const FamilyNetflix Family = "netflix"

// Adaptive is a concurrency limit that moves: a bulkhead whose max is recomputed from the
// latency and outcome of the work it admitted (Feedback). Limit is the limit now; Probes
// counts the no-load RTT probes so far (Vegas, Gradient), for charts and the probe's cost.
type Adaptive interface {
	Feedback
	Releaser
	Limit() int
	Probes() int
}

// adaptiveRule is one algorithm's update: given a sample (or a window's summary), the new
// limit. It is called under adaptive.mu and may keep float state.
type adaptiveRule interface {
	// update is Netflix's Limit._update(startTime, rtt, inflight, didDrop): the new limit.
	update(rtt time.Duration, inflight int, drop bool) int
	// noLoad is the reference RTT the rule compares with: Vegas's rtt_noload, Gradient's
	// minimum, Gradient2's long-term average; 0 for AIMD (which has none).
	noLoad() time.Duration
	probes() int
}

// adaptive is what the four Netflix kinds share: the permits held and the limit, each one
// atomic int32, so that a decision is one load of the limit and one CAS on in flight (no lock,
// as Concurrency), and the rule's state behind a mutex taken only by feedback (ObserveAt) and
// Snapshot — as Netflix's AbstractLimit.onSample is synchronized. A completion observed
// while another goroutine decides can at worst make that decision use the limit of a moment
// before: the admission test in flight + n ≤ limit is on one value read once, so in flight
// never passes the limit a decision read.
//
// The windowed wrapper (Netflix's WindowedLimit), when Window > 0: samples shorter than
// 100µs are dropped; the others collect into a window (their minimum, their sum, the most in
// flight, any drop); at the first sample ending after the window's end the window closes, the
// next one ends min(max(2·its minimum RTT, Window), Window) later — with Netflix's equal
// minimum and maximum window, Window — and the rule hears the closed window's average RTT
// (integer division), its most in flight and whether anything dropped, if it had at least
// WindowSize samples. The first sample of all closes an empty window (Netflix's
// nextUpdateTime starts at 0), so the first window the rule can hear is the second.
//
// In flight. Netflix passes each sample the in-flight count when that request was admitted
// (AbstractLimiter.createListener). ratelab's Feedback carries no per-request token, so a
// sample here carries the in-flight count when its completion is observed, the completing
// request included (Stack.Complete observes before it releases). The rules use it only in
// their app-limited test (inflight·2 < limit: do not grow); under steady load the two counts
// have the same distribution.
type adaptive struct {
	inFlight atomic.Int32
	limit    atomic.Int32
	max      int32 // the largest limit the rule can Set: MaxPermits

	mu     sync.Mutex
	rule   adaptiveRule
	rtt    time.Duration // the last RTT the rule heard (a sample, or a window's average)
	window time.Duration // 0: every sample goes to the rule
	size   int           // WindowSize
	next   time.Duration // the current window ends after this (Netflix's nextUpdateTime)
	win    sampleWindow
}

// sampleWindow is Netflix's ImmutableAverageSampleWindow, mutable under the lock.
type sampleWindow struct {
	minRTT, sum time.Duration
	maxInFlight int
	count       int
	drop        bool
}

func (w *sampleWindow) reset() { *w = sampleWindow{minRTT: math.MaxInt64} }

func (w *sampleWindow) add(rtt time.Duration, inflight int, drop bool) {
	w.minRTT = min(w.minRTT, rtt)
	w.sum += rtt
	w.maxInFlight = max(w.maxInFlight, inflight)
	w.count++
	w.drop = w.drop || drop
}

// minWindowRTT is Netflix's WindowedLimit DEFAULT_MIN_RTT_THRESHOLD: shorter samples are
// dropped by the windowed wrapper.
const minWindowRTT = 100 * time.Microsecond

func (a *adaptive) init(rule adaptiveRule, initial, max int, window time.Duration, size int) {
	a.rule, a.window, a.size = rule, window, size
	a.limit.Store(int32(initial))
	a.max = int32(max)
	a.win.reset()
}

// acquire takes n permits if in flight + n ≤ the limit: one load of the limit, one CAS loop.
func (a *adaptive) acquire(n int) Decision {
	if d := CheckN(n, int(a.max)); d != Admitted {
		return d
	}
	for {
		held := a.inFlight.Load()
		if int32(n) > a.limit.Load()-held {
			return Rejected
		}
		if a.inFlight.CompareAndSwap(held, held+int32(n)) {
			return Admitted
		}
	}
}

// release returns n permits; it panics, changing nothing, if n is not positive or more than
// are held.
func (a *adaptive) release(kind Kind, n int) {
	for {
		held := a.inFlight.Load()
		if n <= 0 || int64(n) > int64(held) {
			panic(fmt.Sprintf("limiters: %s: Release(%d) with %d in flight", kind, n, held))
		}
		if a.inFlight.CompareAndSwap(held, held-int32(n)) {
			return
		}
	}
}

// observe is Feedback: one sample, through the window when there is one.
func (a *adaptive) observe(now time.Duration, latency time.Duration, ok bool) {
	if a.rule == nil {
		return // the zero value has no rule
	}
	inflight := int(a.inFlight.Load())
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.window <= 0 {
		a.hear(latency, inflight, !ok)
		return
	}
	if latency < minWindowRTT {
		return
	}
	a.win.add(latency, inflight, !ok)
	if now <= a.next {
		return
	}
	w := a.win
	a.win.reset()
	a.next = now + min(max(2*w.minRTT, a.window), a.window)
	if w.minRTT < math.MaxInt64 && w.count >= a.size {
		a.hear(w.sum/time.Duration(w.count), w.maxInFlight, w.drop)
	}
}

func (a *adaptive) hear(rtt time.Duration, inflight int, drop bool) {
	a.rtt = rtt
	a.limit.Store(int32(a.rule.update(rtt, inflight, drop)))
}

// state fills the adaptive shape's fields.
func (a *adaptive) state(kind Kind, now time.Duration) State {
	a.mu.Lock()
	var noLoad time.Duration
	var probes int
	if a.rule != nil {
		noLoad, probes = a.rule.noLoad(), a.rule.probes()
	}
	rtt := a.rtt
	a.mu.Unlock()
	limit, held := int(a.limit.Load()), int(a.inFlight.Load())
	return State{Kind: kind, At: now, Available: max(limit-held, 0), MaxPermits: int(a.max),
		InFlight: held, Max: limit, RTT: rtt, RTTNoLoad: noLoad, Probes: probes}
}

func (a *adaptive) available() int {
	return max(int(a.limit.Load()-a.inFlight.Load()), 0)
}

func (a *adaptive) probeCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.rule == nil {
		return 0
	}
	return a.rule.probes()
}

// explainAdaptive: in flight against the limit the rule set, and the RTTs it compares.
func explainAdaptive(s State, n int, d Decision) string {
	head := fmt.Sprintf("%d of the limit %d in flight", s.InFlight, s.Max)
	if s.RTT > 0 {
		head += fmt.Sprintf(" (last RTT %s", FormatDuration(s.RTT))
		if s.RTTNoLoad > 0 {
			head += fmt.Sprintf(", no-load %s", FormatDuration(s.RTTNoLoad))
		}
		head += ")"
	}
	if d == Admitted {
		return fmt.Sprintf("%s; %d more fit", head, n)
	}
	return fmt.Sprintf("%s; %d more would pass the limit until permits are released or the limit grows", head, n)
}

// Spec fields the four kinds share.

func floatField(name, meaning string, v *float64, def float64) Field {
	return Field{
		FieldInfo: FieldInfo{Name: name, Meaning: meaning},
		Set: func(text string) error {
			f, err := strconv.ParseFloat(text, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				return fmt.Errorf("%q is not a number", text)
			}
			*v = f
			return nil
		},
		Get:  func() string { return strconv.FormatFloat(*v, 'f', -1, 64) },
		Omit: func() bool { return *v == def },
	}
}

func optionalInt(name, meaning string, v *int, def int) Field {
	f := IntField(name, false, meaning, v)
	f.Omit = func() bool { return *v == def }
	return f
}

func optionalDuration(name, meaning string, v *time.Duration, def time.Duration) Field {
	f := DurationField(name, false, meaning, v)
	f.Omit = func() bool { return *v == def }
	return f
}

// windowFields are the windowed wrapper's: window (0, omitted: none) and window_size.
func windowFields(window *time.Duration, size *int) []Field {
	return []Field{
		optionalDuration("window", "sample window (Netflix's WindowedLimit, min = max window time); omitted: every sample updates the limit", window, 0),
		optionalInt("window_size", "samples a window needs before it updates the limit (with window; default 10)", size, 10),
	}
}

// seedField is the seed of a rule's probe jitter (Netflix draws it from ThreadLocalRandom).
func seedField(v *int) Field {
	return optionalInt("seed", "seed of the probe jitter (default 1): runs are reproducible", v, 1)
}

// validateLimits refuses limits out of order or out of the int32 range; min may be 0 for
// kinds without one (Vegas).
func validateLimits(kind Kind, initial, lo, hi int) error {
	if hi < 1 || hi > math.MaxInt32 {
		return NewConfigError(kind, "max", fmt.Sprint(hi), "must be between 1 and 2^31-1")
	}
	if lo > hi {
		return NewConfigError(kind, "min", fmt.Sprint(lo), fmt.Sprintf("must be at most max=%d", hi))
	}
	if initial < max(lo, 1) || initial > hi {
		return NewConfigError(kind, "initial", fmt.Sprint(initial), fmt.Sprintf("must be between min=%d and max=%d", max(lo, 1), hi))
	}
	return nil
}

func validateWindow(kind Kind, window time.Duration, size int) error {
	if window != 0 && window < 100*time.Millisecond {
		return NewConfigError(kind, "window", FormatDuration(window), "must be at least 100ms (Netflix's WindowedLimit refuses shorter)")
	}
	if window != 0 && size < 10 {
		return NewConfigError(kind, "window_size", fmt.Sprint(size), "must be at least 10 (Netflix's WindowedLimit refuses fewer)")
	}
	if window >= time.Duration(MaxSpan) {
		return NewConfigError(kind, "window", FormatDuration(window), "must be below 2^62ns")
	}
	return nil
}

// newJitter is a rule's probe-jitter stream: PCG seeded with seed, so a run's probes come at
// the same samples every time.
func newJitter(seed int) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15)) }

// log10Root is Netflix's Log10RootIntFunction: max(1, ⌊log10 t⌋) below 1000, ⌊log10 t⌋ above.
func log10Root(t int) int {
	if t < 1000 {
		if t <= 0 {
			return 1
		}
		return max(1, int(math.Log10(float64(t))))
	}
	return int(math.Log10(float64(t)))
}

// sqrtRoot is Netflix's SquareRootFunction.create(baseline): max(baseline, max(1, ⌊√t⌋))
// below 1000, max(baseline, ⌊√t⌋) above. Its Javadoc says "baseline + sqrt(limit)"; the code
// takes the larger of the two, and so does this.
func sqrtRoot(baseline, t int) int {
	if t < 1000 {
		if t <= 0 {
			return max(baseline, 1)
		}
		return max(baseline, max(1, int(math.Sqrt(float64(t)))))
	}
	return max(baseline, int(math.Sqrt(float64(t))))
}

// AdaptiveLimiter is an adaptive concurrency limit of one of the Netflix kinds (aimd, vegas,
// gradient, gradient2): the rule is its spec's. Decisions and releases are lock-free;
// ObserveAt and Snapshot take the rule's mutex (see adaptive). The zero value grants
// nothing (every request is Never) and has no kind; the specs' New make working ones.
type AdaptiveLimiter struct {
	adaptive
	spec Spec
}

var (
	_ Adaptive = (*AdaptiveLimiter)(nil)
	_ Clocked  = (*AdaptiveLimiter)(nil)
)

// AcquireAt takes n permits if in flight + n ≤ the limit now. The time is ignored.
func (l *AdaptiveLimiter) AcquireAt(_ time.Duration, n int) Decision { return l.acquire(n) }

// TryAcquireAt reports whether n permits were taken.
func (l *AdaptiveLimiter) TryAcquireAt(_ time.Duration, n int) bool { return l.acquire(n) == Admitted }

// TryAcquire reports whether n permits were taken.
func (l *AdaptiveLimiter) TryAcquire(n int) bool { return l.acquire(n) == Admitted }

// Release returns n permits. It panics, leaving the state unchanged, if n is not positive or
// more than are in flight.
func (l *AdaptiveLimiter) Release(n int) { l.release(l.Kind(), n) }

// ObserveAt feeds the rule one completion: latency is Netflix's rtt, !ok its didDrop.
func (l *AdaptiveLimiter) ObserveAt(now time.Duration, _ int, latency time.Duration, ok bool) {
	l.observe(now, latency, ok)
}

// Limit is the limit now.
func (l *AdaptiveLimiter) Limit() int { return int(l.limit.Load()) }

// Probes is the number of no-load RTT probes so far.
func (l *AdaptiveLimiter) Probes() int { return l.probeCount() }

// InFlight is the number of permits held.
func (l *AdaptiveLimiter) InFlight() int { return int(l.inFlight.Load()) }

// AvailableAt is max(limit − in flight, 0).
func (l *AdaptiveLimiter) AvailableAt(time.Duration) int { return l.available() }

// Available is max(limit − in flight, 0).
func (l *AdaptiveLimiter) Available() int { return l.available() }

// MaxPermits is the spec's max: the largest the limit can grow.
func (l *AdaptiveLimiter) MaxPermits() int { return int(l.max) }

// Kind is the spec's kind ("" for the zero value).
func (l *AdaptiveLimiter) Kind() Kind {
	if l.spec == nil {
		return ""
	}
	return l.spec.Kind()
}

// String is the spec ("" for the zero value).
func (l *AdaptiveLimiter) String() string {
	if l.spec == nil {
		return ""
	}
	return l.spec.String()
}

// Spec is the limiter's configuration.
func (l *AdaptiveLimiter) Spec() Spec { return l.spec }

// Snapshot returns in flight, the limit and the rule's RTTs.
func (l *AdaptiveLimiter) Snapshot(now time.Duration) State { return l.state(l.Kind(), now) }

func newAdaptive(spec Spec, rule adaptiveRule, initial, max int, window time.Duration, size int) *AdaptiveLimiter {
	l := &AdaptiveLimiter{spec: spec}
	l.init(rule, initial, max, window, size)
	return l
}
