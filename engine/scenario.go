package engine

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ratelab/ratelab/internal/wording"

	"github.com/ratelab/ratelab/accesslog"
	"github.com/ratelab/ratelab/clients"
	"github.com/ratelab/ratelab/limiters"
)

// Scenario is everything one run needs: traffic (Sources), what a refused caller does
// (Client), the limiter stacks to compare (Lanes), the service behind them (Downstream), how
// long (Horizon) and the seed. Every lane sees the identical offered traffic.
type Scenario struct {
	Name        string
	Description string // what the scenario teaches, one paragraph
	Seed        uint64
	Horizon     time.Duration
	Bins        int // time bins in the results; 0 means DefaultBins
	Sources     []Source
	Client      Client
	Lanes       []LaneSpec
	Downstream  *Downstream     // nil: admitted requests complete at once
	Windows     []time.Duration // extra interval lengths for the guarantee meters
	Fleet       *Fleet          // nil: one process; else the instances and balancer a lane with a LaneSpec.Fleet runs on (fleet.go)
	Faults      []Fault         // the fleet's fault timeline: store outages, added latency, clock offsets, joins and leaves
	Trace       bool            // record every event of every request (small runs: at most TraceLimit records per lane)
	// TraceFrom and TraceTo narrow Trace to the events at times in [TraceFrom, TraceTo)
	// (TraceTo 0: to the horizon), for a chart of a window of a long run: before and after
	// it the lane runs as untraced, and LaneResult says which window its trace covers.
	TraceFrom, TraceTo time.Duration
}

// DefaultBins is the number of time bins when a scenario does not say.
const DefaultBins = 1000

// TraceLimit caps the trace of one lane: later records are dropped and LaneResult.Truncated is set.
const TraceLimit = 200_000

// LaneSpec is one limiter stack: requests pass every stage in order.
type LaneSpec struct {
	Name   string // "" means the stack's specs joined with "+"
	Stack  []limiters.Spec
	Client *Client // nil: the scenario's client; set to compare client policies on one limiter

	// Build, when set, makes the lane's limiters instead of Stack's specs: a limiter that is
	// not one of the built-in kinds (a peer library's, or a deliberately broken variant in a
	// checker's test). Stack still names the lane and gives the bounds its meters check.
	// Lanes are made in parallel, so Build must be safe for concurrent use.
	Build func(clock limiters.Clock) ([]limiters.Limiter, error)

	// Waste keeps, in the stages before a refusing one, the permits a refused request took
	// there (counted as wasted) instead of refunding them: how independent limiters behave
	// when the caller cannot give permits back, and ratelab's stacks before refunds.
	Waste bool
	// MaxWait, when positive, shapes instead of refusing: the stages reserve (see
	// Stack.Reserve) and a request whose permits are due within MaxWait is admitted after its
	// wait, when it goes on to the downstream. The wait shows in the wait percentiles, and the
	// request counts as delayed. Every stage must be able to reserve (the GCRA kinds) or
	// release (a bulkhead, which holds its permits through the wait).
	MaxWait time.Duration
	// Fleet, when set, runs the lane on the scenario's Fleet: its instances coordinate by
	// Fleet.Model, and Stack is the global limit the fleet is measured against.
	Fleet *LaneFleet
}

// validateWait refuses a negative or out-of-range MaxWait, and a shaping lane with a stage
// whose kind can neither reserve nor release (known from the registry, without building).
func (l LaneSpec) validateWait(field string) error {
	if l.MaxWait < 0 {
		return fieldErr(field, "must not be negative, got %v", l.MaxWait)
	}
	if err := inRange(field, l.MaxWait); err != nil {
		return err
	}
	if l.Build != nil {
		return nil
	}
	for j, spec := range l.Stack {
		wait := l.MaxWait
		if w, ok := spec.(limiters.Waiting); ok {
			wait = max(wait, w.CallerWait())
		}
		info, ok := limiters.Lookup(spec.Kind())
		if wait > 0 && ok && !info.Has(limiters.CapReserve) && !info.Has(limiters.CapRelease) {
			return fieldErr(field, "stage %d: %v: a shaping lane's stages must reserve (or release)", j+1, info.Lacks(limiters.CapReserve))
		}
	}
	return nil
}

// Label is the lane's display name.
func (l LaneSpec) Label() string {
	if l.Name != "" {
		return l.Name
	}
	return StackString(l.Stack)
}

// StackString joins specs with "+", the stack syntax ParseStack reads.
func StackString(stack []limiters.Spec) string {
	parts := make([]string, len(stack))
	for i, s := range stack {
		parts[i] = s.String()
	}
	return strings.Join(parts, "+")
}

// ParseStack reads one or more limiter specs joined with "+":
// "token-bucket:capacity=10,rate=10/1s+concurrency:max=20". A stage written
// "keys(max=1000,evict=lru):token-bucket:…" is keyed: one limiter per request key
// (limiters.KeyedSpec), so "keys(max=1000):token-bucket:capacity=10,rate=10/1s+concurrency:max=20"
// is a bucket per client in front of one bulkhead for all.
func ParseStack(text string) ([]limiters.Spec, error) {
	var stack []limiters.Spec
	parts, empty := wording.SplitList(text, "+", "stage")
	if empty != "" {
		return nil, &limiters.SpecError{Spec: text, Reason: empty + ": a stack is specs joined by single +"}
	}
	if len(parts) == 0 {
		return nil, &limiters.SpecError{Spec: text, Reason: "empty: a spec is KIND:FIELD=VALUE,…, e.g. token-bucket:capacity=10,rate=100/1s"}
	}
	for _, part := range parts {
		if limiters.IsPartitionSpec(part) {
			spec, err := limiters.ParsePartitionSpec(part)
			if err != nil {
				return nil, err
			}
			stack = append(stack, spec)
			continue
		}
		if limiters.IsKeyedSpec(part) {
			spec, err := limiters.ParseKeyedSpec(part)
			if err != nil {
				return nil, err
			}
			stack = append(stack, spec)
			continue
		}
		spec, err := limiters.ParseSpec(part)
		if err != nil {
			return nil, err
		}
		stack = append(stack, spec)
	}
	return stack, nil
}

// SourceKind names an arrival process.
type SourceKind string

// The arrival processes.
const (
	SourceConstant SourceKind = "constant" // Rate per second, evenly spaced
	SourcePoisson  SourceKind = "poisson"  // Rate per second, exponential gaps
	SourceBursts   SourceKind = "bursts"   // Count requests at each burst's time (spread over Spread)
	SourceOnOff    SourceKind = "on-off"   // Rate during On, nothing during Off, repeating
	SourceRamp     SourceKind = "ramp"     // Rate rising (or falling) linearly to RateTo between From and Until
	SourceSine     SourceKind = "sine"     // Rate + Amplitude·sin(2πt/Period): a diurnal cycle
	SourceScript   SourceKind = "script"   // the listed arrivals
	SourceTrace    SourceKind = "trace"    // the arrivals of a CSV trace file (see trace.Reader)
)

// Source is one arrival process. Requests ask for Permits (default 1) and carry Key.
type Source struct {
	Kind      SourceKind
	Rate      float64           // requests per second (constant, poisson, on-off, ramp start, sine mean)
	RateTo    float64           // ramp: the rate at Until
	From      time.Duration     // first possible arrival
	Until     time.Duration     // 0: the horizon
	Poisson   bool              // on-off, ramp, sine: exponential gaps (thinned) instead of even spacing
	On, Off   time.Duration     // on-off
	Amplitude float64           // sine: requests per second above and below Rate
	Period    time.Duration     // sine
	Bursts    []Burst           // bursts
	Script    []Arrival         // script
	TraceFile string            // trace: a CSV file (see trace.Reader), or an access log (see accesslog.Open)
	Log       accesslog.Options // trace: how TraceFile is read (the zero value tells its format by its content)
	TraceData string            // trace: the CSV itself, for built-in scenarios (used when TraceFile is "")
	Permits   int               // permits per request; 0 means 1
	Key       string
	Keys      *KeyPopulation // when set, each request's key is drawn from it (keys.go), whatever Key says
	// Class is the criticality class of the source's requests ("user", "prefetch"): a
	// priority partition (limiters.PartitionSpec) gives each class its share, and the run
	// reports each class apart (ClassResult). "": none.
	Class string
}

// Burst is Count requests starting At, evenly spread over Spread (0: all at once).
type Burst struct {
	At     time.Duration
	Count  int
	Spread time.Duration
}

// Arrival is one scripted request.
type Arrival struct {
	At      time.Duration
	Permits int // 0 means the source's Permits
	Key     string
}

// Policy is what a client does when its request is refused.
type Policy string

// The client policies.
const (
	PolicyDrop       Policy = "drop"        // give up at once
	PolicyRetry      Policy = "retry"       // retry after Delay, up to MaxAttempts
	PolicyBackoff    Policy = "backoff"     // retry after Delay·2^(k−1), capped at MaxDelay, optionally with full jitter
	PolicyRetryAfter Policy = "retry-after" // retry when the refusing limiter's RetryAfter hint says (Delay when it has none)
	PolicyQueue      Policy = "queue"       // wait in a queue of QueueSize (FIFO unless Discipline says) for at most Timeout

	// Retry-After as a server sends it: whole seconds, rounded up (never 0), capped at
	// MaxDelay; Delay·2^(k−1) capped at MaxDelay when the stage cannot say; with Jitter, plus a
	// uniform draw in [0, Delay].
	PolicyRetryAfterHeader Policy = "retry-after-header"
	// The real libraries' rules (package clients), their defaults for an omitted delay,
	// max_delay and max_attempts:
	PolicyAWSStandard   Policy = "aws-standard"         // AWS SDK for Go v2's standard retryer, with its retry quota
	PolicyRetryableHTTP Policy = "retryablehttp"        // go-retryablehttp's DefaultBackoff, Retry-After uncapped
	PolicyRetryableLin  Policy = "retryablehttp-linear" // go-retryablehttp's LinearJitterBackoff
	PolicyCenkalti      Policy = "cenkalti-backoff"     // cenkalti/backoff v5's ExponentialBackOff under Retry
	PolicyAWSAdaptive   Policy = "aws-adaptive"         // aws-standard behind the SDK's adaptive (CUBIC) attempt rate limiter
	PolicyOctokit       Policy = "octokit"              // @octokit/plugin-throttling with its README's handler: one retry after the reset
	PolicyStripe        Policy = "stripe"               // stripe-go: a 429 rate_limit is never retried
	PolicyStripeLock    Policy = "stripe-lock-timeout"  // stripe-go: refusals as 429 lock_timeout, which it retries
	// Paces itself from the RateLimit / X-RateLimit-* remaining and reset of the last answer
	// (no attempt while it said 0 remaining, until its reset, in whole seconds, has passed),
	// each key a client of its own that reads only its own answers; refused anyway, it
	// retries as retry-after-header does.
	PolicyHeaderPaced Policy = "header-paced"
)

// Policies lists every client policy, in the order errors name them.
var Policies = []Policy{PolicyDrop, PolicyRetry, PolicyBackoff, PolicyRetryAfter, PolicyRetryAfterHeader,
	PolicyAWSStandard, PolicyAWSAdaptive, PolicyRetryableHTTP, PolicyRetryableLin, PolicyCenkalti, PolicyOctokit,
	PolicyStripe, PolicyStripeLock, PolicyHeaderPaced, PolicyQueue}

// NoRetryQuota as Client.RetryQuota turns the AWS retry quota off (ratelimit.None).
const NoRetryQuota = -1

// Client is what a caller does when refused: the scenario's for every lane, or a lane's own
// (LaneSpec.Client).
type Client struct {
	Policy      Policy
	Delay       time.Duration // retry: the delay; backoff: the first delay; retry-after: the fallback
	MaxDelay    time.Duration // backoff cap; 0: no cap
	Jitter      bool          // backoff: wait a uniform random time in [0, delay] (full jitter)
	MaxAttempts int           // attempts in all, the first included; 0 means 1 for drop, else required
	QueueSize   int           // queue
	Timeout     time.Duration // queue: give up after waiting this long
	// queue: which waiting request goes next and which the queue sheds (queue.go); "" is
	// QueueFIFO.
	Discipline QueueDiscipline
	// aws-standard: the retry quota's tokens, shared by the lane's callers as one SDK client
	// shares them; 0: the SDK's 500; NoRetryQuota: none.
	RetryQuota int
	// cenkalti-backoff: give up when the time since the first attempt plus the next wait
	// would pass it; 0: the library's 15 minutes.
	MaxElapsed time.Duration
	// octokit: the Bottleneck group the lane's requests pass before every attempt (global,
	// write, search, notifications: at least 0, 1s, 2s, 3s apart); "": global.
	Group string
}

// Retries reports whether c retries refused requests after a delay (every policy but drop
// and queue).
func (c Client) Retries() bool {
	switch c.Policy {
	case PolicyRetry, PolicyBackoff, PolicyRetryAfter, PolicyRetryAfterHeader,
		PolicyAWSStandard, PolicyAWSAdaptive, PolicyRetryableHTTP, PolicyRetryableLin, PolicyCenkalti,
		PolicyOctokit, PolicyStripe, PolicyStripeLock, PolicyHeaderPaced:
		return true
	}
	return false
}

// Holds reports whether c may hold a request's attempt back after it arrives —
// aws-adaptive's token bucket, octokit's group spacing (write, search, notifications),
// header-paced's pacing — so that its first attempt can come later than its arrival.
func (c Client) Holds() bool {
	switch c.Policy {
	case PolicyAWSAdaptive, PolicyHeaderPaced:
		return true
	case PolicyOctokit:
		return clients.OctokitGroups[c.Group] > 0
	}
	return false
}

// WithDefaults is c with what it omits filled in from its library's defaults (package
// clients): aws-standard and aws-adaptive 1s (the SDK's throttling base), 20s, 3 attempts
// and 500 tokens; octokit 2 attempts (one retry) and the global group; stripe and
// stripe-lock-timeout 500ms, 5s and 3 attempts;
// retryablehttp and retryablehttp-linear 1s, 30s and 5 attempts; cenkalti-backoff 500ms,
// 60s, no attempt limit and 15 minutes. Other policies are returned as they are.
func (c Client) WithDefaults() Client {
	fill := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	switch c.Policy {
	case PolicyAWSStandard, PolicyAWSAdaptive:
		fill(&c.Delay, clients.AWSThrottleBase)
		fill(&c.MaxDelay, clients.AWSMaxBackoff)
		if c.MaxAttempts == 0 {
			c.MaxAttempts = clients.AWSMaxAttempts
		}
		if c.RetryQuota == 0 {
			c.RetryQuota = clients.AWSQuotaTokens
		}
	case PolicyRetryableHTTP, PolicyRetryableLin:
		fill(&c.Delay, clients.RetryableWaitMin)
		fill(&c.MaxDelay, clients.RetryableWaitMax)
		if c.MaxAttempts == 0 {
			c.MaxAttempts = clients.RetryableMaxAttempts
		}
	case PolicyCenkalti:
		fill(&c.Delay, clients.CenkaltiInitialInterval)
		fill(&c.MaxDelay, clients.CenkaltiMaxInterval)
		fill(&c.MaxElapsed, clients.CenkaltiMaxElapsedTime)
	case PolicyOctokit:
		if c.MaxAttempts == 0 {
			c.MaxAttempts = clients.OctokitMaxAttempts
		}
		if c.Group == "" {
			c.Group = "global"
		}
	case PolicyStripe, PolicyStripeLock:
		fill(&c.Delay, clients.StripeMinRetryDelay)
		fill(&c.MaxDelay, clients.StripeMaxRetryDelay)
		if c.MaxAttempts == 0 {
			c.MaxAttempts = clients.StripeMaxAttempts
		}
	}
	return c
}

// Downstream is the service behind the limiters: Pool connections (0: unlimited) and a
// service time distribution that may change over time. With a Server the distribution is each
// request's service demand on the server's cores, and the time a request takes depends on
// what else is there (server.go); without one it is the time itself.
type Downstream struct {
	Pool   int
	Phases []Phase // sorted by From; the first must start at 0
	Server *Server // nil: every request takes its drawn time, whatever else is in service
}

// Phase is the service time distribution from From on, and, for a Server, the machine's
// state: its cores (a brown-out has fewer), whether it answers at all (a black hole does not:
// its cores make no progress, callers wait out their timeout), and the fraction of requests
// it fails at once (an error burst).
type Phase struct {
	From      time.Duration
	Service   Distribution
	Cores     int     // server: cores in this phase; 0: Server.Cores
	BlackHole bool    // server: no progress, no answers; requests end at the callers' timeout
	Errors    float64 // server: fraction of admitted requests failed at once, in [0, 1]
}

// DistKind names a service time distribution.
type DistKind string

// The distributions.
const (
	DistConstant    DistKind = "constant"    // Mean
	DistUniform     DistKind = "uniform"     // between Min and Max
	DistExponential DistKind = "exponential" // mean Mean
	DistLogNormal   DistKind = "lognormal"   // median Mean, shape Sigma
)

// Distribution is a service time distribution.
type Distribution struct {
	Kind     DistKind
	Mean     time.Duration
	Min, Max time.Duration
	Sigma    float64
}

// MaxTime bounds every time and duration of a scenario: each must be below 2^62ns, about
// 146 years. Two such values add up without overflowing int64, so no time the engine derives
// from them (an arrival's from + at, now + a delay) wraps into the past.
const MaxTime = time.Duration(1) << 62

// MaxPermits is the most permits one request may ask for: 2^31−1, so that the permits of up
// to 2^32 requests add up exactly in an int64 (a trace holds at most trace.MaxRows).
const MaxPermits = 1<<31 - 1

// maxTimeText is how errors name MaxTime.
const maxTimeText = "2^62ns (about 146 years)"

// MaxRate is the fastest a source may offer requests, per second: one per nanosecond, the
// clock's resolution. Any positive rate below it is accepted: an arrival that a slow rate puts
// past MaxTime is past every horizon and never comes.
const MaxRate = 1e9

// MaxBins is the most time bins a run may have: each lane keeps one bin of counters (and one
// available-permits reading per stage) per bin.
const MaxBins = 100_000

// MaxSigma is the largest lognormal shape: e^(5·σ) already spans about 10^10, and drawn service
// times are clamped at 2^62ns.
const MaxSigma = 5.0

// FieldError is a scenario value that cannot run. Field is a dotted path ("sources[1].rate").
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// inRange refuses a time or duration at or past MaxTime (negative values are each field's
// own business).
func inRange(field string, d time.Duration) error {
	if d >= MaxTime {
		return fieldErr(field, "must be less than %s, got %v", maxTimeText, d)
	}
	return nil
}

// permitsInRange refuses more permits than MaxPermits.
func permitsInRange(field string, n int) error {
	if n > MaxPermits {
		return fieldErr(field, "must be at most %d (2^31-1, so that sums of permits stay exact), got %d", MaxPermits, n)
	}
	return nil
}

// absolute refuses an arrival time from + at at or past MaxTime, naming at's field.
func absolute(field string, from, at time.Duration) error {
	if err := inRange(field, at); err != nil {
		return err
	}
	if from+at >= MaxTime {
		return fieldErr(field, "from (%v) + at (%v) is past %s", from, at, maxTimeText)
	}
	return nil
}

// Validate reports the first value the engine cannot run, naming its field.
func (sc *Scenario) Validate() error {
	if sc.Horizon <= 0 {
		return fieldErr("horizon", "must be positive, got %v", sc.Horizon)
	}
	if err := inRange("horizon", sc.Horizon); err != nil {
		return err
	}
	if sc.TraceFrom < 0 || sc.TraceFrom >= sc.Horizon {
		return fieldErr("trace_from", "must be in [0, the horizon %v), got %v", sc.Horizon, sc.TraceFrom)
	}
	if sc.TraceTo < 0 || (sc.TraceTo > 0 && sc.TraceTo <= sc.TraceFrom) {
		return fieldErr("trace_to", "must be after trace_from (%v), or 0 for the horizon, got %v", sc.TraceFrom, sc.TraceTo)
	}
	if sc.Bins < 0 || sc.Bins > MaxBins {
		return fieldErr("bins", "must be between 1 and %d (0: the default, %d), got %d", MaxBins, DefaultBins, sc.Bins)
	}
	if len(sc.Sources) == 0 {
		return fieldErr("sources", "at least one source is required")
	}
	for i, s := range sc.Sources {
		if err := s.validate(fmt.Sprintf("sources[%d]", i), sc.Horizon); err != nil {
			return err
		}
	}
	if classes := sc.Classes(); len(classes) > MaxClasses {
		return fieldErr("sources", "name %d classes; at most %d", len(classes), MaxClasses)
	}
	if err := sc.Client.validate("client"); err != nil {
		return err
	}
	if len(sc.Lanes) == 0 {
		return fieldErr("limiters", "at least one limiter is required")
	}
	for i, lane := range sc.Lanes {
		if len(lane.Stack) == 0 && lane.Build == nil {
			return fieldErr(fmt.Sprintf("limiters[%d]", i), "empty stack")
		}
		if lane.Client != nil {
			if err := lane.Client.validate(fmt.Sprintf("limiters[%d].client", i)); err != nil {
				return err
			}
		}
		for j, spec := range lane.Stack {
			if lane.Build == nil {
				if err := spec.Validate(); err != nil {
					return fieldErr(fmt.Sprintf("limiters[%d]", i), "stage %d: %v", j+1, err)
				}
			}
			// The guarantee meters measure over each stage's window, and a bound over a
			// window of 2^62ns or more can overflow (a rate's window may be longer than its
			// limiter's range: 1000/2000000h).
			if w := spec.NaturalWindow(); w >= MaxTime {
				return fieldErr(fmt.Sprintf("limiters[%d]", i), "stage %d: %s: the window %v must be less than %s",
					j+1, spec, w, maxTimeText)
			}
		}
		if err := lane.validateWait(fmt.Sprintf("limiters[%d].max_wait", i)); err != nil {
			return err
		}
	}
	if d := sc.Downstream; d != nil {
		if d.Pool < 0 {
			return fieldErr("downstream.pool", "must not be negative, got %d", d.Pool)
		}
		if len(d.Phases) == 0 {
			return fieldErr("downstream.service", "a service time is required")
		}
		if d.Server != nil {
			if err := d.Server.validate("downstream.server"); err != nil {
				return err
			}
		}
		for i, p := range d.Phases {
			field := fmt.Sprintf("downstream.phases[%d]", i)
			if i == 0 && p.From != 0 {
				return fieldErr(field+".from", "the first phase must start at 0, got %v", p.From)
			}
			if i > 0 && p.From <= d.Phases[i-1].From {
				return fieldErr(field+".from", "phases must be in increasing time order")
			}
			if err := inRange(field+".from", p.From); err != nil {
				return err
			}
			if err := p.Service.validate(field + ".service"); err != nil {
				return err
			}
			if err := d.validatePhase(field, p); err != nil {
				return err
			}
		}
	}
	if err := sc.validateFleet(); err != nil {
		return err
	}
	for i, w := range sc.Windows {
		if w <= 0 {
			return fieldErr(fmt.Sprintf("windows[%d]", i), "must be positive, got %v", w)
		}
		if err := inRange(fmt.Sprintf("windows[%d]", i), w); err != nil {
			return err
		}
	}
	return nil
}

// validate checks the fields every source has (keys, permits, its active period), then its
// kind's own (sourceChecks), each error naming the field as the scenario file spells it.
func (s Source) validate(field string, horizon time.Duration) error {
	if s.Keys != nil {
		if err := s.Keys.validate(field + ".keys"); err != nil {
			return err
		}
	}
	if s.Permits < 0 {
		return fieldErr(field+".permits", "must be at least 1, got %d", s.Permits)
	}
	if err := permitsInRange(field+".permits", s.Permits); err != nil {
		return err
	}
	if s.From < 0 {
		return fieldErr(field+".from", "must not be negative, got %v", s.From)
	}
	if err := inRange(field+".from", s.From); err != nil {
		return err
	}
	if s.Until < 0 || (s.Until != 0 && s.Until <= s.From) {
		return fieldErr(field+".until", "the active period [%v, %v) is empty or negative", s.From, s.Until)
	}
	if err := inRange(field+".until", s.Until); err != nil {
		return err
	}
	check, ok := sourceChecks[s.Kind]
	if !ok {
		kinds := []string{"constant", "poisson", "bursts", "on-off", "ramp", "sine", "script", "trace"}
		return fieldErr(field+".kind", "unknown source kind %q%s (%s)", s.Kind, wording.DidYouMean(string(s.Kind), kinds), strings.Join(kinds, ", "))
	}
	return check(s, field)
}

// sourceChecks are each source kind's own checks, after the fields every source has.
var sourceChecks = map[SourceKind]func(s Source, field string) error{
	SourceConstant: Source.checkPositiveRate,
	SourcePoisson:  Source.checkPositiveRate,
	SourceOnOff:    Source.checkOnOff,
	SourceRamp:     Source.checkRamp,
	SourceSine:     Source.checkSine,
	SourceBursts:   Source.checkBursts,
	SourceScript:   Source.checkScript,
	SourceTrace:    Source.checkTrace,
}

// checkRate: a rate is between 0 and MaxRate (10⁹ requests a second), a number.
func checkRate(field string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > MaxRate {
		return fieldErr(field, "must be between 0 and 1e9 requests per second, got %v", v)
	}
	return nil
}

// checkPositiveRate: constant and Poisson sources offer rate requests a second, more than 0.
func (s Source) checkPositiveRate(field string) error {
	if err := checkRate(field+".rate", s.Rate); err != nil {
		return err
	}
	if s.Rate == 0 {
		return fieldErr(field+".rate", "must be positive")
	}
	return nil
}

// checkOnOff: rate while on, for on (> 0), then silent for off (≥ 0).
func (s Source) checkOnOff(field string) error {
	if err := s.checkPositiveRate(field); err != nil {
		return err
	}
	if s.On <= 0 {
		return fieldErr(field+".on", "must be positive, got %v", s.On)
	}
	if s.Off < 0 {
		return fieldErr(field+".off", "must not be negative, got %v", s.Off)
	}
	if err := inRange(field+".on", s.On); err != nil {
		return err
	}
	return inRange(field+".off", s.Off)
}

// checkRamp: from rate to rate_to, either of them 0 but not both.
func (s Source) checkRamp(field string) error {
	if err := checkRate(field+".rate", s.Rate); err != nil {
		return err
	}
	if err := checkRate(field+".rate_to", s.RateTo); err != nil {
		return err
	}
	if s.Rate == 0 && s.RateTo == 0 {
		return fieldErr(field+".rate_to", "a ramp from 0 to 0 offers nothing")
	}
	return nil
}

// checkSine: rate ± amplitude over period; the amplitude at most the rate (100/s ± 100 dips
// to 0, ± 101 would go negative).
func (s Source) checkSine(field string) error {
	if err := s.checkPositiveRate(field); err != nil {
		return err
	}
	if err := checkRate(field+".amplitude", s.Amplitude); err != nil {
		return err
	}
	if s.Amplitude > s.Rate {
		return fieldErr(field+".amplitude", "must not exceed the mean rate %v (a rate cannot go negative), got %v", s.Rate, s.Amplitude)
	}
	if s.Period <= 0 {
		return fieldErr(field+".period", "must be positive, got %v", s.Period)
	}
	return inRange(field+".period", s.Period)
}

// checkBursts: at least one burst, in time order, each of at least one request. Each burst
// is checked with no field name first and named only when it fails: a name formatted for
// every burst of a valid scenario was most of Validate's time (BenchmarkValidate).
func (s Source) checkBursts(field string) error {
	if len(s.Bursts) == 0 {
		return fieldErr(field+".bursts", "at least one burst is required")
	}
	burst := func(f string, i int, b Burst) error {
		if b.At < 0 {
			return fieldErr(f+".at", "must not be negative, got %v", b.At)
		}
		if b.Count < 1 {
			return fieldErr(f+".count", "must be at least 1, got %d", b.Count)
		}
		if b.Spread < 0 {
			return fieldErr(f+".spread", "must not be negative, got %v", b.Spread)
		}
		if i > 0 && b.At < s.Bursts[i-1].At {
			return fieldErr(f+".at", "bursts must be in time order")
		}
		if err := absolute(f+".at", s.From, b.At); err != nil {
			return err
		}
		// The burst may end past MaxTime: its arrivals from there on are past the horizon.
		return inRange(f+".spread", b.Spread)
	}
	for i, b := range s.Bursts {
		if burst("", i, b) != nil {
			return burst(fmt.Sprintf("%s.bursts[%d]", field, i), i, b)
		}
	}
	return nil
}

// checkScript: at least one arrival, in time order, each of at least one permit (named only
// when it fails, as a burst is).
func (s Source) checkScript(field string) error {
	if len(s.Script) == 0 {
		return fieldErr(field+".arrivals", "at least one arrival is required")
	}
	arrival := func(f string, i int, a Arrival) error {
		if a.At < 0 || (i > 0 && a.At < s.Script[i-1].At) {
			return fieldErr(f+".at", "arrivals must be in time order and not negative")
		}
		if err := absolute(f+".at", s.From, a.At); err != nil {
			return err
		}
		if a.Permits < 0 {
			return fieldErr(f+".permits", "must be at least 1, got %d", a.Permits)
		}
		return permitsInRange(f+".permits", a.Permits)
	}
	for i, a := range s.Script {
		if arrival("", i, a) != nil {
			return arrival(fmt.Sprintf("%s.arrivals[%d]", field, i), i, a)
		}
	}
	return nil
}

// checkTrace: a file or inline data, and a log format that names what exists.
func (s Source) checkTrace(field string) error {
	if s.TraceFile == "" && s.TraceData == "" {
		return fieldErr(field+".file", "a trace file is required")
	}
	if err := s.Log.Check(); err != nil {
		return fieldErr(field+".log_format", "%v", err)
	}
	return nil
}

func (c Client) validate(field string) error {
	if c.RetryQuota != 0 && c.Policy != PolicyAWSStandard && c.Policy != PolicyAWSAdaptive {
		return fieldErr(field+".retry_quota", "is for aws-standard and aws-adaptive, not %s", c.policyName())
	}
	if c.Group != "" && c.Policy != PolicyOctokit {
		return fieldErr(field+".group", "is for octokit, not %s", c.policyName())
	}
	if _, ok := clients.OctokitGroups[c.Group]; c.Group != "" && !ok {
		return fieldErr(field+".group", "unknown Bottleneck group %q (%s)", c.Group, strings.Join(clients.OctokitGroupNames, ", "))
	}
	if c.MaxElapsed != 0 && c.Policy != PolicyCenkalti {
		return fieldErr(field+".max_elapsed", "is for cenkalti-backoff, not %s", c.policyName())
	}
	if c.Discipline != "" && c.Policy != PolicyQueue {
		return fieldErr(field+".discipline", "is for the queue policy, not %s", c.policyName())
	}
	switch c.Policy {
	case PolicyDrop, "":
		return nil
	case PolicyRetry, PolicyBackoff, PolicyRetryAfter, PolicyRetryAfterHeader, PolicyHeaderPaced:
		if c.MaxAttempts < 1 {
			return fieldErr(field+".max_attempts", "must be at least 1 for %s, got %d", c.Policy, c.MaxAttempts)
		}
		if c.Delay <= 0 {
			return fieldErr(field+".delay", "must be positive for %s, got %v", c.Policy, c.Delay)
		}
		return c.delaysInRange(field)
	case PolicyAWSStandard, PolicyAWSAdaptive, PolicyRetryableHTTP, PolicyRetryableLin, PolicyCenkalti,
		PolicyOctokit, PolicyStripe, PolicyStripeLock:
		// Omitted (0) values take the library's defaults (WithDefaults).
		if c.MaxAttempts < 0 {
			return fieldErr(field+".max_attempts", "must be at least 1 (0 or absent: the library's default), got %d", c.MaxAttempts)
		}
		if c.Delay < 0 {
			return fieldErr(field+".delay", "must be positive (0 or absent: the library's default), got %v", c.Delay)
		}
		if c.Jitter {
			return fieldErr(field+".jitter", "%s draws its own jitter as the library does; leave jitter out", c.Policy)
		}
		if c.Policy == PolicyOctokit && (c.Delay != 0 || c.MaxDelay != 0) {
			return fieldErr(field+".delay", "octokit waits until the X-RateLimit-Reset of the answer, plus 1s; leave delay and max_delay out")
		}
		if c.RetryQuota < NoRetryQuota {
			return fieldErr(field+".retry_quota", "must be at least 1 token, or none, got %d", c.RetryQuota)
		}
		if c.MaxElapsed < 0 {
			return fieldErr(field+".max_elapsed", "must be positive (0 or absent: 15m), got %v", c.MaxElapsed)
		}
		if err := inRange(field+".max_elapsed", c.MaxElapsed); err != nil {
			return err
		}
		return c.delaysInRange(field)
	case PolicyQueue:
		if c.QueueSize < 1 {
			return fieldErr(field+".queue_size", "must be at least 1, got %d", c.QueueSize)
		}
		if c.Timeout <= 0 {
			return fieldErr(field+".timeout", "must be positive, got %v", c.Timeout)
		}
		if err := inRange(field+".timeout", c.Timeout); err != nil {
			return err
		}
		if err := c.Discipline.validate(field + ".discipline"); err != nil {
			return err
		}
	default:
		return fieldErr(field+".policy", "unknown policy %q (%s)", c.Policy, PolicyNames())
	}
	return nil
}

// delaysInRange checks a retrying client's delay and max_delay: a delay at the end of time
// would overflow now + delay, and backoff's jitter draws in [0, delay].
func (c Client) delaysInRange(field string) error {
	if c.MaxDelay < 0 {
		return fieldErr(field+".max_delay", "must not be negative, got %v", c.MaxDelay)
	}
	if err := inRange(field+".delay", c.Delay); err != nil {
		return err
	}
	return inRange(field+".max_delay", c.MaxDelay)
}

func (c Client) policyName() string {
	if c.Policy == "" {
		return string(PolicyDrop)
	}
	return string(c.Policy)
}

// PolicyNames is every policy's name, for errors: "drop, retry, ..., queue".
func PolicyNames() string {
	names := make([]string, len(Policies))
	for i, p := range Policies {
		names[i] = string(p)
	}
	return strings.Join(names, ", ")
}

func (d Distribution) validate(field string) error {
	switch d.Kind {
	case DistConstant, DistExponential:
		if d.Mean < 0 {
			return fieldErr(field+".mean", "must not be negative, got %v", d.Mean)
		}
		return inRange(field+".mean", d.Mean)
	case DistUniform:
		if d.Min < 0 {
			return fieldErr(field+".min", "must not be negative, got %v", d.Min)
		}
		if err := inRange(field+".min", d.Min); err != nil {
			return err
		}
		if d.Max < d.Min {
			return fieldErr(field+".max", "must be at least min=%v, got %v", d.Min, d.Max)
		}
		// The draw is min + a uniform integer below max−min+1, which must not overflow.
		return inRange(field+".max", d.Max)
	case DistLogNormal:
		if d.Mean <= 0 {
			return fieldErr(field+".median", "must be positive, got %v", d.Mean)
		}
		if err := inRange(field+".median", d.Mean); err != nil {
			return err
		}
		if math.IsNaN(d.Sigma) || d.Sigma <= 0 || d.Sigma > MaxSigma {
			return fieldErr(field+".sigma", "must be in (0, %v], got %v", MaxSigma, d.Sigma)
		}
	default:
		return fieldErr(field+".kind", "unknown distribution %q (constant, uniform, exponential, lognormal)", d.Kind)
	}
	return nil
}
