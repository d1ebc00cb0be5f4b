package translate

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/limiters"
)

// Intent is what a user means by "100 per second, bursts of 20": a steady Rate, and Burst
// requests admitted at once after an idle. It is exactly ratelab's
// token-bucket:capacity=Burst,rate=Rate, the reference every translation is run against.
type Intent struct {
	Rate  limiters.Rate
	Burst int
}

// maxBurst is the largest burst ratelab translates: the smallest limit among the kinds it
// translates into (nginx takes a burst of at most 1,000,000).
const maxBurst = 1_000_000

// ParseIntent reads "rate=100/1s,burst=20" (the fields in any order; "100/s" is "100/1s").
// An error names the field: `burst: "x" is not a whole number`.
func ParseIntent(text string) (Intent, error) {
	var in Intent
	seen := map[string]bool{}
	if strings.TrimSpace(text) == "" {
		return in, fmt.Errorf("an intent is rate=PERMITS/WINDOW,burst=N, e.g. rate=100/1s,burst=20")
	}
	for _, part := range strings.Split(text, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return in, fmt.Errorf("%q: expected name=value (rate=100/1s,burst=20)", part)
		}
		if seen[name] {
			return in, fmt.Errorf("%s: given twice", name)
		}
		seen[name] = true
		switch name {
		case "rate":
			r, err := limiters.ParseRate(value)
			if err != nil {
				return in, fmt.Errorf("rate: %v", err)
			}
			in.Rate = r
		case "burst":
			b, err := strconv.Atoi(value)
			if err != nil {
				return in, fmt.Errorf("burst: %q is not a whole number", value)
			}
			in.Burst = b
		default:
			return in, fmt.Errorf("%s: unknown field (an intent has rate and burst)", name)
		}
	}
	for _, name := range []string{"rate", "burst"} {
		if !seen[name] {
			return in, fmt.Errorf("%s: required (rate=100/1s,burst=20)", name)
		}
	}
	return in, in.Validate()
}

// Validate refuses a burst below 1 or above 1,000,000 and a rate the token bucket refuses;
// it also refuses an intent whose burst lasts 2⁶⁰ns or more (Burst × T), so that every
// translated window and the probe's times stay far inside ratelab's time range.
func (in Intent) Validate() error {
	if in.Burst < 1 || in.Burst > maxBurst {
		return fmt.Errorf("burst: must be 1 to %d, got %d", maxBurst, in.Burst)
	}
	if err := in.Reference().Validate(); err != nil {
		return fmt.Errorf("rate: %v", err)
	}
	if T := in.Rate.Interval(); T > (1<<60)/time.Duration(1000*in.Burst) {
		return fmt.Errorf("rate: %s with burst %d: the probe would span beyond 2^60ns", in.Rate, in.Burst)
	}
	return nil
}

// String is "rate=100/1s,burst=20".
func (in Intent) String() string { return fmt.Sprintf("rate=%s,burst=%d", in.Rate, in.Burst) }

// Reference is ratelab's token bucket of the intent: capacity Burst, the intent's rate.
func (in Intent) Reference() limiters.TokenBucketSpec {
	return limiters.TokenBucketSpec{Capacity: in.Burst, Rate: in.Rate}
}

// Interval is T, the reference's emission interval (Window/Permits rounded up to a whole ns).
func (in Intent) Interval() time.Duration { return in.Rate.Interval() }

// PerSecond is the rate in permits per second.
func (in Intent) PerSecond() float64 {
	return float64(in.Rate.Permits) * float64(time.Second) / float64(in.Rate.Window)
}

// BurstSpan is Burst × T: the window a window limiter of limit Burst needs for the intent's
// rate (20 at 100/1s: 200ms).
func (in Intent) BurstSpan() time.Duration { return time.Duration(in.Burst) * in.Interval() }

// exactInterval reports whether Window is a whole number of Permits nanoseconds, so that T is
// exact and not rounded up.
func (in Intent) exactInterval() bool { return int64(in.Rate.Window)%int64(in.Rate.Permits) == 0 }

// wholePerSecond is the rate as whole permits per second, if it is one.
func (in Intent) wholePerSecond() (int64, bool) {
	p, w := int64(in.Rate.Permits), int64(in.Rate.Window)
	// permits·1s/window, without overflow for any valid rate: p ≤ w.
	n, rem := mulDiv(p, int64(time.Second), w)
	return n, rem == 0 && n > 0
}

// wholePerMinute is the rate as whole permits per minute, if it is one.
func (in Intent) wholePerMinute() (int64, bool) {
	n, rem := mulDiv(int64(in.Rate.Permits), int64(time.Minute), int64(in.Rate.Window))
	return n, rem == 0 && n > 0
}

// mulDiv is ⌊a·b/c⌋ and its remainder, for a, b, c > 0 with a·b/c within an int64.
func mulDiv(a, b, c int64) (q, rem int64) {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return -1, 1 // does not fit: never whole
	}
	qu, ru := bits.Div64(hi, lo, uint64(c))
	return int64(qu), int64(ru)
}
