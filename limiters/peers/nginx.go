package peers

import (
	"fmt"
	"github.com/ratelab/ratelab/limiters"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ratelab/ratelab/limiters/internal/bound"
)

// KindNginx is NGINX limit_req's name in specs.
const KindNginx limiters.Kind = "nginx"

// FamilyNginx is NGINX's request limiting (ngx_http_limit_req_module).
const FamilyNginx limiters.Family = "nginx"

// Nginx is a model, decision for decision, of one key of NGINX's limit_req
// (ngx_http_limit_req_module, the same code from 1.15.7 to today; checked against a real
// nginx 1.22 by TestNginxAgainstRealNginx):
//
//	limit_req_zone $key zone=z:1m rate=10r/s;
//	limit_req zone=z burst=5 delay=2;   ⇔   nginx:rate=10r/s,burst=5,delay=2
//
// nginx keeps, per key, excess in milli-requests and last, the millisecond of the last
// request it let through (ngx_current_msec: the clock floored to whole ms). The rate is kept
// as an integer R in milli-requests per second: 10r/s is R = 10000, and r/m is divided by 60
// with truncation, so 1r/m is R = 16 — one request every 62.5s, not 60s. A request at ms now,
// elapsed = now − last (whole ms), is accounted at
//
//	excess' = max(0, excess − ⌊R·elapsed/1000⌋ + 1000)
//
// and is refused (503) if excess' > burst·1000, which changes nothing. Otherwise excess and
// last are updated, and the request passes at once if excess' ≤ delay·1000 (nodelay: always),
// else nginx holds it for ⌊(excess' − delay·1000)·1000/R⌋ ms before serving it — a delay that
// truncates to 0 passes at once, which happens above 1000r/s. No delay= means delay=0: every
// request but a lone one is held. The first request of a key nginx has not seen (and the
// first after an idle long enough to drain everything) is accounted at excess 0, not 1000,
// so burst + 1 pass at once.
//
// At 10r/s, burst=5, delay=2, ten requests at once: excess 0, 1, 2 (×1000) pass now; 3, 4
// and 5 wait 100, 200 and 300ms; 6 and up are refused: four 503s. With nodelay the first six
// pass and four are refused; without burst one passes and nine are refused, and after that
// one request per 100ms.
//
// Where it differs from ratelab's nearest kind, token-bucket:capacity=burst+1 at the same
// rate, and why it matters:
//
//	                      nginx                                 token-bucket
//	starts                a key not seen yet: burst + 1 at      full: capacity at once
//	                      once (its first request is free)
//	time resolution       whole milliseconds (floored), and     nanoseconds
//	                      the drain ⌊R·ms/1000⌋ is truncated
//	                      at every accounting
//	rate                  integer milli-requests per second:    permits/window, exact to
//	                      1r/m is one per 62.5s, 7r/m one per   the nanosecond
//	                      8.571s (R = 116)
//	what "burst" means    requests beyond the first: burst + 1  the capacity: capacity at
//	                      pass at once after idle               once after idle
//	beyond delay          held by nginx until the excess has    refused (or shaped by a
//	                      drained to delay (its own rule,       caller's maximum wait)
//	                      no caller's choice)
//	who pays a refusal    nobody: a refused request leaves      nobody: a refused request
//	                      excess and last as they were          takes nothing
//	late clock readings   elapsed < 0 counts as 0, and one      judged against the newer
//	                      more than 60s in the past as 1ms      schedule
//
// AcquireAt is what nginx does for a caller that cannot be held: Admitted when nginx passes
// the request at once, and Rejected, taking nothing, both when nginx refuses it and when
// nginx would hold it. nginx itself always holds (its delay is not the caller's choice), so
// the faithful path is ReserveAt with the spec's CallerWait — the longest delay nginx can
// impose — which the simulator takes by itself for an nginx stage (limiters.Waiting): it
// admits every request nginx serves, with nginx's delay as the wait, and refuses the 503s.
//
// A request for n permits is n requests in the same millisecond, all or nothing: excess' is
// that of the last of them, and so is the delay. MaxPermits is burst + 1 (1 without a burst).
//
// The model keeps two integers and a flag under a mutex, as nginx keeps its node under the
// zone's shared-memory lock; it allocates nothing. RefundAt and CancelAt undo, exactly, the
// latest accounting when called at the instant it was made (a stack refused the request
// further on, which nginx's own stacked limit_req zones do not charge either); later they
// give back nothing, as nginx keeps counting a held request whose client went away.
//
// An Nginx is one key's node. The zone of nodes, with nginx's own expiry of idle nodes and of
// the least recently used one when the zone is full, is a keyed table:
// keys(max=N,evict=nginx):nginx:… (EvictNginx, with the zone size in nodes).
//
// The zero value grants nothing: every request is Never; NewNginx makes a working one.
type Nginx struct {
	mu    sync.Mutex
	node  nginxNode
	undo  nginxUndo
	rate  uint64 // R: milli-requests per second
	burst uint64 // burst·1000
	delay uint64 // delay·1000; nodelay: nginx's NGX_MAX_INT_T_VALUE/1000·1000
	spec  NginxSpec
	clock limiters.Clock
}

// nginxNode is nginx's per-key state (ngx_http_limit_req_node_t's excess and last).
type nginxNode struct {
	seen   bool  // nginx has a node for the key
	excess int64 // milli-requests
	last   int64 // ms
}

// nginxUndo is the latest accounting: what RefundAt and CancelAt can undo at its instant.
type nginxUndo struct {
	ok            bool
	at            time.Duration
	n             int
	before, after nginxNode
}

var (
	_ limiters.Limiter  = (*Nginx)(nil)
	_ limiters.Clocked  = (*Nginx)(nil)
	_ limiters.Reserver = (*Nginx)(nil)
	_ limiters.Refunder = (*Nginx)(nil)
	_ limiters.Waiting  = NginxSpec{}
)

// NginxSpec configures an Nginx: "nginx:rate=10r/s,burst=5,delay=2".
type NginxSpec struct {
	// Rate is requests per second (Window 1s, "10r/s") or per minute (Window 1m, "10r/m").
	Rate limiters.Rate
	// Burst is limit_req's burst= (0: none): requests beyond the rate that are served.
	Burst int
	// Delay is limit_req's delay= (0: every request beyond the rate is held), NoDelay its
	// nodelay (no request is ever held).
	Delay   int
	NoDelay bool
}

// nginxMax is the largest rate, burst and delay ratelab takes (nginx takes larger ones): it
// keeps every product of the model within 64 bits and every wait within 2^62ns.
const nginxMax = 1_000_000

var nginxKind = limiters.KindInfo{
	Kind: KindNginx, Family: FamilyNginx, Shape: limiters.ShapeLevel,
	Summary:      "NGINX limit_req: excess in milli-requests on a ms clock; burst refused beyond, delayed beyond delay",
	Example:      "nginx:rate=10r/s,burst=5,delay=2",
	Checks:       limiters.CheckSpecs{Sizes: "nginx:rate=10r/s,burst=4,delay=nodelay", Allocs: []string{"nginx:rate=100r/s,burst=20,delay=5"}},
	Fields:       limiters.FieldInfos[NginxSpec](),
	Ranges:       nginxRanges,
	Capabilities: []limiters.Capability{limiters.CapRetryAfter, limiters.CapReserve, limiters.CapRefund},
	Parse:        limiters.SpecParser(NginxSpec{}),
	Explain:      explainNginx,
}

func (s *NginxSpec) Fields() []limiters.Field {
	rate := limiters.Field{
		FieldInfo: limiters.FieldInfo{Name: "rate", Required: true, Meaning: "requests per second or minute, as nginx writes it: 10r/s, 30r/m"},
		Set: func(text string) error {
			num, unit, ok := strings.Cut(text, "r/")
			window := map[string]time.Duration{"s": time.Second, "m": time.Minute}[unit]
			if !ok || window == 0 {
				return fmt.Errorf("expected requests r/s or r/m, e.g. 10r/s")
			}
			n, err := limiters.ParsePositiveInt(num)
			if err != nil {
				return err
			}
			s.Rate = limiters.Rate{Permits: n, Window: window}
			return nil
		},
		Get: func() string { return nginxRateText(s.Rate) },
	}
	burst := limiters.IntField("burst", false, "requests beyond the rate that nginx serves (default 0: none)", &s.Burst)
	burst.Omit = func() bool { return s.Burst == 0 }
	delay := limiters.Field{
		FieldInfo: limiters.FieldInfo{Name: "delay", Meaning: "excess requests served at once, or nodelay for all; the rest are held (default 0)"},
		Set: func(text string) error {
			if text == "nodelay" {
				s.Delay, s.NoDelay = 0, true
				return nil
			}
			d, err := limiters.ParsePositiveInt(text)
			if err != nil {
				return fmt.Errorf("%v (or nodelay)", err)
			}
			s.Delay, s.NoDelay = d, false
			return nil
		},
		Get: func() string {
			if s.NoDelay {
				return "nodelay"
			}
			return strconv.Itoa(s.Delay)
		},
		Omit: func() bool { return s.Delay == 0 && !s.NoDelay },
	}
	return []limiters.Field{rate, burst, delay}
}

// nginxRateText prints a rate as nginx writes it: "10r/s", "1r/m".
func nginxRateText(r limiters.Rate) string {
	switch r.Window {
	case time.Second:
		return strconv.Itoa(r.Permits) + "r/s"
	case time.Minute:
		return strconv.Itoa(r.Permits) + "r/m"
	}
	return r.String()
}

// Kind is KindNginx.
func (s NginxSpec) Kind() limiters.Kind { return KindNginx }

// String is "nginx:rate=10r/s,burst=5,delay=2" (burst and delay only when given).
func (s NginxSpec) String() string { return limiters.FormatSpec(KindNginx, s.Fields()) }

// Validate refuses a rate that is not r/s or r/m or is beyond 10⁶, a burst or a delay beyond
// 10⁶ or negative, and a delay given with nodelay.
func (s NginxSpec) Validate() error {
	if (s.Rate.Window != time.Second && s.Rate.Window != time.Minute) || s.Rate.Permits < 1 || s.Rate.Permits > nginxMax {
		return limiters.NewConfigError(KindNginx, "rate", nginxRateText(s.Rate), "must be 1 to 1000000 requests r/s or r/m")
	}
	if s.Burst < 0 || s.Burst > nginxMax {
		return limiters.NewConfigError(KindNginx, "burst", strconv.Itoa(s.Burst), "must be between 0 (none) and 1000000")
	}
	if s.Delay < 0 || s.Delay > nginxMax {
		return limiters.NewConfigError(KindNginx, "delay", strconv.Itoa(s.Delay), "must be between 0 and 1000000, or nodelay")
	}
	if s.NoDelay && s.Delay != 0 {
		return limiters.NewConfigError(KindNginx, "delay", strconv.Itoa(s.Delay), "nodelay and a delay exclude each other")
	}
	return nil
}

// nginxRanges are what NginxSpec.Validate accepts, field by field:
// docs/LIMITS.md's rows for nginx, with specs at and just past each edge that the registry
// test holds to Validate.
var nginxRanges = []limiters.FieldRange{
	{Field: "rate", Accepted: "1 to 1000000 r/s or r/m",
		Why:     "nginx's own rates; R is kept in milli-requests per second",
		Valid:   []string{"nginx:rate=1r/m", "nginx:rate=1000000r/s"},
		Invalid: []string{"nginx:rate=0r/s", "nginx:rate=1000001r/s"}},
	{Field: "burst", Accepted: "1 to 1000000; left out, 0 (none)",
		Why:     "ratelab's bound, far above any nginx configuration in use; nginx itself refuses burst=0 (\"invalid burst value\") and means none by leaving it out",
		Valid:   []string{"nginx:rate=1r/s,burst=1", "nginx:rate=1r/s,burst=1000000", "nginx:rate=1r/s"},
		Invalid: []string{"nginx:rate=1r/s,burst=1000001", "nginx:rate=1r/s,burst=0"}},
	{Field: "delay", Accepted: "1 to 1000000, or nodelay (not both); left out, 0",
		Why:     "as burst: nginx refuses delay=0 (\"invalid delay value\")",
		Valid:   []string{"nginx:rate=1r/s,burst=5,delay=nodelay", "nginx:rate=1r/s,burst=5,delay=1", "nginx:rate=1r/s,burst=5,delay=1000000"},
		Invalid: []string{"nginx:rate=1r/s,burst=5,delay=1000001", "nginx:rate=1r/s,burst=5,delay=0"}},
}

// New is NewNginx(s, clock).
func (s NginxSpec) New(clock limiters.Clock) (limiters.Limiter, error) { return NewNginx(s, clock) }

// MilliRate is nginx's R, the rate in milli-requests per second with its integer truncation:
// 10r/s is 10000, 1r/m is 16.
func (s NginxSpec) MilliRate() int64 {
	if s.Rate.Window == time.Minute {
		return int64(s.Rate.Permits) * 1000 / 60
	}
	return int64(s.Rate.Permits) * 1000
}

// delays reports whether nginx can ever hold a request of this spec.
func (s NginxSpec) delays() bool { return !s.NoDelay && s.Delay < s.Burst }

// CallerWait is the longest nginx holds a request: ⌊(burst − delay)·1000·1000/R⌋ ms (10r/s,
// burst=5, delay=2: 300ms), 0 with nodelay or when delay ≥ burst. It makes the simulator hold
// an nginx stage's requests as nginx does (limiters.Waiting).
func (s NginxSpec) CallerWait() time.Duration {
	if !s.delays() || s.MilliRate() <= 0 {
		return 0
	}
	return time.Duration(int64(s.Burst-s.Delay)*1000*1000/s.MilliRate()) * time.Millisecond
}

// AdmissionBound, with nodelay (or delay ≥ burst), is exact:
// 1 + ⌊(burst·1000 + ⌊R·D/1000⌋)/1000⌋ with D = ⌈(L−1ns)/1ms⌉, the most whole ms an
// interval of length L spans — burst + 1 at once, then what the excess drains meanwhile
// (10r/s, burst=5 over 1s: 16). Where nginx holds requests it bounds them by when they go on
// (nginx's release or, for AcquireAt, the decision): ⌈(R·(L + 2ms) + delay·1000·1s)/10¹²⌉
// plus MaxPermits − 1 — at most delay + 1 at once, then one per 1000/R s, less the 2ms that
// the ms floors can take off the spacing, plus the size of a request held as one (10r/s,
// burst=5, delay=2 over 1s: 13 + 5 = 18, where single requests reach 12). It is a bound, not
// always reached.
func (s NginxSpec) AdmissionBound(L time.Duration) (int64, bool) {
	R := uint64(s.MilliRate())
	if !s.delays() {
		spanned := uint64(bound.DivCeil(int64(L)-1, int64(time.Millisecond)))
		hi, lo := bits.Mul64(R, spanned)
		drained, _ := bits.Div64(hi, lo, 1000)
		return 1 + int64((uint64(s.Burst)*1000+drained)/1000), true
	}
	hi, lo := bits.Mul64(R, uint64(L)+uint64(2*time.Millisecond))
	lo, carry := bits.Add64(lo, uint64(s.Delay)*1000*uint64(time.Second), 0)
	hi += carry
	q, r := bits.Div64(hi, lo, 1_000_000_000_000)
	if r > 0 {
		q++
	}
	return int64(q) + int64(s.Burst), true // MaxPermits − 1 = burst
}

// NaturalWindow is the rate's unit: 1s for r/s, 1m for r/m.
func (s NginxSpec) NaturalWindow() time.Duration { return s.Rate.Window }

// NominalRate is the rate nginx enforces, R milli-requests per second, in lowest terms:
// 10r/s is 10/1s, 1r/m is 2/125s (one per 62.5s).
func (s NginxSpec) NominalRate() (limiters.Rate, bool) {
	R := s.MilliRate()
	g := gcd(R, 1000)
	return limiters.Rate{Permits: int(R / g), Window: time.Duration(1000/g) * time.Second}, true
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// InitialPermits is what a key nginx has not seen passes at once: min(burst, delay) + 1
// (nodelay: burst + 1), or a little more where a delay truncates to 0ms (above 1000r/s).
func (s NginxSpec) InitialPermits() int {
	l := nginxOf(s, nil)
	return l.available(nginxNode{}, 0)
}

// NewNginx returns NGINX limit_req for spec on clock. It refuses what NginxSpec.Validate
// refuses and a nil clock.
func NewNginx(spec NginxSpec, clock limiters.Clock) (*Nginx, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := limiters.RequireClock(KindNginx, clock); err != nil {
		return nil, err
	}
	return nginxOf(spec, clock), nil
}

func nginxOf(spec NginxSpec, clock limiters.Clock) *Nginx {
	l := &Nginx{rate: uint64(spec.MilliRate()), burst: uint64(spec.Burst) * 1000, delay: uint64(spec.Delay) * 1000,
		spec: spec, clock: clock}
	if spec.NoDelay {
		l.delay = math.MaxInt64 / 1000 * 1000
	}
	return l
}

// nginxMs is ngx_current_msec for the run's time now: floored to whole ms (0 before 0).
func nginxMs(now time.Duration) int64 { return max(int64(now), 0) / int64(time.Millisecond) }

// account is nginx's lookup for n requests at ms now against node: the excess the last of
// them is accounted at, and the node nginx would store if it lets them through.
func (l *Nginx) account(node nginxNode, now int64, n int) (excess int64, next nginxNode) {
	next = nginxNode{seen: true, last: now}
	if node.seen {
		ms := now - node.last
		switch {
		case ms < -60000:
			ms = 1
		case ms < 0:
			ms = 0
		}
		// nginx's unsigned arithmetic, read back as signed.
		excess = int64(uint64(node.excess) - l.rate*uint64(ms)/1000 + 1000)
		excess = max(excess, 0)
		if ms == 0 {
			next.last = node.last
		}
	}
	excess += int64(n-1) * 1000
	next.excess = excess
	return excess, next
}

// hold is how long nginx holds a request accounted at excess (0: it passes at once).
func (l *Nginx) hold(excess int64) time.Duration {
	if uint64(excess) <= l.delay {
		return 0
	}
	return time.Duration((uint64(excess)-l.delay)*1000/l.rate) * time.Millisecond
}

// ReserveAt accounts n requests at now as nginx does: Rejected, taking nothing, when the
// excess would exceed the burst (a 503); otherwise Admitted with nginx's delay as the Wait,
// unless that is more than maxWait, when it is Rejected with that Wait and takes nothing.
func (l *Nginx) ReserveAt(now time.Duration, n int, maxWait time.Duration) limiters.Reservation {
	r := limiters.Reservation{Decision: limiters.CheckN(n, l.MaxPermits()), Permits: n, At: now}
	if r.Decision != limiters.Admitted {
		return r
	}
	ms := nginxMs(now)
	l.mu.Lock()
	excess, next := l.account(l.node, ms, n)
	if uint64(excess) > l.burst {
		l.mu.Unlock()
		r.Decision = limiters.Rejected
		return r
	}
	if r.Wait = l.hold(excess); r.Wait > max(maxWait, 0) {
		l.mu.Unlock()
		r.Decision = limiters.Rejected
		return r
	}
	l.undo = nginxUndo{ok: true, at: now, n: n, before: l.node, after: next}
	l.node = next
	l.mu.Unlock()
	return r
}

// CancelAt undoes an admitted reservation at the instant it was made (see RefundAt); later
// it gives nothing back.
func (l *Nginx) CancelAt(now time.Duration, r limiters.Reservation) {
	if r.Decision == limiters.Admitted && now == r.At {
		l.RefundAt(now, r.Permits)
	}
}

// RefundAt undoes the latest accounting exactly when it was of n permits at now and nothing
// was undone since; otherwise it gives nothing back (nginx never does).
func (l *Nginx) RefundAt(now time.Duration, n int) {
	l.mu.Lock()
	if u := l.undo; u.ok && u.at == now && u.n == n && l.node == u.after {
		l.node = u.before
		l.undo.ok = false
	}
	l.mu.Unlock()
}

// RetryAfterAt is how long after now n requests would first pass at once, nothing else
// arriving meanwhile: the first whole millisecond at which ⌊R·(ms − last)/1000⌋ has drained
// the key's excess so that n more fit under what passes at once (the burst, or the delay
// where it holds requests). At 10r/s with burst=2 nodelay, a key that took 3 at 0ms waits
// until 100ms for its next. ok is false for n that nginx can never pass at once (more than
// burst + 1, or, with a delay, more than delay + 1 on a fresh key).
func (l *Nginx) RetryAfterAt(now time.Duration, n int) (time.Duration, bool) {
	if limiters.CheckN(n, l.MaxPermits()) != limiters.Admitted {
		return 0, false
	}
	top := l.burst
	if l.delay < top {
		top = min(top, l.delay+(l.rate-1)/1000)
	}
	if uint64(n-1)*1000 > top {
		return 0, false
	}
	ms := nginxMs(now)
	l.mu.Lock()
	node := l.node
	l.mu.Unlock()
	if excess, _ := l.account(node, ms, n); uint64(excess) <= top {
		return 0, true
	}
	need := uint64(node.excess) + uint64(n)*1000 - top // > 0: they do not pass at once now
	at := node.last + int64((need*1000+l.rate-1)/l.rate)
	if at > limiters.MaxSpan/int64(time.Millisecond) {
		return time.Duration(limiters.MaxSpan), true
	}
	return max(time.Duration(at)*time.Millisecond-now, 0), true
}

// AcquireAt takes n permits at now if nginx passes the requests at once; a request nginx
// would refuse or hold is Rejected and takes nothing (see the type's comment).
func (l *Nginx) AcquireAt(now time.Duration, n int) limiters.Decision {
	return l.ReserveAt(now, n, 0).Decision
}

// TryAcquireAt reports whether n permits were taken at time now.
func (l *Nginx) TryAcquireAt(now time.Duration, n int) bool {
	return l.AcquireAt(now, n) == limiters.Admitted
}

// TryAcquire takes n permits now, by the limiter's clock.
func (l *Nginx) TryAcquire(n int) bool { return l.TryAcquireAt(limiters.ReadClock(l.clock), n) }

// available is how many requests nginx would pass at once at ms now from node.
func (l *Nginx) available(node nginxNode, now int64) int {
	if l.rate == 0 {
		return 0
	}
	excess, _ := l.account(node, now, 1)
	if uint64(excess) > l.burst || l.hold(excess) > 0 {
		return 0
	}
	// Each further request adds 1000; the most that pass at once is the largest excess
	// within the burst whose hold truncates to 0ms.
	top := l.burst
	if l.delay < top {
		top = min(top, l.delay+(l.rate-1)/1000)
	}
	return min(int((top-uint64(excess))/1000)+1, l.MaxPermits())
}

// AvailableAt is how many requests nginx would pass at once at now.
func (l *Nginx) AvailableAt(now time.Duration) int {
	ms := nginxMs(now)
	l.mu.Lock()
	node := l.node
	l.mu.Unlock()
	return l.available(node, ms)
}

// Available is AvailableAt at the clock's current time.
func (l *Nginx) Available() int { return l.AvailableAt(limiters.ReadClock(l.clock)) }

// MaxPermits is burst + 1: what a key passes at once after idle.
func (l *Nginx) MaxPermits() int {
	if l.rate == 0 {
		return 0
	}
	return int(l.burst/1000) + 1
}

// Kind is KindNginx.
func (l *Nginx) Kind() limiters.Kind { return KindNginx }

// String is the spec.
func (l *Nginx) String() string { return l.spec.String() }

// Spec is the limiter's configuration.
func (l *Nginx) Spec() NginxSpec { return l.spec }

// Snapshot is the excess a request at now would be accounted at, in requests (Level, of
// the burst as LevelMax), and when the next request passes at once (NextFree).
func (l *Nginx) Snapshot(now time.Duration) limiters.State {
	st := limiters.State{Kind: KindNginx, At: now, LevelName: "excess", NextFree: now}
	if l.rate == 0 {
		return st
	}
	ms := nginxMs(now)
	l.mu.Lock()
	node := l.node
	l.mu.Unlock()
	excess, _ := l.account(node, ms, 1)
	st.Available, st.MaxPermits = l.available(node, ms), l.MaxPermits()
	st.Level, st.LevelMax = float64(excess)/1000, float64(l.burst/1000)
	if st.Available == 0 {
		st.NextFree = l.nextFree(node)
	}
	return st
}

// nextFree is when a request next passes at once, the key's last request having been
// refused or held: the first ms at which ⌊R·(ms − last)/1000⌋ has drained the excess to
// what passes at once.
func (l *Nginx) nextFree(node nginxNode) time.Duration {
	top := l.burst
	if l.delay < top {
		top = min(top, l.delay+(l.rate-1)/1000)
	}
	need := uint64(node.excess) + 1000 - top // > 0: no request passes at once now
	ms := node.last + int64((need*1000+l.rate-1)/l.rate)
	if ms > limiters.MaxSpan/int64(time.Millisecond) {
		return time.Duration(limiters.MaxSpan)
	}
	return time.Duration(ms) * time.Millisecond
}

// explainNginx: the excess the request is accounted at, against the burst and the delay.
func explainNginx(s limiters.State, n int, d limiters.Decision) string {
	excess := s.Level + float64(n-1)
	head := fmt.Sprintf("nginx accounts it at excess %s (burst %s)", levelText(excess), levelText(s.LevelMax))
	switch {
	case d == limiters.Admitted && n <= s.Available:
		return head + ": within the delay, it passes at once"
	case d == limiters.Admitted:
		return head + ": past the delay, nginx holds it until the excess has drained to the delay"
	case excess > s.LevelMax:
		return head + ": over the burst, 503, and excess and last stay as they were"
	}
	return fmt.Sprintf("%s: past the delay, nginx would hold it; a caller that cannot wait is refused (one passes at once in %s)",
		head, limiters.FormatDuration(s.NextFree-s.At))
}

// levelText prints a level with at most three decimals: 3, 3.5, 0.016.
func levelText(v float64) string { return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64) }

var _ limiters.Fresh = (*Nginx)(nil)

// FreshAt is a node nginx has never seen, or one whose excess has decayed at least a whole
// request below zero by now: excess − rate·(now − last)/1000 + 1000 ≤ 0, so that the next
// request is accounted at 0, as on a new node. 10r/s, burst=5 nodelay, a node at excess 2000
// (two in the burst) last seen at 0: fresh from 300ms on, not at 200ms, when its excess has reached 0
// and the next request would still be accounted at 1000.
func (l *Nginx) FreshAt(now time.Duration) bool {
	if l.rate == 0 {
		return true
	}
	l.mu.Lock()
	node := l.node
	l.mu.Unlock()
	if !node.seen {
		return true
	}
	ms := nginxMs(now) - node.last
	if ms < 0 || uint64(ms) > math.MaxUint64/l.rate {
		return false // a late caller, or past nginx's own arithmetic
	}
	return l.rate*uint64(ms)/1000 >= uint64(node.excess)+1000
}

var _ limiters.NginxZoned = (*Nginx)(nil)

// ZoneNode is the key's node: excess and last as nginx stores them.
func (l *Nginx) ZoneNode() limiters.NginxNode {
	l.mu.Lock()
	node := l.node
	l.mu.Unlock()
	return limiters.NginxNode{Seen: node.seen, Excess: node.excess, Last: node.last, Rate: int64(l.rate)}
}

var (
	_ limiters.Reusable     = (*Nginx)(nil)
	_ limiters.ReusableSpec = NginxSpec{}
)

// ReusesLimiters is true: New makes a limiter of its own on every call, so a keyed table
// (keys(…):nginx:…) resets an evicted key's limiter for the next new key.
func (NginxSpec) ReusesLimiters() bool { return true }

// ResetState puts the limiter back as New makes it: no node, nothing to undo.
func (l *Nginx) ResetState() {
	l.mu.Lock()
	l.node, l.undo = nginxNode{}, nginxUndo{}
	l.mu.Unlock()
}

var _ limiters.Splittable = NginxSpec{}

// Split is burst / n and rate / n: the rate stays r/s or r/m, as nginx writes it, so its
// count must divide.
func (s NginxSpec) Split(n int) (limiters.Spec, error) {
	var err error
	if s.Burst, err = limiters.SplitCount(s, "burst", s.Burst, n); err != nil {
		return nil, err
	}
	s.Rate.Permits, err = limiters.SplitCount(s, "rate", s.Rate.Permits, n)
	return s, err
}
