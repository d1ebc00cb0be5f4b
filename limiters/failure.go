package limiters

import (
	"fmt"
	"strings"
	"time"

	"github.com/ratelab/ratelab/internal/wording"
)

// FailureMode is what a limiter whose state lives in a shared store (Redis, a rate-limit
// service) answers when the store gives no decision in time: it is down, partitioned away,
// slower than the timeout, or it answered with an error. The choice trades the two failures a
// limiter can cause:
//
//	mode         during a 30s outage at 1,000 req/s against a limit of 100/s
//	fail-open    admits all 30,000: the downstream sees 10× its limit, users see nothing
//	fail-closed  admits none: the downstream is safe, every user is refused
//	local        each instance decides with its own in-process limiter: N instances
//	             admit up to N × its limit (N × 3,000 with a full limit each)
//
// The same modes are what the fleet simulation models, so a policy chosen there is the one a
// redislimit.Guarded applies in production.
type FailureMode uint8

// The failure modes. The zero value is none of them: a remote limiter's policy must be
// chosen, never defaulted.
const (
	// FailOpen admits every request the limiter could ever admit (n between 1 and
	// MaxPermits) while the store is unreachable.
	FailOpen FailureMode = iota + 1
	// FailClosed refuses every request while the store is unreachable.
	FailClosed
	// FailLocal decides with an in-process limiter (FailurePolicy.Local) while the store is
	// unreachable; its state is its own and is not reconciled with the store afterwards.
	FailLocal
)

// FailureModes lists every mode, in the order documentation shows them.
func FailureModes() []FailureMode { return []FailureMode{FailOpen, FailClosed, FailLocal} }

// String is the mode's name as flags and scenario files write it: "fail-open",
// "fail-closed", "local".
func (m FailureMode) String() string {
	switch m {
	case FailOpen:
		return "fail-open"
	case FailClosed:
		return "fail-closed"
	case FailLocal:
		return "local"
	}
	return fmt.Sprintf("FailureMode(%d)", uint8(m))
}

// ParseFailureMode reads "fail-open", "fail-closed" or "local".
func ParseFailureMode(text string) (FailureMode, error) {
	names := make([]string, 0, 3)
	for _, m := range FailureModes() {
		if m.String() == strings.TrimSpace(text) {
			return m, nil
		}
		names = append(names, m.String())
	}
	return 0, fmt.Errorf("unknown failure mode %q%s (known: %s)", text, wording.DidYouMean(text, names), strings.Join(names, ", "))
}

// FailurePolicy is a remote limiter's answer for when its store cannot decide: wait at most
// Timeout for the store, then decide by Mode. 100/s against Redis with Timeout 50ms and
// FailLocal with a token bucket of the same spec: a request whose round trip has not come
// back after 50ms is decided by the local bucket, and the store's error is reported beside
// the decision.
type FailurePolicy struct {
	Mode FailureMode
	// Timeout is the longest a decision waits for the store, round trip included; past it the
	// store counts as unreachable. It must be positive.
	Timeout time.Duration
	// Local decides while the store is unreachable, for FailLocal (and must be nil for the
	// other modes). It is usually a limiter of the remote one's own spec: each instance then
	// admits up to the full limit on its own.
	Local Limiter
}

// Validate refuses a mode that is none of FailureModes, a non-positive timeout, FailLocal
// without a local limiter and a local limiter for a mode that would not use it.
func (p FailurePolicy) Validate() error {
	switch p.Mode {
	case FailOpen, FailClosed, FailLocal:
	default:
		return fmt.Errorf("limiters: failure policy: mode=%s: must be fail-open, fail-closed or local", p.Mode)
	}
	if p.Timeout <= 0 {
		return fmt.Errorf("limiters: failure policy: timeout=%s: must be positive", FormatDuration(p.Timeout))
	}
	if p.Mode == FailLocal && p.Local == nil {
		return fmt.Errorf("limiters: failure policy: mode=local: a local limiter is required")
	}
	if p.Mode != FailLocal && p.Local != nil {
		return fmt.Errorf("limiters: failure policy: mode=%s: a local limiter is only used by mode=local", p.Mode)
	}
	return nil
}

// String is "fail-open, timeout 50ms", or "local (token-bucket:capacity=3,rate=100/1s),
// timeout 50ms".
func (p FailurePolicy) String() string {
	if p.Mode == FailLocal && p.Local != nil {
		return fmt.Sprintf("local (%s), timeout %s", p.Local, FormatDuration(p.Timeout))
	}
	return fmt.Sprintf("%s, timeout %s", p.Mode, FormatDuration(p.Timeout))
}

// Decide is the policy's decision for n permits at now when the store gave none; maxPermits
// is the remote limiter's MaxPermits. A request no limiter of that size could ever admit is
// Invalid (n ≤ 0) or Never (n > maxPermits) whatever the mode; otherwise FailOpen admits,
// FailClosed refuses and FailLocal asks Local at now.
func (p FailurePolicy) Decide(now time.Duration, n, maxPermits int) Decision {
	if d := CheckN(n, maxPermits); d != Admitted {
		return d
	}
	switch p.Mode {
	case FailOpen:
		return Admitted
	case FailLocal:
		if p.Local != nil {
			return p.Local.AcquireAt(now, n)
		}
	}
	return Rejected
}

// Available is what the policy lets a request at now take while the store is unreachable:
// maxPermits when failing open, nothing when failing closed, Local's own when local.
func (p FailurePolicy) Available(now time.Duration, maxPermits int) int {
	switch p.Mode {
	case FailOpen:
		return maxPermits
	case FailLocal:
		if p.Local != nil {
			return min(p.Local.AvailableAt(now), maxPermits)
		}
	}
	return 0
}
