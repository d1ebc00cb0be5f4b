// Package httplimit puts the limiter chosen in the workbench in front of a net/http handler:
// the same spec string the CLI takes (a kind, a stack joined with +, keys(…) stages), the
// same decisions the simulator makes (engine.Stack decides both), and the headers a server
// sends with them (package headers: RateLimit-Policy, RateLimit, X-RateLimit-*,
// Retry-After). A refusal is a 429 with an RFC 9457 problem body; with MaxWait the request
// waits for its permits instead (shaping), as long as its context lives.
//
//	mw, err := httplimit.New("keys(max=10000):token-bucket:capacity=20,rate=10/1s", httplimit.Options{})
//	if err != nil { … }
//	http.ListenAndServe(":8080", mw.Wrap(handler))
//
// The middleware's clock is injectable (Options.Now), so a test can run a real server on a
// virtual clock and get, request for request, the decisions and headers of the simulated
// lane (TestRoundTrip).
package httplimit

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/headers"
	"github.com/ratelab/ratelab/limiters"
)

// Options are the middleware's choices; the zero value is a working default.
type Options struct {
	// Key names the client a request comes from, for keyed stages (keys(…)). Default:
	// RemoteAddrKey. HeaderKey and ForwardedForKey are the usual others.
	Key func(*http.Request) string
	// Permits is what a request costs. Default: 1.
	Permits func(*http.Request) int
	// Now is the limiter's clock: a monotonic reading since some origin. Default: the
	// time since New, from the process's monotonic clock.
	Now func() time.Duration
	// Wall is the wall-clock time, read only for X-RateLimit-Reset as an epoch
	// (Headers.ResetEpoch). Default: time.Now.
	Wall func() time.Time
	// Headers chooses the fields sent. The zero Style sends all of them (headers.AllFields);
	// set NoHeaders to send none.
	Headers   headers.Style
	NoHeaders bool
	// MaxWait, when positive, makes a request over the limit wait up to MaxWait for its
	// permits (a spec whose own callers wait — NGINX's burst without nodelay, a peer's
	// mode=wait — waits as its product does without it) (every stage that can reserve reserves; a bulkhead holds) instead of being
	// refused; a request whose context ends first is answered 503 (a bulkhead gets its
	// permits back; a time-based stage's reservation stays spent, as the stack cannot cancel
	// one once made). Every stage must be able to wait (limiters.CapReserve, or a bulkhead).
	MaxWait time.Duration
	// Sleep waits d or until ctx ends; default a timer. A test on a virtual clock passes its
	// own.
	Sleep func(ctx context.Context, d time.Duration) error
	// OnDecision, when set, hears every decision as it is made, with the clock reading it
	// was made at: for logs and metrics (and a test comparing them with the simulator's).
	OnDecision func(r *http.Request, now time.Duration, res Result)
}

// Middleware decides each request with one stack of limiters, shared by all requests.
type Middleware struct {
	spec     string
	specs    []limiters.Spec
	policies []headers.Policy
	opts     Options
	style    headers.Style

	mu     sync.Mutex    // guards stack and quotas: a stack's bind-decide-read is one step
	stack  *engine.Stack // decides by reservation when some stage waits (Stack.Decide)
	quotas []limiters.Quota
}

// New builds the middleware for spec (what `ratelab run` and `replay` take as a lane:
// "token-bucket:capacity=20,rate=10/1s", "keys(max=1000):nginx:rate=10r/s,burst=5",
// "a+b"), refusing a spec that does not parse or cannot honour MaxWait.
func New(spec string, opts Options) (*Middleware, error) {
	specs, err := engine.ParseStack(spec)
	if err != nil {
		return nil, err
	}
	if opts.Now == nil {
		clock := limiters.NewMonotonicClock()
		opts.Now = clock.Now
	}
	if opts.Wall == nil {
		opts.Wall = time.Now
	}
	if opts.Key == nil {
		opts.Key = RemoteAddrKey
	}
	if opts.Sleep == nil {
		opts.Sleep = sleep
	}
	if opts.MaxWait < 0 {
		return nil, fmt.Errorf("httplimit: MaxWait %s is negative", opts.MaxWait)
	}
	stack, err := engine.NewStack(specs, clockFunc(opts.Now))
	if err != nil {
		return nil, err
	}
	// A spec whose callers wait (a peer's mode=wait or timeout, NGINX's burst without
	// nodelay: limiters.Waiting) shapes as it does in the simulator, MaxWait or not.
	if stack.SetWaits(specs, opts.MaxWait) {
		if err := stack.CanReserve(); err != nil {
			return nil, fmt.Errorf("httplimit: waiting (MaxWait %s or the spec's own): %w", opts.MaxWait, err)
		}
	}
	style := opts.Headers
	if style == (headers.Style{}) {
		style = headers.AllFields
	}
	if opts.NoHeaders {
		style = headers.Style{}
	}
	return &Middleware{spec: engine.StackString(specs), specs: specs, policies: headers.Policies(specs), opts: opts,
		style: style, stack: stack, quotas: make([]limiters.Quota, len(specs))}, nil
}

// String is the spec the middleware decides with, as ParseStack prints it.
func (m *Middleware) String() string { return m.spec }

// Policies are the stages' advertised quotas, in order.
func (m *Middleware) Policies() []headers.Policy { return m.policies }

// Result is one decision: what was decided, how long the request must wait first (shaping),
// and the header fields that go with it.
type Result struct {
	headers.Answer
	Wait   time.Duration
	Fields headers.Fields
}

// Decide decides a request for n permits from key at now, as the Wrap'd handler does, and
// says what the response carries. The stack's releasing stages (a bulkhead) hold the permits
// until Done.
func (m *Middleware) Decide(now time.Duration, key string, n int) Result {
	m.mu.Lock()
	defer m.mu.Unlock()
	res := m.decide(now, key, n)
	res.Quotas = append([]limiters.Quota(nil), res.Quotas...) // the middleware's buffer is reused
	return res
}

// decide is Decide under m.mu, its Quotas in m's own buffer (valid until the next decision).
func (m *Middleware) decide(now time.Duration, key string, n int) Result {
	d, stage, wait := m.stack.Decide(now, key, n)
	a := headers.AnswerOf(m.stack.Stages(), m.policies, now, n, d, stage, key, m.quotas)
	var wall time.Time
	if m.style.ResetEpoch {
		wall = m.opts.Wall()
	}
	return Result{Answer: a, Wait: wait, Fields: a.Fields(m.policies, m.style, wall)}
}

// Done ends an admitted request's work at now: a bulkhead stage gets its permits back.
func (m *Middleware) Done(now, latency time.Duration, key string, n int, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stack.BindHeld(key)
	m.stack.Complete(now, n, latency, ok)
}

// Wrap is next behind the limiter.
func (m *Middleware) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := m.opts.Key(r)
		n := 1
		if m.opts.Permits != nil {
			n = m.opts.Permits(r)
		}
		start := m.opts.Now()
		var res Result
		if m.opts.OnDecision != nil {
			res = m.Decide(start, key, n)
			m.opts.OnDecision(r, start, res)
		} else {
			m.mu.Lock()
			res = m.decide(start, key, n) // the fields are made under the lock; Quotas are not read after it
			res.Quotas = nil
			m.mu.Unlock()
		}
		writeFields(w.Header(), res.Fields)
		if res.Decision != limiters.Admitted {
			refuse(w, res, n, m.String())
			return
		}
		if res.Wait > 0 {
			if err := m.opts.Sleep(r.Context(), res.Wait); err != nil {
				m.Done(m.opts.Now(), 0, key, n, false)
				problem(w, http.StatusServiceUnavailable, "about:blank", "Request cancelled while waiting for its turn",
					fmt.Sprintf("the request ended (%v) during its %s wait for the rate limit", err, res.Wait))
				return
			}
		}
		next.ServeHTTP(w, r)
		end := m.opts.Now()
		m.Done(end, end-start, key, n, true)
	})
}

// The fields' names in net/http's canonical form, made once: http.Header.Set would
// canonicalise them on every request (a third of the middleware's time, measured).
var (
	keyPolicy     = textproto.CanonicalMIMEHeaderKey("RateLimit-Policy")
	keyRateLimit  = textproto.CanonicalMIMEHeaderKey("RateLimit")
	keyXLimit     = textproto.CanonicalMIMEHeaderKey("X-RateLimit-Limit")
	keyXRemaining = textproto.CanonicalMIMEHeaderKey("X-RateLimit-Remaining")
	keyXReset     = textproto.CanonicalMIMEHeaderKey("X-RateLimit-Reset")
	keyRetryAfter = textproto.CanonicalMIMEHeaderKey("Retry-After")
)

func writeFields(h http.Header, f headers.Fields) {
	for _, kv := range [...][2]string{
		{keyPolicy, f.RateLimitPolicy}, {keyRateLimit, f.RateLimit},
		{keyXLimit, f.XRateLimitLimit}, {keyXRemaining, f.XRateLimitRemaining},
		{keyXReset, f.XRateLimitReset}, {keyRetryAfter, f.RetryAfter},
	} {
		if kv[1] != "" {
			h[kv[0]] = []string{kv[1]}
		}
	}
}

// QuotaExceeded is the problem type of a refusal (draft-ietf-httpapi-ratelimit-headers's
// "quota-exceeded", registered in IANA's HTTP Problem Types).
const QuotaExceeded = "https://iana.org/assignments/http-problem-types#quota-exceeded"

func refuse(w http.ResponseWriter, res Result, n int, spec string) {
	detail := fmt.Sprintf("%d permit(s) refused by stage %d of %s", n, res.Stage+1, spec)
	if res.Decision == limiters.Never {
		detail = fmt.Sprintf("%d permits is more than %s can ever grant at once", n, spec)
	}
	if res.Fields.RetryAfter != "" {
		detail += "; retry after " + res.Fields.RetryAfter + "s"
	}
	problem(w, http.StatusTooManyRequests, QuotaExceeded, "Request cannot be satisfied as assigned quota has been exceeded", detail)
}

// problem writes an RFC 9457 problem details body.
func problem(w http.ResponseWriter, status int, typ, title, detail string) {
	body, _ := json.Marshal(struct {
		Type   string `json:"type"`
		Title  string `json:"title"`
		Status int    `json:"status"`
		Detail string `json:"detail"`
	}{typ, title, status, detail})
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}

// RemoteAddrKey is the request's peer address without its port: the client, when no proxy
// stands between.
func RemoteAddrKey(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// HeaderKey keys requests by a header's value (an API key), falling back to the remote
// address when it is absent.
func HeaderKey(name string) func(*http.Request) string {
	return func(r *http.Request) string {
		if v := r.Header.Get(name); v != "" {
			return v
		}
		return RemoteAddrKey(r)
	}
}

// ForwardedForKey keys requests by the client address that trustedProxies proxies in front
// of this server recorded in X-Forwarded-For: the trustedProxies-th address from the right
// (each proxy appends the address it received from). With 1 trusted proxy, "a, b, c" keys
// by c; an address the client wrote itself (to the left) is never believed. A request with
// fewer addresses than that is keyed by its remote address.
func ForwardedForKey(trustedProxies int) func(*http.Request) string {
	return func(r *http.Request) string {
		var hops []string
		for _, v := range r.Header.Values("X-Forwarded-For") {
			for h := range strings.SplitSeq(v, ",") {
				hops = append(hops, strings.TrimSpace(h))
			}
		}
		if trustedProxies < 1 || len(hops) < trustedProxies {
			return RemoteAddrKey(r)
		}
		return hops[len(hops)-trustedProxies]
	}
}

type clockFunc func() time.Duration

func (c clockFunc) Now() time.Duration { return c() }

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
