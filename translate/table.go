package translate

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/virtualclock"
)

// Fit is how closely a library's configuration says the intent.
type Fit string

// The fits, best first.
const (
	// FitReference is ratelab's token bucket: the intent itself.
	FitReference Fit = "reference"
	// FitExact decides as the reference, request for request, under the conditions its Why
	// states (arrivals on whole milliseconds, a rate that is a whole number of …).
	FitExact Fit = "exact"
	// FitLater admits the same requests as the reference, some of them after a wait instead
	// of at once: a pacer with a queue (a caller's or the library's own) of (burst − 1)·T.
	FitLater Fit = "same requests, later"
	// FitClosest cannot say the intent: the configuration is the closest the library has,
	// and Why says what it cannot say.
	FitClosest Fit = "closest"
	// FitCannot has no configuration for a rate at all: listed, not run.
	FitCannot Fit = "cannot express"
	// FitNotModelled is a library ratelab has no model of: its documented mapping is listed,
	// never run and never guessed.
	FitNotModelled Fit = "not modelled"
)

// Reference and WaitingReference are the lane names of the two references: the token bucket
// of the intent, and the same bucket with callers that wait as long as it takes.
const (
	Reference        = "token-bucket (reference)"
	WaitingReference = "token-bucket (waiting reference)"
)

// Forever is the waiting reference's caller wait: as long as it takes (the longest a
// scenario's duration may be).
const Forever = engine.MaxTime - 1

// Runs reports whether a translation of this fit is run as a lane.
func (f Fit) Runs() bool { return f != FitCannot && f != FitNotModelled }

// Translation is one library's configuration for an intent, and what it does that the
// reference does not.
type Translation struct {
	Library string `json:"library"` // the library or product: "golang.org/x/time/rate"
	Lane    string `json:"lane"`    // the short name of its lane: "x/time/rate"
	Config  string `json:"config"`  // what one writes in the library itself
	Spec    string `json:"spec,omitempty"`
	// MaxWait is the lane's caller wait (engine.LaneSpec.MaxWait): ratelab's leaky bucket is
	// run as a pacer whose callers wait up to (burst − 1)·T.
	MaxWait time.Duration `json:"max_wait_ns,omitempty"`
	// Waits marks a library that never refuses (every call sleeps until its turn): it is
	// compared with the waiting reference, the token bucket whose callers wait as long as
	// it takes, request for request and wait for wait.
	Waits bool   `json:"waits,omitempty"`
	Fit   Fit    `json:"fit"`
	Why   string `json:"why"` // why these parameters, what the library cannot say, and when it is exact
	// What it does differently from the reference: at the first requests, after an idle, and
	// at a window boundary.
	First    string `json:"first"`
	Idle     string `json:"idle"`
	Boundary string `json:"boundary"`
}

// Translate is the intent in each library's own terms, in the order ratelab shows them: the
// reference, the peers ratelab models, ratelab's other kinds, then the libraries it does not
// model. Every Spec parses (a test holds it), and a translation the intent cannot be said in
// exactly says so in its Fit and Why.
func Translate(in Intent) []Translation {
	b := in.Burst
	T := in.Interval()
	span := in.BurstSpan() // b·T
	queue := time.Duration(b-1) * T
	dur := limiters.FormatDuration
	rate := in.Rate.String()
	perSec := trimFloat(in.PerSecond())
	bT := fmt.Sprintf("%d × %s = %s", b, dur(T), dur(span))
	fullAfter := fmt.Sprintf("%d at once after %s of idle (a full bucket: %s)", b, dur(span), bT)
	noWindows := "none: no windows"
	var out []Translation
	add := func(t Translation) { out = append(out, t) }

	ref := in.Reference().String()
	add(Translation{
		Library: "ratelab token-bucket", Lane: Reference, Config: ref, Spec: ref, Fit: FitReference,
		Why:   fmt.Sprintf("the intent itself: a bucket of %d refilled one permit every T = %s (GCRA, exact to the ns)", b, dur(T)),
		First: fmt.Sprintf("full: %d at once", b), Idle: fullAfter, Boundary: noWindows,
	})

	add(Translation{
		Library: "ratelab token-bucket, callers waiting", Lane: WaitingReference, Config: ref + ", callers waiting as long as it takes",
		Spec: ref, MaxWait: Forever, Waits: true, Fit: FitReference,
		Why:   "the reference for a library that never refuses: the same bucket, every caller waiting for its permit's turn (reserve)",
		First: fmt.Sprintf("%d at once, then one per %s (the rest wait)", b, dur(T)), Idle: fullAfter, Boundary: noWindows,
	})

	// golang.org/x/time/rate: burst is the bucket's size, the same number.
	xcfg := fmt.Sprintf("rate.NewLimiter(rate.Every(%s), %d)", goDuration(T), b)
	if n, ok := in.wholePerSecond(); ok {
		xcfg = fmt.Sprintf("rate.NewLimiter(%d, %d)", n, b)
	}
	add(Translation{
		Library: "golang.org/x/time/rate", Lane: "x/time/rate", Config: xcfg + "; lim.Allow()",
		Spec: fmt.Sprintf("x-time-rate:rate=%s,burst=%d", rate, b), Fit: FitExact,
		Why: "burst is the bucket's size, the same number as the capacity. Exact up to float64 seconds: a wait under 1ns " +
			"is truncated to 0, so a request up to 1ns before its token is due can pass (the kind's doc comment; pinned by a test)",
		First: fmt.Sprintf("full: %d at once", b), Idle: fullAfter, Boundary: noWindows,
	})

	add(nginxTranslation(in))

	// go.uber.org/ratelimit: slack is the permits banked beyond the one a Take always gets.
	ucfg := fmt.Sprintf("ratelimit.New(%d, ratelimit.Per(%s), ratelimit.WithSlack(%d))", in.Rate.Permits, goDuration(in.Rate.Window), b-1)
	if in.Rate.Window == time.Second {
		ucfg = fmt.Sprintf("ratelimit.New(%d, ratelimit.WithSlack(%d))", in.Rate.Permits, b-1)
	}
	if b == 1 {
		ucfg = strings.Replace(ucfg, "ratelimit.WithSlack(0)", "ratelimit.WithoutSlack", 1)
	}
	uwhy := fmt.Sprintf("Take never refuses: it sleeps until its permit's turn, so uber is compared with the waiting reference "+
		"(the bucket whose callers wait as long as it takes). slack=%d banks %d unspent permits, and a Take always gets one: %d at once "+
		"after idle. It is that bucket exactly but at the start, where the first calls get no slack", b-1, b-1, b)
	if !in.exactInterval() {
		uwhy += fmt.Sprintf("; and uber's per = %s/%d is truncated to whole ns where T is rounded up, a hair faster", dur(in.Rate.Window), in.Rate.Permits)
	}
	add(Translation{
		Library: "go.uber.org/ratelimit", Lane: "uber", Config: ucfg + "; rl.Take()",
		Spec: fmt.Sprintf("uber:rate=%s,slack=%d", rate, b-1), Waits: true, Fit: FitClosest, Why: uwhy,
		First:    fmt.Sprintf("no slack at first: the k-th call of a burst at the start sleeps (k − 1) × %s; none is refused", dur(T)),
		Idle:     fmt.Sprintf("slack + 1 = %d at once after %s of idle, then one per %s (the rest sleep)", b, dur(span), dur(T)),
		Boundary: noWindows,
	})

	// Guava: RateLimiter.create(permitsPerSecond) stores at most one second of permits.
	stored := int64(in.PerSecond()) // ⌊rate × 1s⌋, as Guava's double maxPermits floors when counted out
	add(Translation{
		Library: "Guava RateLimiter (SmoothBursty)", Lane: "guava", Config: fmt.Sprintf("RateLimiter.create(%s); rl.tryAcquire()", perSec),
		Spec: fmt.Sprintf("guava-bursty:rate=%s", rate), Fit: FitClosest,
		Why: fmt.Sprintf("Guava cannot say a burst of %d: create(permitsPerSecond) stores at most 1s of permits (maxBurstSeconds is 1.0, "+
			"not a parameter), %d here; a request passes whenever its ticket has come, with the cost falling on the next caller, "+
			"so one more than the stored permits passes. It starts with none stored", b, stored),
		First:    "1 at once (nothing stored: the first passes, and the next caller pays for it)",
		Idle:     fmt.Sprintf("%d after %s of idle (%d stored, and one more); %d after 1s or more", min(int64(b), stored)+1, dur(span), min(int64(b), stored), stored+1),
		Boundary: noWindows,
	})
	// Guava's maxBurstSeconds, were it a parameter; not for a burst of 1 (no stored permits,
	// which the model refuses: Guava is then a pacer whose cost falls on the next caller).
	if hidden := queue.Truncate(time.Microsecond); hidden > 0 {
		add(Translation{
			Library: "Guava SmoothBursty, package-private", Lane: "guava (max_burst, not public)",
			Config: fmt.Sprintf("new SmoothBursty(stopwatch, %s) — a package-private constructor: no user can write it", trimFloat(queue.Seconds())),
			Spec:   fmt.Sprintf("guava-bursty:rate=%s,max_burst=%s", rate, dur(hidden)), Fit: FitClosest,
			Why: fmt.Sprintf("what Guava would do if its maxBurstSeconds were a parameter: %s of permits stored (%d) and the one more: "+
				"%d after idle. It still starts with none stored", dur(queue), b-1, b),
			First: "1 at once (nothing stored)", Idle: fmt.Sprintf("%d after %s of idle (%d stored, and one more)", b, dur(queue), b-1),
			Boundary: noWindows,
		})
	}
	warm := span.Truncate(time.Microsecond)
	if warm < time.Microsecond {
		warm = time.Microsecond
	}
	add(Translation{
		Library: "Guava RateLimiter (SmoothWarmingUp)", Lane: "guava-warmup",
		Config: fmt.Sprintf("RateLimiter.create(%s, Duration.ofNanos(%d)); rl.tryAcquire()", perSec, warm.Nanoseconds()),
		Spec:   fmt.Sprintf("guava-warmup:rate=%s,warmup=%s", rate, dur(warm)), Fit: FitClosest,
		Why: fmt.Sprintf("cannot express a burst at all: a warming-up limiter's stored permits cost more than the stable interval "+
			"(up to 3 × %s when cold), never less, so stored permits slow it down. The warm-up is the burst's span, %s", dur(T), dur(warm)),
		First: "1 at once: it starts cold, its stored permits paid for at up to 3T", Idle: "1 at once: idle makes it cold again",
		Boundary: noWindows,
	})

	add(sentinelTranslation(in))

	// Windows: limit = burst, window = burst × T: the intent's rate and its burst from idle,
	// and twice the limit across a boundary.
	windowMs, wholeMs := wholeMillis(span)
	win := dur(span)
	if !wholeMs {
		win = dur(time.Duration(windowMs) * time.Millisecond)
	}
	twice := fmt.Sprintf("2 × %d = %d within 1ms across a window boundary (the reference: %d, then one per %s)", b, 2*b, b, dur(T))
	windowWhy := func(what string) string {
		w := fmt.Sprintf("a window, not a bucket: %s %d per %s has the intent's rate and its burst from idle, but refreshes all %d "+
			"at once at each boundary", what, b, win, b)
		if !wholeMs {
			w += fmt.Sprintf(" (the window is whole ms: %s rounded up to %s, a slower rate)", dur(span), win)
		}
		return w
	}
	add(Translation{
		Library: "resilience4j RateLimiter (AtomicRateLimiter)", Lane: "resilience4j",
		Config: fmt.Sprintf("RateLimiterConfig.custom().limitForPeriod(%d).limitRefreshPeriod(Duration.ofNanos(%d)).timeoutDuration(Duration.ZERO)", b, span.Nanoseconds()),
		Spec:   fmt.Sprintf("resilience4j:limit=%d,period=%s,timeout=0s", b, dur(span)), Fit: FitClosest,
		Why: windowWhy("limitForPeriod") + "; timeoutDuration 0, as the default of 5s makes a caller wait for a later cycle " +
			"instead of being refused. Cycles start at the limiter's creation",
		First: fmt.Sprintf("%d at once (a full cycle)", b), Idle: fmt.Sprintf("%d at once after any idle (the cycle's permissions)", b),
		Boundary: twice,
	})
	add(Translation{
		Library: "Flash5 FIXED_WINDOW", Lane: "flash5-fixed",
		Config: fmt.Sprintf(`guard.limit("ip", %d, %d, TimeUnit.MILLISECONDS)`, b, windowMs),
		Spec:   fmt.Sprintf("flash5-fixed:limit=%d,window=%s", b, win), Fit: FitClosest, Why: windowWhy("limit") + "; windows aligned to the ms clock",
		First: fmt.Sprintf("%d at once (a fresh window)", b), Idle: fmt.Sprintf("%d at once after any idle", b), Boundary: twice,
	})
	add(flash5TokenTranslation(in))
	add(Translation{
		Library: "two-counter estimate (Cloudflare, HAProxy)", Lane: "two-counter",
		Config: fmt.Sprintf("limit %d per %s, the previous period's count weighted by the time left", b, dur(span)),
		Spec:   fmt.Sprintf("two-counter:limit=%d,window=%s", b, dur(span)), Fit: FitClosest,
		Why: fmt.Sprintf("a sliding estimate, not a bucket: %d per %s assumes the previous period's requests were even; "+
			"periods anchored at the first request", b, dur(span)),
		First: fmt.Sprintf("%d at once", b), Idle: fmt.Sprintf("%d at once after a period of idle", b),
		Boundary: fmt.Sprintf("up to 2 × %d − 1 = %d within one period when the previous period's requests all came at its end", b, 2*b-1),
	})

	// ratelab's other kinds.
	lwhy := fmt.Sprintf("a pacer, one permit per T = %s: with callers that wait up to (%d − 1) × %s = %s it admits exactly the "+
		"requests the bucket of %d admits (the same GCRA test), each at its turn instead of at once", dur(T), b, dur(T), dur(queue), b)
	add(Translation{
		Library: "ratelab leaky-bucket", Lane: "leaky-bucket (waits " + dur(queue) + ")",
		Config: fmt.Sprintf("leaky-bucket:rate=%s, callers waiting up to %s (max_wait)", rate, dur(queue)),
		Spec:   fmt.Sprintf("leaky-bucket:rate=%s", rate), MaxWait: queue, Fit: FitLater, Why: lwhy,
		First: fmt.Sprintf("1 at once, the next %d each %s later (up to %s)", b-1, dur(T), dur(queue)),
		Idle:  fmt.Sprintf("1 at once after idle, the next %d queued", b-1), Boundary: noWindows,
	})
	slots := 10
	for int64(span)%int64(slots) != 0 {
		slots--
	}
	add(Translation{
		Library: "ratelab sliding-window", Lane: "sliding-window",
		Config: fmt.Sprintf("sliding-window:limit=%d,window=%s,slots=%d", b, dur(span), slots),
		Spec:   fmt.Sprintf("sliding-window:limit=%d,window=%s,slots=%d", b, dur(span), slots), Fit: FitClosest,
		Why: fmt.Sprintf("a rolling window, not a bucket: %d in any %s (counted in %d slots) has the rate and the burst, but a "+
			"permit comes back a whole window after it was spent, not one per T", b, dur(span), slots),
		First: fmt.Sprintf("%d at once", b), Idle: fmt.Sprintf("%d at once after %s of idle", b, dur(span)),
		Boundary: fmt.Sprintf("no 2×: at most %d in a window", b),
	})
	add(Translation{
		Library: "ratelab fixed-window", Lane: "fixed-window",
		Config: fmt.Sprintf("fixed-window:limit=%d,window=%s", b, dur(span)),
		Spec:   fmt.Sprintf("fixed-window:limit=%d,window=%s", b, dur(span)), Fit: FitClosest,
		Why:   fmt.Sprintf("a window, not a bucket: %d per %s (aligned to the clock's origin) refreshes all %d at each boundary", b, dur(span), b),
		First: fmt.Sprintf("%d at once", b), Idle: fmt.Sprintf("%d at once after any idle", b), Boundary: twice,
	})
	add(Translation{
		Library: "ratelab warm-up", Lane: "warm-up",
		Config: fmt.Sprintf("warm-up:capacity=%d,rate=%s,warmup=%s", b, rate, dur(T)),
		Spec:   fmt.Sprintf("warm-up:capacity=%d,rate=%s,warmup=%s", b, rate, dur(T)), Fit: FitClosest,
		Why: fmt.Sprintf("a token bucket that starts cold (interval 3T, burst ⌊%d/3⌋): the shortest warm-up, one interval (%s), "+
			"is the reference once the limiter is older than that", b, dur(T)),
		First: fmt.Sprintf("%d at once (cold: a third of the capacity)", max(b/3, 1)), Idle: fullAfter + " once warm",
		Boundary: noWindows,
	})
	add(Translation{
		Library: "ratelab concurrency", Lane: "concurrency", Config: "concurrency:max=N", Fit: FitCannot,
		Why:   "a bulkhead counts requests in flight, not requests per time: there is no rate to translate (not run)",
		First: "-", Idle: "-", Boundary: "-",
	})

	// Not modelled: documented mappings only.
	period, wholeSeconds := wholeSecondsOf(in.Rate)
	cell := fmt.Sprintf("CL.THROTTLE key %d %d %d", b-1, in.Rate.Permits, period)
	cellWhy := "max_burst counts the requests beyond the first (limit = max_burst + 1, tolerance (max_burst + 1)·T): a GCRA, so it would decide as the reference up to its clock"
	if !wholeSeconds {
		cell = fmt.Sprintf("CL.THROTTLE key %d <count> <period in whole seconds>", b-1)
		cellWhy += fmt.Sprintf("; its period is whole seconds, and %s is not a whole number of permits per whole seconds here", rate)
	}
	add(Translation{
		Library: "redis-cell", Lane: "redis-cell", Config: cell, Fit: FitNotModelled,
		Why: cellWhy + ". Not modelled: not run", First: "-", Idle: "-", Boundary: "-",
	})
	add(Translation{
		Library: "github.com/go-redis/redis_rate", Lane: "redis_rate",
		Config: fmt.Sprintf("redis_rate.Limit{Rate: %d, Burst: %d, Period: %s}", in.Rate.Permits, b, goDuration(in.Rate.Window)),
		Fit:    FitNotModelled,
		Why: fmt.Sprintf("Burst is the bucket's size (tolerance Burst·T, a GCRA in Redis); not PerSecond(%d), whose Burst is the rate. "+
			"Not modelled: not run", in.Rate.Permits),
		First: "-", Idle: "-", Boundary: "-",
	})
	add(Translation{
		Library: "github.com/throttled/throttled", Lane: "throttled",
		Config: fmt.Sprintf("throttled.RateQuota{MaxRate: throttled.PerDuration(%d, %s), MaxBurst: %d}", in.Rate.Permits, goDuration(in.Rate.Window), b-1),
		Fit:    FitNotModelled,
		Why:    "MaxBurst counts the requests beyond the first (limit MaxBurst + 1, a GCRA). Not modelled: not run",
		First:  "-", Idle: "-", Boundary: "-",
	})
	for i := range out {
		refuseUnbuildable(&out[i])
	}
	return out
}

// refuseUnbuildable turns a translation whose spec the kind refuses at this intent (Guava
// above 250,000 per second, a window past ratelab's range) into one that cannot be said, with
// the kind's own reason, and runs nothing for it.
func refuseUnbuildable(t *Translation) {
	if !t.Fit.Runs() {
		return
	}
	stack, err := engine.ParseStack(t.Spec)
	if err == nil {
		_, err = engine.NewStack(stack, virtualclock.New())
	}
	if err != nil {
		t.Why = fmt.Sprintf("ratelab's model of it refuses this intent: %s=%v (not run)", t.Spec, err)
		t.Fit, t.Spec, t.MaxWait = FitCannot, "", 0
		t.First, t.Idle, t.Boundary = "-", "-", "-"
	}
}

// nginxTranslation is limit_req's: rate in r/s or r/m, burst = the intent's burst − 1
// (nginx passes burst + 1), nodelay (else nginx holds the requests beyond the first).
func nginxTranslation(in Intent) Translation {
	b := in.Burst
	t := Translation{Library: "NGINX limit_req", Lane: "nginx", Boundary: "none: no windows"}
	var rate string
	exact := false
	why := ""
	if n, ok := in.wholePerSecond(); ok && n <= 1_000_000 {
		rate = fmt.Sprintf("%dr/s", n)
		exact = int64(time.Second)%n == 0
		if !exact {
			why = fmt.Sprintf("; T = 1s/%d is not a whole number of ns, which the reference rounds up: not exact", n)
		}
	} else if m, ok := in.wholePerMinute(); ok && m <= 1_000_000 {
		rate = fmt.Sprintf("%dr/m", m)
		why = fmt.Sprintf("; nginx keeps the rate in whole milli-requests per second, ⌊%d × 1000/60⌋ = %d, and truncates the drain at every request: not exact",
			m, m*1000/60)
	} else {
		m := max(int64(in.PerSecond()*60+0.5), 1)
		rate = fmt.Sprintf("%dr/m", m)
		why = fmt.Sprintf("; nginx takes whole requests per second or per minute, and %s is neither: the nearest, %s", in.Rate, rate)
	}
	spec := "nginx:rate=" + rate
	directive := "limit_req zone=z"
	if b > 1 {
		spec += fmt.Sprintf(",burst=%d,delay=nodelay", b-1)
		directive += fmt.Sprintf(" burst=%d nodelay", b-1)
	}
	t.Config = fmt.Sprintf("limit_req_zone $binary_remote_addr zone=z:10m rate=%s; %s;", rate, directive)
	t.Spec = spec
	t.Why = fmt.Sprintf("burst counts the requests beyond the first: burst=%d passes %d at once; nodelay, or nginx holds every request "+
		"beyond the first instead of passing it. nginx's clock is whole ms, so it is exact for arrivals on whole milliseconds", b-1, b) + why
	t.Fit = FitClosest
	if exact {
		t.Fit = FitExact
	}
	t.First = fmt.Sprintf("burst + 1 = %d at once (a key nginx has not seen is accounted at excess 0)", b)
	t.Idle = fmt.Sprintf("burst + 1 = %d at once after %s of idle", b, limiters.FormatDuration(in.BurstSpan()))
	return t
}

// sentinelTranslation is a throttling rule: sentinel's default (reject) counts a 1s window of
// two 500ms buckets and has no burst; throttling paces and queues up to max_queue, which with
// (burst − 1)·T admits the requests the bucket admits.
func sentinelTranslation(in Intent) Translation {
	b := in.Burst
	T := in.Interval()
	dur := limiters.FormatDuration
	queue := time.Duration(b-1) * T
	qps := in.PerSecond()
	t := Translation{Library: "Alibaba Sentinel (flow rule)", Lane: "sentinel", Boundary: "none: no windows"}
	thr := strconv.FormatFloat(qps, 'f', 3, 64)
	thr = strings.TrimRight(strings.TrimRight(thr, "0"), ".")
	if qps < 1 || qps > 1_000_000 {
		t.Config = "flow.Rule{Threshold: QPS, ControlBehavior: flow.Throttling}"
		t.Fit = FitCannot
		t.Why = fmt.Sprintf("a rule's threshold is requests per second from 1 to 1,000,000; %s is %s per second (not run)", in.Rate, trimFloat(qps))
		t.First, t.Idle, t.Boundary = "-", "-", "-"
		return t
	}
	maxQueue := queue.Truncate(time.Millisecond)
	spec := fmt.Sprintf("sentinel:threshold=%s,behavior=throttling", thr)
	if maxQueue > 0 {
		spec += ",max_queue=" + dur(maxQueue)
	}
	t.Spec = spec
	t.Config = fmt.Sprintf("flow.Rule{Resource: \"r\", Threshold: %s, ControlBehavior: flow.Throttling, MaxQueueingTimeMs: %d}", thr, maxQueue.Milliseconds())
	t.Why = fmt.Sprintf("sentinel's default, Reject, counts a 1s window of two 500ms buckets and has no burst. Throttling paces "+
		"requests one interval apart and queues those whose turn is at most MaxQueueingTimeMs away: (%d − 1) × %s = %s of queue "+
		"admits the requests the bucket of %d admits, each at its turn instead of at once", b, dur(T), dur(queue), b)
	t.Fit = FitLater
	if parsed, _ := strconv.ParseFloat(thr, 64); maxQueue != queue || parsed != qps {
		t.Fit = FitClosest
		t.Why += fmt.Sprintf("; but the threshold has at most three decimals and the queue is whole ms (%s, %s here): not exact", thr, dur(maxQueue))
	}
	t.First = fmt.Sprintf("1 at once, the next %d queued %s apart (up to %s)", b-1, dur(T), dur(maxQueue))
	t.Idle = t.First
	return t
}

// flash5TokenTranslation is Flash5's token bucket: limit = burst, window = burst × T, when its
// integer refill of ⌊limit·1000/windowMs⌋ milli-tokens per ms is the intent's rate.
func flash5TokenTranslation(in Intent) Translation {
	b := in.Burst
	dur := limiters.FormatDuration
	span := in.BurstSpan()
	windowMs, wholeMs := wholeMillis(span)
	refill := max(int64(b)*1000/windowMs, 1) // milli-tokens per ms = tokens per second
	t := Translation{Library: "Flash5 TOKEN_BUCKET", Lane: "flash5-token", Boundary: "none: no windows",
		Config: fmt.Sprintf(`guard.limit("ip", %d, %d, TimeUnit.MILLISECONDS, LimitStrategy.TOKEN_BUCKET)`, b, windowMs),
		Spec:   fmt.Sprintf("flash5-token:limit=%d,window=%s", b, dur(time.Duration(windowMs)*time.Millisecond))}
	n, whole := in.wholePerSecond()
	t.Why = fmt.Sprintf("capacity = limit = %d; the refill is a whole number of milli-tokens per ms, ⌊%d × 1000 / %d⌋ = %d, i.e. %d tokens per second",
		b, b, windowMs, refill, refill)
	if wholeMs && whole && n == refill && in.exactInterval() {
		t.Fit = FitExact
		t.Why += ": the intent's rate exactly. Its clock is whole ms, so it is exact for arrivals on whole milliseconds"
	} else {
		t.Fit = FitClosest
		t.Why += fmt.Sprintf(", where the intent is %s per second: a rate that is not a whole number of milli-tokens per ms cannot be said", trimFloat(in.PerSecond()))
	}
	t.First = fmt.Sprintf("full: %d at once", b)
	t.Idle = fmt.Sprintf("%d at once after %s of idle", b, dur(span))
	return t
}

// wholeMillis is d in whole ms, rounded up (at least 1), and whether it was whole.
func wholeMillis(d time.Duration) (ms int64, whole bool) {
	ms = max((int64(d)+int64(time.Millisecond)-1)/int64(time.Millisecond), 1)
	return ms, d == time.Duration(ms)*time.Millisecond
}

// wholeSecondsOf is the rate's window in whole seconds, if it is.
func wholeSecondsOf(r limiters.Rate) (int64, bool) {
	return int64(r.Window / time.Second), r.Window%time.Second == 0
}

// goDuration writes d as Go code: "time.Second", "200 * time.Millisecond".
func goDuration(d time.Duration) string {
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{time.Hour, "time.Hour"}, {time.Minute, "time.Minute"}, {time.Second, "time.Second"},
		{time.Millisecond, "time.Millisecond"}, {time.Microsecond, "time.Microsecond"}} {
		if d%u.d == 0 {
			if d == u.d {
				return u.name
			}
			return fmt.Sprintf("%d * %s", d/u.d, u.name)
		}
	}
	return fmt.Sprintf("%d * time.Nanosecond", int64(d))
}

// trimFloat prints x with at most 6 significant digits and no trailing zeros: 100, 0.5.
func trimFloat(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
