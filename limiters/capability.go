package limiters

import (
	"fmt"
	"strings"
	"time"
)

// Capabilities are what some limiters can do beyond the core (Limiter): each is a small
// interface of its own, declared here once, implemented by the kinds that can honour it and
// discovered in one place, CapabilitiesOf. A caller that needs one asks for it with Require,
// which refuses a kind without it by name, at construction rather than mid-run.
//
//	capability   interface   what it is for
//	retry-after  RetryAfter  a Retry-After hint; a queue's wake-up
//	reserve      Reserver    admit after a wait (shaping) instead of refusing
//	release      Releaser    permits come back when work ends, not by the clock
//	refund       Refunder    give back permits a later stage of a stack refused
//	feedback     Feedback    completions with latency and outcome, for adaptive limits (aimd,
//	                         vegas, gradient, gradient2, envoy-gradient; the simulator reports
//	                         every completion and failure)
//
// Which kind has which is each kind's KindInfo.Capabilities (held equal to what CapabilitiesOf
// finds by the registry test), listed in docs/SPECS.md's table of kinds.
//
// Two more fit beside them without changing the core. A keyed limiter (one state per client
// key, Keyed below) decides through a key-taking method of its own and presents each key's
// state as an ordinary Limiter: it is not a capability of a kind but a wrapper every kind fits
// in (KeyedLimiter), so it has no Capability name; what it asks of a kind is Fresh (fresh.go),
// to know which keys it can forget without changing a decision. A remote limiter (a decision
// that takes a round trip to a store and can fail) adds a context-taking, error-returning
// form; the simulator discovers both here.
type Capabilities struct {
	RetryAfter RetryAfter
	Reserve    Reserver
	Release    Releaser
	Refund     Refunder
	Feedback   Feedback
}

// Capability names one capability.
type Capability string

// The capabilities.
const (
	CapRetryAfter Capability = "retry-after"
	CapReserve    Capability = "reserve"
	CapRelease    Capability = "release"
	CapRefund     Capability = "refund"
	CapFeedback   Capability = "feedback"
)

// RetryAfter is a limiter that can say when a refused request would pass.
type RetryAfter interface {
	// RetryAfterAt is how long after now a request for n permits would first be admitted,
	// assuming nothing else takes permits meanwhile: what a Retry-After header carries.
	// 0 means now. ok is false when n can never be admitted (n > MaxPermits(), or n <= 0).
	RetryAfterAt(now time.Duration, n int) (wait time.Duration, ok bool)
}

// Reservation is the answer to ReserveAt: Admitted with the Wait after which the caller may
// proceed (0: at once), or Rejected, Never or Invalid with nothing taken. A rejected
// reservation's Wait is the wait it would have needed (more than the caller's maximum).
type Reservation struct {
	Decision Decision
	Permits  int
	At       time.Duration // when it was made
	Wait     time.Duration
}

// Reserver is a limiter that can admit a request after a wait instead of refusing it: what
// x/time/rate's ReserveN, Guava's acquire, uber's Take and NGINX's delay do. The permits are
// taken at once and due at At + Wait; a caller that gives up before then cancels, and the
// permits go back.
type Reserver interface {
	// ReserveAt takes n permits at time now, to be used after a wait of at most maxWait
	// (0: only at once, as AcquireAt). It never blocks.
	ReserveAt(now time.Duration, n int, maxWait time.Duration) Reservation
	// CancelAt gives an admitted reservation's permits back at time now, as far as the
	// limiter still owes them: a reservation cancelled at the instant it was made is undone
	// exactly; later, at most what it took comes back (never more, whatever happened since).
	// Cancelling a reservation that was not admitted does nothing.
	CancelAt(now time.Duration, r Reservation)
}

// Waiting is a spec whose callers wait for their permits instead of being refused at once:
// a peer's mode=wait (Guava's acquire, uber's Take) or a try with a timeout. CallerWait is the
// longest such a caller waits (MaxWaitForever for mode=wait); the simulator reserves on the
// stage with that maximum wait, so its kind must be a Reserver.
type Waiting interface {
	CallerWait() time.Duration
}

// MaxWaitForever is the wait of a caller that waits as long as it takes: 2⁶² ns (146 years),
// so that now + wait never overflows.
const MaxWaitForever = time.Duration(MaxSpan)

// Keyed is a limiter with one state per client key: a key's first request makes its state,
// a bounded table forgets some (KeyedLimiter's eviction policies).
type Keyed interface {
	// AcquireKeyAt tries to take n permits from key's state at time now.
	AcquireKeyAt(now time.Duration, key string, n int) Decision
	// KeyState is key's state as an ordinary Limiter, false when the table holds none.
	KeyState(key string) (Limiter, bool)
}

// Releaser is a limiter whose permits come back when the work they guard ends, not by the
// clock (a bulkhead).
type Releaser interface {
	// Release returns n permits. It panics, leaving the state unchanged, if n is not
	// positive or more than are held.
	Release(n int)
}

// Refunder is a time-based limiter that can take back permits it granted: a stack refunds the
// earlier stages' permits when a later stage refuses, so a refusal costs no stage anything.
type Refunder interface {
	// RefundAt gives back n permits granted by an AcquireAt at time now (the same instant):
	// the state becomes exactly what it would have been without that grant. Called later, it
	// gives back at most what the grant still holds (a window that has moved on holds
	// nothing), never more.
	RefundAt(now time.Duration, n int)
}

// Feedback is a limiter that learns from completions: adaptive concurrency limits (AIMD,
// Vegas, gradient) adjust their limit from the latency and outcome of the work they admitted.
type Feedback interface {
	// ObserveAt reports that work holding n permits, admitted earlier, finished at time now
	// after latency, successfully or not.
	ObserveAt(now time.Duration, n int, latency time.Duration, ok bool)
}

// CapabilitiesOf discovers what l can do beyond the core. It is the one place capabilities
// are looked up: the simulator, replay and the CLI all ask here.
func CapabilitiesOf(l Limiter) Capabilities {
	var c Capabilities
	c.RetryAfter, _ = l.(RetryAfter)
	c.Reserve, _ = l.(Reserver)
	c.Release, _ = l.(Releaser)
	c.Refund, _ = l.(Refunder)
	c.Feedback, _ = l.(Feedback)
	return c
}

// Has reports whether capability c is present.
func (c Capabilities) Has(capability Capability) bool {
	switch capability {
	case CapRetryAfter:
		return c.RetryAfter != nil
	case CapReserve:
		return c.Reserve != nil
	case CapRelease:
		return c.Release != nil
	case CapRefund:
		return c.Refund != nil
	case CapFeedback:
		return c.Feedback != nil
	}
	return false
}

// List names the capabilities present, in the order of the constants.
func (c Capabilities) List() []Capability {
	var out []Capability
	for _, capability := range AllCapabilities() {
		if c.Has(capability) {
			out = append(out, capability)
		}
	}
	return out
}

// AllCapabilities lists every capability.
func AllCapabilities() []Capability {
	return []Capability{CapRetryAfter, CapReserve, CapRelease, CapRefund, CapFeedback}
}

// CapabilityError is a limiter asked for a capability its kind does not have.
type CapabilityError struct {
	Kind       Kind
	Capability Capability
	Has        []Capability
}

func (e *CapabilityError) Error() string {
	has := "none"
	if len(e.Has) > 0 {
		names := make([]string, len(e.Has))
		for i, c := range e.Has {
			names[i] = string(c)
		}
		has = strings.Join(names, ", ")
	}
	return fmt.Sprintf("limiters: %s does not support %s (its capabilities: %s)", e.Kind, e.Capability, has)
}

// Require returns l's capabilities, or a *CapabilityError naming l's kind and the first of
// wanted it lacks.
func Require(l Limiter, wanted ...Capability) (Capabilities, error) {
	c := CapabilitiesOf(l)
	for _, w := range wanted {
		if !c.Has(w) {
			return c, &CapabilityError{Kind: l.Kind(), Capability: w, Has: c.List()}
		}
	}
	return c, nil
}
