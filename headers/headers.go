// Package headers says what an HTTP server would send with each of a limiter's decisions:
// the RateLimit-Policy and RateLimit fields of draft-ietf-httpapi-ratelimit-headers (its
// structured-field form, drafts 08 to 10), the older X-RateLimit-Limit / -Remaining / -Reset
// convention, and Retry-After, all read from the limiter's own state at the decision.
//
// A token bucket of capacity 10 at 100/s (policy "token-bucket": 100 per 1s) that has just
// admitted 4 requests at once answers the fourth with
//
//	RateLimit-Policy: "token-bucket";q=100;w=1
//	RateLimit: "token-bucket";r=6;t=1
//	X-RateLimit-Limit: 100
//	X-RateLimit-Remaining: 6
//	X-RateLimit-Reset: 1
//
// and, had it refused, with Retry-After: 1 (the 10ms until the next permit, rounded up to a
// whole second: a refusal never says 0). The promise that matters to a client — one that
// waits exactly Retry-After is admitted, if nobody else takes the permits meanwhile — is
// checked for every kind that can say when (golden's retry-after-admits). A kind that
// cannot (a bulkhead has no time axis: its permits come back when work ends) advertises
// qu="concurrent-requests" and sends no t and no Retry-After.
//
// A stack answers with one policy per stage, named after its kind (a second stage of the
// same kind gets "-2"); the X- fields and Retry-After speak for the refusing stage, or, when
// every stage admitted, for the one with the fewest permits left. A keyed stage's policy
// carries the request's key as its partition key (pk).
package headers

import (
	"encoding/base64"
	"strconv"
	"time"

	"github.com/ratelab/ratelab/limiters"
)

// Policy is one stage's advertised quota: its name in the fields, and whether it is kept
// per key.
type Policy struct {
	Name  string
	Keyed bool
	limiters.QuotaPolicy
}

// Policies are the policies of a stack of specs, first to last, named after their kinds.
func Policies(specs []limiters.Spec) []Policy {
	out := make([]Policy, len(specs))
	seen := map[string]int{}
	for i, spec := range specs {
		name := string(spec.Kind())
		seen[name]++
		if n := seen[name]; n > 1 {
			name += "-" + strconv.Itoa(n)
		}
		_, keyed := spec.(limiters.KeyedSpec)
		out[i] = Policy{Name: name, Keyed: keyed, QuotaPolicy: limiters.PolicyOf(spec)}
	}
	return out
}

// Answer is what a server knows about one decision: the decision, which stage made it, each
// stage's quota just after it, and when a refused request would pass.
type Answer struct {
	Decision   limiters.Decision
	Stage      int              // the refusing stage, from 0; len(Quotas) when every stage admitted
	Quotas     []limiters.Quota // each stage's quota after the decision
	RetryAfter time.Duration    // refused: how long until the same request would pass
	RetryOK    bool             // refused, and the refusing stage can say when
	Key        string           // the request's key, for keyed stages' pk
}

// AnswerOf reads the answer to a request for n permits at now from stages (a stack's
// limiters after the decision d made by stage; stage = len(stages) when all admitted).
// It appends to quotas' storage.
func AnswerOf(stages []limiters.Limiter, policies []Policy, now time.Duration, n int, d limiters.Decision,
	stage int, key string, quotas []limiters.Quota) Answer {
	a := Answer{Decision: d, Stage: stage, Key: key, Quotas: quotas[:0]}
	for i, lim := range stages {
		a.Quotas = append(a.Quotas, limiters.QuotaAt(lim, now, policies[i].QuotaPolicy))
	}
	if d != limiters.Admitted && stage < len(stages) {
		if ra, ok := stages[stage].(limiters.RetryAfter); ok && policies[stage].Unit == limiters.UnitRequests {
			a.RetryAfter, a.RetryOK = ra.RetryAfterAt(now, n)
		}
	}
	return a
}

// Fields are the header fields of one answer, each "" when not sent.
type Fields struct {
	RateLimitPolicy     string
	RateLimit           string
	XRateLimitLimit     string
	XRateLimitRemaining string
	XRateLimitReset     string
	RetryAfter          string
}

// Style chooses which fields are sent and how X-RateLimit-Reset is written.
type Style struct {
	Draft      bool // RateLimit-Policy and RateLimit
	X          bool // X-RateLimit-Limit, -Remaining, -Reset
	RetryAfter bool // Retry-After on a refusal
	// ResetEpoch writes X-RateLimit-Reset as the Unix time in seconds at which the quota
	// resets (as GitHub does), from Epoch, the wall-clock time of the decision; otherwise
	// as seconds from now (as the draft's t does).
	ResetEpoch bool
}

// AllFields is every field, X-RateLimit-Reset in seconds from now.
var AllFields = Style{Draft: true, X: true, RetryAfter: true}

// Seconds is d as the whole seconds a header carries, rounded up: a client that waits that
// long has waited at least d.
func Seconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d-1)/time.Second) + 1
}

// RetryAfterSeconds is the Retry-After of a refusal that would pass after wait: rounded up,
// and at least 1 (0 would tell a client to come back at once, to be refused again within the
// same second).
func RetryAfterSeconds(wait time.Duration) int64 { return max(Seconds(wait), 1) }

// Fields writes a's fields under policies in style; epoch is the decision's Unix time, read
// only for Style.ResetEpoch.
func (a Answer) Fields(policies []Policy, style Style, epoch time.Time) Fields {
	var f Fields
	speak := a.speaker()
	if style.Draft {
		// Appended into one stack buffer each, so that a field costs one allocation, its
		// string (a middleware's answer is on every request's path).
		var polBuf, rlBuf [256]byte
		pol, rl := polBuf[:0], rlBuf[:0]
		for i, p := range policies {
			if i > 0 {
				pol = append(pol, ", "...)
				rl = append(rl, ", "...)
			}
			pol = appendItem(pol, p.Name)
			pol = append(pol, ";q="...)
			pol = strconv.AppendInt(pol, p.Quota, 10)
			if p.Unit != limiters.UnitRequests {
				pol = append(pol, `;qu="`...)
				pol = append(pol, p.Unit...)
				pol = append(pol, '"')
			}
			if p.Window > 0 {
				pol = append(pol, ";w="...)
				pol = strconv.AppendInt(pol, int64(p.Window/time.Second), 10)
			}
			rl = appendItem(rl, p.Name)
			rl = append(rl, ";r="...)
			rl = strconv.AppendInt(rl, int64(max(a.Quotas[i].Remaining, 0)), 10)
			if a.Quotas[i].ResetOK {
				rl = append(rl, ";t="...)
				rl = strconv.AppendInt(rl, Seconds(a.Quotas[i].Reset), 10)
			}
			if p.Keyed {
				pk := len(pol)
				pol = append(pol, ";pk=:"...)
				pol = base64.StdEncoding.AppendEncode(pol, []byte(a.Key))
				pol = append(pol, ':')
				rl = append(rl, pol[pk:]...)
			}
		}
		f.RateLimitPolicy, f.RateLimit = string(pol), string(rl)
	}
	if style.X && speak >= 0 {
		q := a.Quotas[speak]
		f.XRateLimitLimit = strconv.FormatInt(policies[speak].Quota, 10)
		f.XRateLimitRemaining = strconv.Itoa(max(q.Remaining, 0))
		if q.ResetOK {
			s := Seconds(q.Reset)
			if style.ResetEpoch {
				s = epochCeil(epoch.Add(q.Reset)) // the instant of the reset, rounded up once
			}
			f.XRateLimitReset = strconv.FormatInt(s, 10)
		}
	}
	if style.RetryAfter && a.Decision == limiters.Rejected && a.RetryOK {
		f.RetryAfter = strconv.FormatInt(RetryAfterSeconds(a.RetryAfter), 10)
	}
	return f
}

// speaker is the stage the X- fields speak for: the refusing one, or the one with the fewest
// permits left (the first of equals); -1 for none.
func (a Answer) speaker() int {
	if a.Stage < len(a.Quotas) {
		return a.Stage
	}
	best := -1
	for i, q := range a.Quotas {
		if best < 0 || q.Remaining < a.Quotas[best].Remaining {
			best = i
		}
	}
	return best
}

// epochCeil is t's Unix time in whole seconds, rounded up.
func epochCeil(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}

// appendItem appends name as a structured-field String (RFC 9651 §3.3.3): quoted, with \ and
// " escaped; other bytes outside printable ASCII are replaced by '?', which a String cannot
// hold.
func appendItem(b []byte, name string) []byte {
	b = append(b, '"')
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '\\' || c == '"':
			b = append(b, '\\', c)
		case c < 0x20 || c > 0x7e:
			b = append(b, '?')
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}
