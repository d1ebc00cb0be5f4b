package redislimit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/ratelab/ratelab/limiters"
)

// Clock says where a decision's time comes from.
type Clock uint8

const (
	// ServerClock reads Redis's TIME inside the script: every instance that shares the store
	// shares its clock, so no instance's clock offset can shift a window or a schedule. The
	// production choice, and the default.
	ServerClock Clock = iota
	// CallerClock takes the caller's time, in nanoseconds from its clock's origin, passed to
	// AcquireAt: the simulator's virtual time, or a test's. Every caller of one key must use
	// the same origin.
	CallerClock
)

func (c Clock) String() string {
	switch c {
	case ServerClock:
		return "server"
	case CallerClock:
		return "caller"
	}
	return fmt.Sprintf("Clock(%d)", uint8(c))
}

// DefaultCallerKeyTTL is how long a key decided on the caller's clock is kept after its last
// decision, unless Options.CallerKeyTTL says otherwise.
const DefaultCallerKeyTTL = 24 * time.Hour

// Options are a Limiter's settings beside its spec.
type Options struct {
	// Clock is where time comes from (default ServerClock).
	Clock Clock
	// CallerKeyTTL is, with CallerClock, the real time a key is kept after its last
	// decision (default DefaultCallerKeyTTL, at least 1ms). Redis expires keys by its own
	// clock, which says nothing of the caller's: a replay that runs a virtual hour in a real
	// second would keep a key expiring "when TAT passes" for an hour too long, and one that
	// holds its virtual time still would lose a fixed window's count as soon as the real window
	// had passed, and admit its limit again. With ServerClock the key expires exactly when it
	// would be indistinguishable from a fresh one (TAT passed; the window ended), rounded up
	// to a whole ms, and CallerKeyTTL must be 0.
	CallerKeyTTL time.Duration
}

// Limiter is a token bucket, a leaky bucket or a fixed window (a limiters.Stored spec) whose
// state lives in one Redis key, decided by a Lua script that Redis runs atomically: every instance of a service that
// shares the key shares one limit. Its decisions are those of the in-process limiter of the
// same spec (limiters.TokenBucket, LeakyBucket, FixedWindow), decision for decision, at the
// same times.
//
// Each decision is one round trip (EVALSHA, a 40-byte digest instead of the 2 KB script;
// SCRIPT LOAD and again when the server does not hold the script yet), allocating nothing;
// AcquireBatch sends many in one round trip. A request for n ≤ 0 or n > MaxPermits is answered Invalid or Never without one.
// The store's errors are returned, never swallowed; Guarded adds a failure policy on top.
//
// A Limiter is safe for concurrent use: each decision takes a connection of its Client's pool
// for itself, and the script, not the client, serialises decisions on the key.
type Limiter struct {
	client    *Client
	key       string
	spec      limiters.Spec
	clock     Clock
	maxN      int
	interval  int64  // GCRA: T
	tolerance int64  // GCRA: τ
	limit     int    // fixed window
	window    int64  // fixed window, ns
	ttl       string // the expiry argument: CallerKeyTTL in ms, or "" for the script's own
	isGCRA    bool   // a token or leaky bucket; else a fixed window
	script    *script
	head      []byte // every call's first bytes: EVALSHA, the digest, 1, the key
	ttlArg    []byte // the expiry argument, as a RESP bulk string
}

// Result is one decision.
type Result struct {
	Decision limiters.Decision
	// RetryAfter is, for a Rejected request, how long after At the same request would
	// first pass if nothing else took permits meanwhile (the schedule's wait, or the time to
	// the window's end); 0 otherwise.
	RetryAfter time.Duration
	// At is the time the store decided at: the caller's time with CallerClock, Redis's TIME
	// (ns since the Unix epoch, µs resolution) with ServerClock. 0 for Invalid and Never,
	// which are decided without a round trip.
	At time.Duration
}

// Request is one request of a batch: Permits at At (At is ignored with ServerClock).
type Request struct {
	At      time.Duration
	Permits int
}

// StoreError is a decision the store did not make: it could not be reached, did not answer
// in time, or answered with an error.
type StoreError struct {
	Kind limiters.Kind
	Key  string
	Err  error // a dial, read or write failure, a deadline, an error reply (*ReplyError)
}

func (e *StoreError) Error() string {
	cause := e.Err.Error()
	switch {
	case errors.Is(e.Err, io.EOF), errors.Is(e.Err, io.ErrUnexpectedEOF):
		cause = "the server closed the connection (EOF)"
	case e.Timeout():
		cause = "no answer in time (" + cause + ")"
	}
	return fmt.Sprintf("redislimit: %s at key %q: the store gave no decision: %s", e.Kind, e.Key, cause)
}

// Timeout reports whether the store did not answer before the deadline.
func (e *StoreError) Timeout() bool {
	var ne net.Error
	return errors.Is(e.Err, context.DeadlineExceeded) || (errors.As(e.Err, &ne) && ne.Timeout())
}

func (e *StoreError) Unwrap() error { return e.Err }

// maxTime is the last time a caller may pass: 2^62 ns (146 years), as package limiters.
const maxTime = time.Duration(1) << 62

// New returns a limiter of spec whose state is the Redis key key. The spec is a token bucket
// (GCRA with τ = capacity·T), a leaky bucket (τ = T) or a fixed window. With ServerClock a
// fixed window must be a whole number of microseconds, the resolution of Redis's TIME.
//
// A context's deadline bounds each round trip (Guarded's timeout relies on it); without one,
// the client's Timeout does.
func New(client *Client, key string, spec limiters.Spec, opts Options) (*Limiter, error) {
	if client == nil {
		return nil, errors.New("redislimit: a client is required")
	}
	if key == "" {
		return nil, errors.New("redislimit: key: must not be empty")
	}
	if spec == nil {
		return nil, errors.New("redislimit: a spec is required")
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	l := &Limiter{client: client, key: key, spec: spec, clock: opts.Clock}
	switch opts.Clock {
	case ServerClock:
		if opts.CallerKeyTTL != 0 {
			return nil, fmt.Errorf("redislimit: CallerKeyTTL=%s: only used with CallerClock (with ServerClock a key expires when its state is spent)", limiters.FormatDuration(opts.CallerKeyTTL))
		}
	case CallerClock:
		ttl := opts.CallerKeyTTL
		if ttl == 0 {
			ttl = DefaultCallerKeyTTL
		}
		if ttl < time.Millisecond {
			return nil, fmt.Errorf("redislimit: CallerKeyTTL=%s: must be at least 1ms", limiters.FormatDuration(ttl))
		}
		l.ttl = strconv.FormatInt(int64(ttl/time.Millisecond), 10)
	default:
		return nil, fmt.Errorf("redislimit: clock=%s: must be ServerClock or CallerClock", opts.Clock)
	}
	stored, ok := spec.(limiters.Stored)
	if !ok {
		return nil, fmt.Errorf("redislimit: kind %s has no Redis script (%s do)", spec.Kind(), limiters.StoredKinds())
	}
	form := stored.StoreForm()
	if form.GCRA {
		l.interval, l.tolerance = int64(form.Interval), int64(form.Tolerance)
		l.script, l.isGCRA = gcraScript, true
		l.maxN = int(l.tolerance / l.interval)
		l.prepare()
		return l, nil
	}
	if opts.Clock == ServerClock && form.Window%time.Microsecond != 0 {
		return nil, fmt.Errorf("redislimit: %s: window=%s: with ServerClock the window must be a whole number of microseconds, the resolution of Redis's TIME",
			spec.Kind(), limiters.FormatDuration(form.Window))
	}
	l.limit, l.window, l.maxN = form.Limit, int64(form.Window), form.Limit
	l.script = windowScript
	l.prepare()
	return l, nil
}

// Acquire decides n permits now, by Redis's TIME. It needs ServerClock.
func (l *Limiter) Acquire(ctx context.Context, n int) (Result, error) {
	if l.clock != ServerClock {
		return Result{}, fmt.Errorf("redislimit: Acquire reads Redis's TIME, but this limiter is on the caller's clock: use AcquireAt")
	}
	return l.decide(ctx, 0, n, false)
}

// AcquireAt decides n permits at now, the caller's time (0 ≤ now ≤ 2^62 ns). It needs
// CallerClock.
func (l *Limiter) AcquireAt(ctx context.Context, now time.Duration, n int) (Result, error) {
	if l.clock != CallerClock {
		return Result{}, fmt.Errorf("redislimit: AcquireAt takes the caller's time, but this limiter reads Redis's TIME: use Acquire")
	}
	if err := checkTime(now); err != nil {
		return Result{}, err
	}
	return l.decide(ctx, now, n, false)
}

func checkTime(now time.Duration) error {
	if now < 0 || now > maxTime {
		return fmt.Errorf("redislimit: now=%s: times must be between 0 and 2^62ns", limiters.FormatDuration(now))
	}
	return nil
}

// StateAt reads the state that explains the next decision, deciding nothing: with
// CallerClock at now, with ServerClock at Redis's TIME (now is then ignored, and State.At is
// the store's time). GCRA fills Arrival, Interval and Tolerance; the fixed window Limit,
// Count and its window's bounds.
func (l *Limiter) StateAt(ctx context.Context, now time.Duration) (limiters.State, error) {
	if l.clock == CallerClock {
		if err := checkTime(now); err != nil {
			return limiters.State{}, err
		}
	}
	rep, err := l.peek(ctx, now)
	if err != nil {
		return limiters.State{}, err
	}
	at := time.Duration(rep.at)
	s := limiters.State{Kind: l.spec.Kind(), At: at, MaxPermits: l.maxN}
	if l.isGCRA {
		backlog := rep.a
		s.Arrival, s.Interval, s.Tolerance = at+time.Duration(backlog), time.Duration(l.interval), time.Duration(l.tolerance)
		if backlog < l.tolerance {
			s.Available = int((l.tolerance - backlog) / l.interval)
		}
		return s, nil
	}
	s.Limit, s.Count, s.Window = l.limit, int(rep.used), time.Duration(l.window)
	s.WindowStart = time.Duration(rep.a * l.window)
	s.WindowEnd = s.WindowStart + s.Window
	s.Available = l.limit - s.Count
	return s, nil
}

// Reset deletes the key: the limiter starts afresh (a full bucket, an empty window).
func (l *Limiter) Reset(ctx context.Context) error {
	if _, err := l.client.Del(ctx, l.key); err != nil {
		return &StoreError{Kind: l.spec.Kind(), Key: l.key, Err: err}
	}
	return nil
}

// Spec is the limiter's configuration.
func (l *Limiter) Spec() limiters.Spec { return l.spec }

// Key is the Redis key that holds the state.
func (l *Limiter) Key() string { return l.key }

// Clock is where the limiter's time comes from.
func (l *Limiter) Clock() Clock { return l.clock }

// MaxPermits is the largest request that can ever pass: the capacity, 1 or the limit.
func (l *Limiter) MaxPermits() int { return l.maxN }

// String is "redis[KEY] SPEC", e.g. `redis["api:user42"] token-bucket:capacity=3,rate=100/1s`.
func (l *Limiter) String() string { return fmt.Sprintf("redis[%q] %s", l.key, l.spec) }

// checkN classifies a request size before any round trip, as package limiters does.
func checkN(n, max int) limiters.Decision {
	if n <= 0 {
		return limiters.Invalid
	}
	if n > max {
		return limiters.Never
	}
	return limiters.Admitted
}
