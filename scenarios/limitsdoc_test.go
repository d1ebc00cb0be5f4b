package scenarios

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/clients"
	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"
)

var update = flag.Bool("update", false, "rewrite docs/LIMITS.md from the validation code")

const limitsFile = "../docs/LIMITS.md"

// docs/LIMITS.md is what the validation code accepts: it is generated from the constants
// validation uses, and the limiter ranges it states are checked against each kind's Validate
// (TestLimiterRangesAreTheValidation). A changed range without it fails here.
func TestLimitsDocIsCurrent(t *testing.T) {
	want := limitsMarkdown()
	got, err := os.ReadFile(limitsFile)
	if err == nil && string(got) == want {
		return
	}
	if !*update {
		t.Fatalf("docs/LIMITS.md is stale (or missing: %v); rewrite it with: go test ./scenarios -run TestLimitsDoc -update", err)
	}
	require.NoError(t, os.WriteFile(limitsFile, []byte(want), 0o644))
}

// limiterRange is one row of the limiter table, with specs at and just past its edges.
type limiterRange struct {
	kind     limiters.Kind
	field    string
	accepted string
	why      string
	valid    []string // accepted by ParseSpec and Validate
	invalid  []string // refused by one of them
}

// maxTimeNS is 2^62 ns written as a spec's duration.
var maxTimeNS = fmt.Sprintf("%dns", int64(engine.MaxTime))

func limiterRanges() []limiterRange {
	const (
		span   = "at most 2^62 ns"
		window = "a window (and a tolerance) is added to times up to 2^62 ns: the sum must not overflow int64"
		limit  = "1 to 2^32−1"
		packed = "the count shares one 64-bit word with the window number, updated in one atomic step"
		short  = "at least 2^(bits(limit)−1) ns (1ns up to limit 1, 2ns up to 3, …, 2.15s for 2^32−1)"
		why    = "the window number, in the word's remaining bits, stays unambiguous for 146 years: only needed above about one permit per ns"
		perNS  = "one permit per nanosecond is the clock's resolution"
	)
	own := []limiterRange{
		{limiters.KindTokenBucket, "capacity", "at least 1, and capacity × T " + span + " (T = window/permits, rounded up to a whole ns)",
			"capacity × T is the bucket's tolerance, a time: " + window,
			[]string{"token-bucket:capacity=1,rate=1/1s", "token-bucket:capacity=4611686018427387904,rate=1/1ns"},
			[]string{"token-bucket:capacity=0,rate=1/1s", "token-bucket:capacity=4611686018427387905,rate=1/1ns", "token-bucket:capacity=2,rate=1/" + maxTimeNS}},
		{limiters.KindTokenBucket, "rate", "permits/window: permits at least 1, window positive, T = window/permits at least 1 ns", perNS,
			[]string{"token-bucket:capacity=1,rate=1/1ns", "token-bucket:capacity=1,rate=1000/1us"},
			[]string{"token-bucket:capacity=1,rate=2/1ns", "token-bucket:capacity=1,rate=0/1s", "token-bucket:capacity=1,rate=1/0s"}},
		{limiters.KindLeakyBucket, "rate", "permits/window with T = window/permits from 1 ns to 2^62 ns", perNS + "; " + window,
			[]string{"leaky-bucket:rate=1/1ns", "leaky-bucket:rate=1/" + maxTimeNS},
			[]string{"leaky-bucket:rate=2/1ns", fmt.Sprintf("leaky-bucket:rate=1/%dns", int64(engine.MaxTime)+1)}},
		{limiters.KindSlidingWindow, "limit", limit, packed,
			[]string{"sliding-window:limit=1,window=1ns,slots=1", "sliding-window:limit=4294967295,window=2147483648ns,slots=1"},
			[]string{"sliding-window:limit=0,window=1s", "sliding-window:limit=4294967296,window=4294967296ns,slots=1"}},
		{limiters.KindSlidingWindow, "window", "positive, " + span + ", and " + short, window + "; " + why,
			[]string{"sliding-window:limit=1,window=" + maxTimeNS + ",slots=1", "sliding-window:limit=3,window=2ns,slots=1"},
			[]string{fmt.Sprintf("sliding-window:limit=1,window=%dns,slots=1", int64(engine.MaxTime)+1), "sliding-window:limit=3,window=1ns,slots=1",
				"sliding-window:limit=4294967295,window=2147483647ns,slots=1"}},
		{limiters.KindSlidingWindow, "slots", fmt.Sprintf("1 to 4096 (default %d), dividing the window into whole nanoseconds", limiters.DefaultSlots),
			"the slots are the window's memory, and a slot's position fits in 12 bits",
			[]string{"sliding-window:limit=1,window=4096ns,slots=4096", "sliding-window:limit=1,window=1s,slots=8", "sliding-window:limit=1,window=1s,slots=1"},
			[]string{"sliding-window:limit=1,window=4097ns,slots=4097", "sliding-window:limit=1,window=1s,slots=7", "sliding-window:limit=1,window=1s,slots=0"}},
		{limiters.KindFixedWindow, "limit", limit, packed,
			[]string{"fixed-window:limit=1,window=1ns", "fixed-window:limit=4294967295,window=2147483648ns"},
			[]string{"fixed-window:limit=0,window=1s", "fixed-window:limit=4294967296,window=4294967296ns"}},
		{limiters.KindFixedWindow, "window", "positive, " + span + ", and " + short, window + "; " + why,
			[]string{"fixed-window:limit=1,window=" + maxTimeNS, "fixed-window:limit=3,window=2ns"},
			[]string{fmt.Sprintf("fixed-window:limit=1,window=%dns", int64(engine.MaxTime)+1), "fixed-window:limit=3,window=1ns"}},
		{limiters.KindWarmUpTokenBucket, "capacity", fmt.Sprintf("at least 1, and capacity × %dT %s", limiters.ColdFactor, span),
			"a request's largest cost is a full burst while cold: " + window,
			[]string{"warm-up:capacity=1,rate=1/1s,warmup=1s", "warm-up:capacity=1537228672809129301,rate=1/1ns,warmup=1s"},
			[]string{"warm-up:capacity=0,rate=1/1s,warmup=1s", "warm-up:capacity=1537228672809129302,rate=1/1ns,warmup=1s"}},
		{limiters.KindWarmUpTokenBucket, "rate", fmt.Sprintf("as the token bucket's, and the cold interval %dT %s", limiters.ColdFactor, span),
			perNS + "; " + window,
			[]string{"warm-up:capacity=1,rate=1/1ns,warmup=1s", "warm-up:capacity=1,rate=1/1537228672809129301ns,warmup=1s"},
			[]string{"warm-up:capacity=1,rate=2/1ns,warmup=1s", "warm-up:capacity=1,rate=1/1537228672809129302ns,warmup=1s"}},
		{limiters.KindWarmUpTokenBucket, "warmup", "positive, " + span, window,
			[]string{"warm-up:capacity=1,rate=1/1s,warmup=1ns", "warm-up:capacity=1,rate=1/1s,warmup=" + maxTimeNS},
			[]string{"warm-up:capacity=1,rate=1/1s,warmup=0s", fmt.Sprintf("warm-up:capacity=1,rate=1/1s,warmup=%dns", int64(engine.MaxTime)+1)}},
		{limiters.KindConcurrency, "max", "1 to 2^31−1", "the permits held are counted in 32 bits",
			[]string{"concurrency:max=1", "concurrency:max=2147483647"},
			[]string{"concurrency:max=0", "concurrency:max=2147483648"}},
	}
	peerRows := []limiterRange{
		{peers.KindFlash5Fixed, "limit", limit, "Flash5 counts in 32 bits",
			[]string{"flash5-fixed:limit=1,window=1ms", "flash5-fixed:limit=4294967295,window=1ms"},
			[]string{"flash5-fixed:limit=0,window=1ms", "flash5-fixed:limit=4294967296,window=1ms"}},
		{peers.KindFlash5Fixed, "window", "a whole number of milliseconds, from 1ms to 2^62 ns", "Flash5's clock counts milliseconds; " + window,
			[]string{"flash5-fixed:limit=1,window=1ms", "flash5-fixed:limit=1,window=4611686018427ms"},
			[]string{"flash5-fixed:limit=1,window=1500us", "flash5-fixed:limit=1,window=4611686018428ms", "flash5-fixed:limit=1,window=999us"}},
		{peers.KindFlash5Fixed, "offset", "a whole number of milliseconds from 0 to 2^62 ns (default 0)", "as the window",
			[]string{"flash5-fixed:limit=1,window=1ms,offset=0ms", "flash5-fixed:limit=1,window=1ms,offset=4611686018427ms"},
			[]string{"flash5-fixed:limit=1,window=1ms,offset=-1ms", "flash5-fixed:limit=1,window=1ms,offset=1500us", "flash5-fixed:limit=1,window=1ms,offset=4611686018428ms"}},
		{peers.KindFlash5Token, "limit", "1 to 2147483", "the capacity in milli-tokens, limit × 1000, must fit a Java int",
			[]string{"flash5-token:limit=1,window=1ms", "flash5-token:limit=2147483,window=1ms"},
			[]string{"flash5-token:limit=0,window=1ms", "flash5-token:limit=2147484,window=1ms"}},
		{peers.KindFlash5Token, "window", "a whole number of milliseconds, from 1ms to 2^62 ns", "Flash5's clock counts milliseconds",
			[]string{"flash5-token:limit=1,window=1ms", "flash5-token:limit=1,window=4611686018427ms"},
			[]string{"flash5-token:limit=1,window=1500us", "flash5-token:limit=1,window=4611686018428ms", "flash5-token:limit=1,window=999us"}},
		{peers.KindXTimeRate, "rate", "permits/window as the token bucket's; the library keeps it as a float64 per second", perNS,
			[]string{"x-time-rate:rate=1/1ns,burst=1", "x-time-rate:rate=1/1h,burst=1"},
			[]string{"x-time-rate:rate=2/1ns,burst=1", "x-time-rate:rate=0/1s,burst=1"}},
		{peers.KindXTimeRate, "burst", "1 to 2^53", "the library counts tokens in a float64, exact up to 2^53",
			[]string{"x-time-rate:rate=1/1s,burst=1", "x-time-rate:rate=1/1s,burst=9007199254740992"},
			[]string{"x-time-rate:rate=1/1s,burst=0", "x-time-rate:rate=1/1s,burst=9007199254740993"}},
		{peers.KindXTimeRate, "mode", "try (AllowN; ReserveN within a timeout) or wait (ReserveN)", "the library's two calls",
			[]string{"x-time-rate:rate=1/1s,burst=1,mode=try", "x-time-rate:rate=1/1s,burst=1,mode=wait"},
			[]string{"x-time-rate:rate=1/1s,burst=1,mode=block"}},
		{peers.KindXTimeRate, "timeout", "0 to 2^62 ns, with mode=try only", "a wait is added to times up to 2^62 ns; mode=wait waits as long as ReserveN says",
			[]string{"x-time-rate:rate=1/1s,burst=1,timeout=1ms", "x-time-rate:rate=1/1s,burst=1,timeout=" + maxTimeNS},
			[]string{fmt.Sprintf("x-time-rate:rate=1/1s,burst=1,timeout=%dns", int64(engine.MaxTime)+1), "x-time-rate:rate=1/1s,burst=1,mode=wait,timeout=1ms"}},
		{peers.KindUber, "rate", "permits/window as the token bucket's", perNS,
			[]string{"uber:rate=1/1ns", "uber:rate=1/1h"},
			[]string{"uber:rate=2/1ns", "uber:rate=0/1s"}},
		{peers.KindUber, "slack", "0 (WithoutSlack) up to slack × the interval of 2^59 ns", "the library keeps its slack as a time in an int64 beside the clock's",
			[]string{"uber:rate=1/1s,slack=0", "uber:rate=1/1s,slack=576460752"},
			[]string{"uber:rate=1/1s,slack=-1", "uber:rate=1/1s,slack=576460753"}},
		{peers.KindUber, "mode", "wait (Take) only", "go.uber.org/ratelimit has no try: Take always admits",
			[]string{"uber:rate=1/1s,mode=wait"},
			[]string{"uber:rate=1/1s,mode=try"}},
		{peers.KindNginx, "rate", "1 to 1000000 r/s or r/m", "nginx's own rates; R is kept in milli-requests per second",
			[]string{"nginx:rate=1r/m", "nginx:rate=1000000r/s"},
			[]string{"nginx:rate=0r/s", "nginx:rate=1000001r/s"}},
		{peers.KindNginx, "burst", "1 to 1000000; left out, 0 (none)", "ratelab's bound, far above any nginx configuration in use; nginx itself refuses burst=0 (\"invalid burst value\") and means none by leaving it out",
			[]string{"nginx:rate=1r/s,burst=1", "nginx:rate=1r/s,burst=1000000", "nginx:rate=1r/s"},
			[]string{"nginx:rate=1r/s,burst=1000001", "nginx:rate=1r/s,burst=0"}},
		{peers.KindNginx, "delay", "1 to 1000000, or nodelay (not both); left out, 0", "as burst: nginx refuses delay=0 (\"invalid delay value\")",
			[]string{"nginx:rate=1r/s,burst=5,delay=nodelay", "nginx:rate=1r/s,burst=5,delay=1", "nginx:rate=1r/s,burst=5,delay=1000000"},
			[]string{"nginx:rate=1r/s,burst=5,delay=1000001", "nginx:rate=1r/s,burst=5,delay=0"}},
		{peers.KindGuavaBursty, "rate", "as the token bucket's, at most 250000 per second", "Guava charges whole microseconds: a shorter interval loses too much of a permit's cost",
			[]string{"guava-bursty:rate=250000/1s", "guava-bursty:rate=1/1h"},
			[]string{"guava-bursty:rate=250001/1s", "guava-bursty:rate=0/1s"}},
		{peers.KindGuavaBursty, "max_burst", "positive, " + span, "maxBurstSeconds × rate is the stored permits' maximum; " + window,
			[]string{"guava-bursty:rate=1/1s,max_burst=1ns", "guava-bursty:rate=1/1s,max_burst=" + maxTimeNS},
			[]string{fmt.Sprintf("guava-bursty:rate=1/1s,max_burst=%dns", int64(engine.MaxTime)+1)}},
		{peers.KindGuavaBursty, "mode", "try (tryAcquire) or wait (acquire)", "Guava's two calls",
			[]string{"guava-bursty:rate=1/1s,mode=try", "guava-bursty:rate=1/1s,mode=wait"},
			[]string{"guava-bursty:rate=1/1s,mode=block"}},
		{peers.KindGuavaBursty, "timeout", "0 to 2^62 ns − 1, with mode=try only", "tryAcquire's timeout; acquire waits as long as it takes: " +
			"2^62 ns is its wait (MaxWaitForever), and the real Guava's tryAcquire with it still refuses a ticket further away",
			[]string{"guava-bursty:rate=1/1s,timeout=1ms", fmt.Sprintf("guava-bursty:rate=1/1s,timeout=%dns", int64(engine.MaxTime)-1)},
			[]string{"guava-bursty:rate=1/1s,timeout=" + maxTimeNS, "guava-bursty:rate=1/1s,mode=wait,timeout=1ms"}},
		{peers.KindGuavaWarmUp, "rate", "as guava-bursty's", "as guava-bursty's",
			[]string{"guava-warmup:rate=250000/1s,warmup=1s", "guava-warmup:rate=1/1h,warmup=1s"},
			[]string{"guava-warmup:rate=250001/1s,warmup=1s"}},
		{peers.KindGuavaWarmUp, "warmup", "a whole number of microseconds, from 1µs to 2^62 ns", "Guava counts microseconds, and a warm-up of 0 makes its cool-down 0/0",
			[]string{"guava-warmup:rate=1/1s,warmup=1us", "guava-warmup:rate=1/1s,warmup=4611686018427387us"},
			[]string{"guava-warmup:rate=1/1s,warmup=1500ns", fmt.Sprintf("guava-warmup:rate=1/1s,warmup=%dns", int64(engine.MaxTime)+1)}},
		{peers.KindGuavaWarmUp, "cold_factor", "a finite number, at least 1 (default 3)", "below 1 stored permits would cost less than fresh ones",
			[]string{"guava-warmup:rate=1/1s,warmup=1s,cold_factor=1", "guava-warmup:rate=1/1s,warmup=1s,cold_factor=10"},
			[]string{"guava-warmup:rate=1/1s,warmup=1s,cold_factor=0.5"}},
		{peers.KindGuavaWarmUp, "mode", "as guava-bursty's", "as guava-bursty's",
			[]string{"guava-warmup:rate=1/1s,warmup=1s,mode=wait"},
			[]string{"guava-warmup:rate=1/1s,warmup=1s,mode=block"}},
		{peers.KindGuavaWarmUp, "timeout", "as guava-bursty's", "as guava-bursty's",
			[]string{"guava-warmup:rate=1/1s,warmup=1s,timeout=1ms"},
			[]string{"guava-warmup:rate=1/1s,warmup=1s,mode=wait,timeout=1ms", "guava-warmup:rate=1/1s,warmup=1s,timeout=" + maxTimeNS}},
		{peers.KindSentinel, "threshold", "1 to 1000000, at most three decimals", "below 1 sentinel passes nothing: one request is more than the threshold",
			[]string{"sentinel:threshold=1", "sentinel:threshold=1000000", "sentinel:threshold=2.125"},
			[]string{"sentinel:threshold=0.999", "sentinel:threshold=1000001", "sentinel:threshold=1.0005"}},
		{peers.KindSentinel, "strategy", "direct or warmup", "sentinel's TokenCalculateStrategy (its memory-adaptive one is not modelled)",
			[]string{"sentinel:threshold=10,strategy=direct", "sentinel:threshold=10,strategy=warmup,warmup=10s"},
			[]string{"sentinel:threshold=10,strategy=adaptive"}},
		{peers.KindSentinel, "behavior", "reject or throttling", "sentinel's ControlBehavior",
			[]string{"sentinel:threshold=10,behavior=reject", "sentinel:threshold=10,behavior=throttling"},
			[]string{"sentinel:threshold=10,behavior=queue"}},
		{peers.KindSentinel, "warmup", "whole seconds from 1s to 1000000s, required with strategy=warmup and only then; " +
			"threshold × warmup large enough that maxToken exceeds warningToken",
			"WarmUpPeriodSec; where the two token counts coincide sentinel's slope is 1/0 and a cold rule admits everything",
			[]string{"sentinel:threshold=10,strategy=warmup,warmup=1s", "sentinel:threshold=10,strategy=warmup,warmup=1000000s"},
			[]string{"sentinel:threshold=10,strategy=warmup", "sentinel:threshold=10,strategy=warmup,warmup=1500ms",
				"sentinel:threshold=1,strategy=warmup,warmup=1s", "sentinel:threshold=10,warmup=1s"}},
		{peers.KindSentinel, "cold_factor", "2 to 1000 (default 3), with strategy=warmup", "WarmUpColdFactor: sentinel refuses 1",
			[]string{"sentinel:threshold=10,strategy=warmup,warmup=1s,cold_factor=2", "sentinel:threshold=1000,strategy=warmup,warmup=1s,cold_factor=1000"},
			[]string{"sentinel:threshold=10,strategy=warmup,warmup=1s,cold_factor=1", "sentinel:threshold=10,cold_factor=4"}},
		{peers.KindSentinel, "max_queue", "whole ms from 0 to 4294967295ms, with behavior=throttling; at most 8s with strategy=warmup",
			"MaxQueueingTimeMs, a uint32; a warm-up's queued pass is counted when it leaves the queue, and further ahead it would land in a bucket of the 10s leap array still read",
			[]string{"sentinel:threshold=10,behavior=throttling,max_queue=4294967295ms", "sentinel:threshold=10,strategy=warmup,warmup=2s,behavior=throttling,max_queue=8s"},
			[]string{"sentinel:threshold=10,behavior=throttling,max_queue=4294967296ms", "sentinel:threshold=10,max_queue=1s",
				"sentinel:threshold=10,strategy=warmup,warmup=2s,behavior=throttling,max_queue=8001ms"}},
		{peers.KindSentinel, "offset", "0 to less than 10s", "where the run starts within the leap array's 10s",
			[]string{"sentinel:threshold=10,offset=0s", "sentinel:threshold=10,offset=9999ms"},
			[]string{"sentinel:threshold=10,offset=10s"}},
		{peers.KindResilience4j, "limit", "1 to 2^30", "resilience4j adds the limit to its int permissions: the sum must not overflow",
			[]string{"resilience4j:limit=1,period=1s", "resilience4j:limit=1073741824,period=2h"},
			[]string{"resilience4j:limit=0,period=1s", "resilience4j:limit=1073741825,period=2h"}},
		{peers.KindResilience4j, "period", "at least limit ns, at most 2^60 ns", perNS + "; a reservation's wait, cycles × period, stays within int64",
			[]string{"resilience4j:limit=50,period=50ns", "resilience4j:limit=1,period=1152921504606846976ns"},
			[]string{"resilience4j:limit=50,period=49ns", "resilience4j:limit=1,period=1152921504606846977ns"}},
		{peers.KindResilience4j, "timeout", "0 to 2^62 ns, with mode=try only (default 5s, RateLimiterConfig's timeoutDuration)", "a wait is added to times up to 2^62 ns; mode=wait waits as long as it takes",
			[]string{"resilience4j:limit=1,period=1s,timeout=0s", "resilience4j:limit=1,period=1s,timeout=" + maxTimeNS},
			[]string{fmt.Sprintf("resilience4j:limit=1,period=1s,timeout=%dns", int64(engine.MaxTime)+1), "resilience4j:limit=1,period=1s,mode=wait,timeout=1ms"}},
		{peers.KindResilience4j, "mode", "try (acquirePermission within the timeout) or wait", "a caller that waits as long as it takes is a timeout beyond any wait",
			[]string{"resilience4j:limit=1,period=1s,mode=try", "resilience4j:limit=1,period=1s,mode=wait"},
			[]string{"resilience4j:limit=1,period=1s,mode=block"}},
		{peers.KindTwoCounter, "limit", "1 to 2^31−1", "both counts share one 64-bit word with the period index",
			[]string{"two-counter:limit=1,window=1ns", "two-counter:limit=2147483647,window=1152921504606846976ns"},
			[]string{"two-counter:limit=0,window=1s", "two-counter:limit=2147483648,window=2000000000000000000ns"}},
		{peers.KindTwoCounter, "window", "at least 2^(2·bits(limit)−2) ns (1ns for limit 1, 4.1µs for 100, 67ms for 10000, 1.07s for 65535), at most 2^62 ns",
			"the period index keeps the word's other 64 − 2·bits(limit) bits: with this period every index below 2^62 ns fits",
			[]string{"two-counter:limit=100,window=4096ns", "two-counter:limit=65535,window=1073741824ns", "two-counter:limit=1,window=" + maxTimeNS},
			[]string{"two-counter:limit=100,window=4095ns", "two-counter:limit=100000,window=1s", fmt.Sprintf("two-counter:limit=1,window=%dns", int64(engine.MaxTime)+1)}},
	}
	// In registry order: ratelab's own (the adaptive ones last), the peers, failsafe-adaptive.
	rows := append(append(append(own, adaptiveRanges()...), envoyRanges()...), peerRows...)
	return append(rows, failsafeRanges()...)
}

// The limiter table says what each kind's Validate does: specs at its edges are accepted,
// specs just past them refused, and every field of every kind has a row. A row whose range
// opens with two whole numbers ("1 to 1000000") has a valid spec at each of them, so a
// stated edge the code refuses (nginx's burst documented from 0) fails here.
func TestLimiterRangesAreTheValidation(t *testing.T) {
	rows := map[string]bool{}
	plainRange := regexp.MustCompile(`^(\d+) to (\d+)(?:$|[ ,;(])`)
	for _, r := range limiterRanges() {
		rows[string(r.kind)+"."+r.field] = true
		if edges := plainRange.FindStringSubmatch(r.accepted); edges != nil {
			for _, edge := range edges[1:] {
				at := regexp.MustCompile(`[:,]` + regexp.QuoteMeta(r.field+"="+edge) + `(\D|$)`)
				found := false
				for _, text := range r.valid {
					found = found || at.MatchString(text)
				}
				assert.True(t, found, "%s.%s: the range %q states %s, but no valid spec has %s=%s", r.kind, r.field, r.accepted, edge, r.field, edge)
			}
		}
		for _, text := range r.valid {
			spec, err := limiters.ParseSpec(text)
			if assert.NoError(t, err, text) {
				assert.NoError(t, spec.Validate(), "%s.%s: %s is accepted", r.kind, r.field, text)
			}
		}
		for _, text := range r.invalid {
			spec, err := limiters.ParseSpec(text)
			if err == nil {
				assert.Error(t, spec.Validate(), "%s.%s: %s is refused", r.kind, r.field, text)
			}
		}
	}
	for _, k := range limiters.Kinds() {
		for _, f := range k.Fields {
			assert.True(t, rows[string(k.Kind)+"."+f.Name], "docs/LIMITS.md has no row for %s's %s", k.Kind, f.Name)
		}
	}
}

func limitsMarkdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	table := func(rows ...[3]string) {
		p("| Value | Accepted | Why |\n|---|---|---|\n")
		for _, r := range rows {
			p("| %s | %s | %s |\n", r[0], r[1], r[2])
		}
		p("\n")
	}
	maxTime := fmt.Sprintf("2^62 ns = %v, about 146 years", engine.MaxTime)
	p(`# Limits

Every range ratelab accepts, and why. A value outside its range is refused before the run starts,
as ` + "`file:line:col: field: reason`" + ` for a scenario file, with the line for a trace, or with the
flag's name; nothing past these ranges reaches the engine. Flags that set scenario values
(` + "`--horizon`, `--bins`, `--seed`, `--limiter`" + `) are checked against the same ranges.

<!-- Generated from the validation code: go test ./scenarios -run TestLimitsDoc -update -->

## Times and durations

`)
	table(
		[3]string{"every time and duration: `horizon`, `from`, `until`, `on`, `off`, `period`, a burst's `at` and `spread`, " +
			"an arrival's `at`, the client's `delay`, `max_delay`, `timeout` and `max_elapsed`, a phase's `from`, a service time's `mean`, " +
			"`median`, `min` and `max`, `windows`, a trace's times, `--horizon`",
			"from 0 to less than " + maxTime,
			"two such values add up without overflowing int64 (2^63 ns, 292 years), so no time the engine derives " +
				"(an arrival's from + at, now + a delay) wraps into the past"},
		[3]string{"an arrival's or a burst's `from` + `at`", "less than 2^62 ns", "it is the arrival's time"},
		[3]string{"each limiter stage's window (`window`, or a rate's window: `rate=1000/2000000h`)", "less than 2^62 ns in a scenario",
			"the guarantee meters measure over it, and a bound over a longer window overflows"},
		[3]string{"`horizon`", "positive", ""},
		[3]string{"`until`", "0 (the horizon) or after `from`", "the source's active period must not be empty"},
		[3]string{"`on`, `period`", "positive", ""},
		[3]string{"`delay`", "positive for retry, backoff, retry-after and retry-after-header; for aws-standard, retryablehttp, " +
			"retryablehttp-linear and cenkalti-backoff positive, or 0 or absent for the library's default (1s, 1s, 1s, 500ms)",
			"a retry never runs at the instant of its refusal"},
		[3]string{"`max_delay`", "0 or more; absent for a library policy: its default (20s, 30s, 30s, 60s)", "0 means no cap for backoff and retry-after-header"},
		[3]string{"`max_elapsed`", fmt.Sprintf("cenkalti-backoff only: positive, or 0 or absent for the library's %v", clients.CenkaltiMaxElapsedTime),
			"Retry gives up when the time since the first attempt plus the next wait would pass it"},
		[3]string{"`timeout`", "positive for queue", ""},
		[3]string{"`downstream.phases`", "the first `from` 0, then increasing", "a phase is in force from its `from` to the next"},
		[3]string{"a `uniform` service time", "`min` at most `max`", ""},
		[3]string{"bursts, arrivals", "in time order", ""},
	)
	p("## Rates\n\n")
	table(
		[3]string{"`rate`, `rate_to`", fmt.Sprintf("0 to %s requests per second; `rate` positive for constant, poisson, on-off and sine",
			strings.Replace(fmt.Sprintf("%g", engine.MaxRate), "e+0", "e", 1)),
			"one request per nanosecond is the clock's resolution; a rate as low as 1e-10 is fine: an arrival it puts past 2^62 ns never comes"},
		[3]string{"a ramp's `rate` and `rate_to`", "not both 0", "a ramp from 0 to 0 offers nothing"},
		[3]string{"`amplitude`", "0 to `rate`", "the sine's rate, rate ± amplitude, cannot go negative"},
	)
	p("## Counts\n\n")
	table(
		[3]string{"`permits` (a source's, an arrival's, a trace row's)", fmt.Sprintf("1 to %d (2^31−1; 0 or absent: 1)", engine.MaxPermits),
			fmt.Sprintf("the permits of up to 2^32 requests (a trace holds at most %d rows) add up exactly in an int64", int64(engine.MaxTraceRows))},
		[3]string{"`bins`, `--bins`", fmt.Sprintf("1 to %d (0 or absent: %d)", engine.MaxBins, engine.DefaultBins),
			"each lane keeps a bin of counters, and a reading of every stage, per bin; a horizon shorter than the bins in nanoseconds gets fewer"},
		[3]string{"a burst's `count`", "at least 1", "the arrivals are made one at a time, as the run reaches them"},
		[3]string{"`max_attempts`", "at least 1 for retry, backoff, retry-after and retry-after-header (attempts in all, the first included); " +
			fmt.Sprintf("for aws-standard, retryablehttp, retryablehttp-linear and cenkalti-backoff 0 or absent is the library's default (%d, %d, %d, no limit)",
				clients.AWSMaxAttempts, clients.RetryableMaxAttempts, clients.RetryableMaxAttempts), ""},
		[3]string{"`retry_quota`", fmt.Sprintf("aws-standard only: at least 1 token, or `none`; absent: the SDK's %d", clients.AWSQuotaTokens),
			fmt.Sprintf("one quota per lane, as one SDK client's callers share one: a throttled retry costs %d tokens and fails at once without them", clients.AWSThrottleCost)},
		[3]string{"`queue_size`", "at least 1 for queue", ""},
		[3]string{"`pool`", "0 (unlimited) or more", ""},
		[3]string{"`sigma`", fmt.Sprintf("more than 0, at most %v", engine.MaxSigma),
			"e^(5σ) already spans ten orders of magnitude; drawn service times are capped at 2^62 ns"},
		[3]string{"`seed`, `--seed`", "decimal digits, 0 to 2^64−1, in a scenario file and on the command line alike; hex, octal and binary (`0x1f`), a leading zero (`010`) and `_` (`1_000`) are refused, saying what they would have meant (`0x1f`: " + refusal(ParseSeed("0x1f")) + ")",
			"Go's flag package read `--seed 0x1f` as 31 and `010` as 8, where the scenario file refused the one and read the other as 10: a seed that means one thing in one place and another elsewhere is refused everywhere"},
		[3]string{"`trace: true`", fmt.Sprintf("keeps the first %d decisions of each lane", engine.TraceLimit),
			"later ones are dropped and the lane says its trace was truncated"},
	)
	p("## Budgets\n\n")
	table(
		[3]string{"a run's events (`run`, `plot`, `sweep` (all its cells), `fit SCENARIO`: `--max-events`)", fmt.Sprintf("at most %s by default (0: no limit)", engine.SI(engine.DefaultBudget.MaxEvents)),
			fmt.Sprintf("estimated before the run from its sources, clients and lanes (about %s an event on one core): "+
				"a horizon of 100000h is refused at once instead of running for days", limiters.FormatDuration(engine.DefaultEventCost))},
		[3]string{"a run's memory (`--max-memory`)", fmt.Sprintf("at most %s by default (0: no limit)", engine.Bytes(engine.DefaultBudget.MaxMemory)),
			"estimated from its bins, trace, window meters (what a meter holds is bounded by the lane's limit in its window) and key tables"},
	)
	p("## Traces\n\n")
	table(
		[3]string{"`t_ns`", "a whole number of nanoseconds from 0 to less than 2^62", "as every time"},
		[3]string{"`t`, decimal seconds", "at most 9 decimal places, less than 2^62 ns", "nanoseconds are the clock's resolution"},
		[3]string{"`t`, RFC 3339", "less than 2^62 ns after the first row's time", "times are taken relative to the first row"},
		[3]string{"rows", fmt.Sprintf("in time order, at most %d", int64(engine.MaxTraceRows)), "so that their permits add up exactly"},
		[3]string{"`permits`", fmt.Sprintf("1 to %d", engine.MaxPermits), "as a source's"},
	)
	p("## Scenario files\n\n")
	table(
		[3]string{"size", fmt.Sprintf("at most %d bytes (16 MiB)", MaxFileSize),
			"far beyond any hand-written scenario; a wrong path (a log, a disk image) is refused at once instead of read into memory"},
		[3]string{"kind of file", "a regular file (a symlink to one is followed), whatever it is called: `s.yaml`, or a path of another name, which is read to see whether it is a scenario file; a scenario from a pipe comes on standard input, `-`",
			"a directory, a FIFO, a device or a socket is refused before it is opened, by any name (a FIFO would block the open, a device never ends)"},
		[3]string{"YAML documents", "one (an empty one after it, such as a trailing `---`, is ignored)",
			"a second document is refused where it starts rather than silently ignored"},
		[3]string{"anchors and aliases", fmt.Sprintf("`&name`, `*name` and merge keys `<<: *name`, adding at most %d nodes once expanded", MaxAliasNodes),
			"a document whose aliases nest into billions of nodes (an alias bomb) is refused in time linear in its size; an alias inside the node it names is refused"},
	)
	p("## Limiter specs\n\n")
	_, trailing := engine.ParseStack("token-bucket:capacity=10,rate=100/1s,")
	_, plus := engine.ParseStack("token-bucket:capacity=10,rate=100/1s+")
	p("A spec is `KIND:FIELD=VALUE,…`, a stack specs joined by `+`, a keyed stage `keys(max=N,…):SPEC`, the\n")
	p("same in a scenario file and in every `--limiter`. Fields and stages are joined by single commas and\n")
	p("`+`: an empty one (a trailing comma or `+`, two in a row, one at the start) is refused rather than\n")
	p("skipped, as a field lost in an edit may be: `%s`; `%s`.\n\n", trailing, plus)
	p("Each kind's `Validate` (and the constructor behind it) refuses what is outside these ranges; in a\n")
	p("scenario, a stage's window must also be less than 2^62 ns (above).\n\n")
	p("| Kind | Field | Accepted | Why |\n|---|---|---|---|\n")
	for _, r := range limiterRanges() {
		p("| `%s` | `%s` | %s | %s |\n", r.kind, r.field, r.accepted, r.why)
	}
	return b.String()
}

// refusal is the reason err gives, for a row that quotes the code's own words.
func refusal(_ uint64, err error) string {
	if err == nil {
		panic("limits doc: the example is accepted")
	}
	return err.Error()
}
