package plots

import (
	"fmt"
	"image/color"
	"slices"
	"strconv"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// timeUnit is the time axis's unit: milliseconds for runs of 2s or less, else seconds.
func timeUnit(horizon time.Duration) (per time.Duration, name string) {
	if horizon <= 2*time.Second {
		return time.Millisecond, "ms"
	}
	return time.Second, "s"
}

func toUnit(d, per time.Duration) float64 { return float64(d) / float64(per) }

func laneColors(sc *engine.Scenario) []color.Color {
	var out []color.Color
	for _, l := range sc.Lanes {
		c := LaneColor(l)
		if !slices.ContainsFunc(out, func(o color.Color) bool { return sameColor(o, c) }) {
			out = append(out, c)
		}
	}
	return out
}

func sameColor(a, b color.Color) bool {
	r1, g1, b1, a1 := a.RGBA()
	r2, g2, b2, a2 := b.RGBA()
	return r1 == r2 && g1 == g2 && b1 == b2 && a1 == a2
}

func fmtDur(d time.Duration) string { return limiters.FormatDuration(d) }

// clientText describes what a refused client does.
func clientText(c engine.Client) string {
	switch c.Policy {
	case engine.PolicyRetry:
		return fmt.Sprintf("retry every %s, %d attempts", fmtDur(c.Delay), c.MaxAttempts)
	case engine.PolicyBackoff:
		s := fmt.Sprintf("backoff from %s", fmtDur(c.Delay))
		if c.MaxDelay > 0 {
			s += " to " + fmtDur(c.MaxDelay)
		}
		if c.Jitter {
			s += " with jitter"
		}
		return fmt.Sprintf("%s, %d attempts", s, c.MaxAttempts)
	case engine.PolicyRetryAfter:
		return fmt.Sprintf("retry at the Retry-After hint, %d attempts", c.MaxAttempts)
	case engine.PolicyRetryAfterHeader:
		s := "retry at the Retry-After header's seconds"
		if c.MaxDelay > 0 {
			s += " up to " + fmtDur(c.MaxDelay)
		}
		if c.Jitter {
			s += " plus jitter to " + fmtDur(c.Delay)
		}
		return fmt.Sprintf("%s, %d attempts", s, c.MaxAttempts)
	case engine.PolicyAWSStandard, engine.PolicyAWSAdaptive, engine.PolicyRetryableHTTP, engine.PolicyRetryableLin:
		d := c.WithDefaults()
		s := fmt.Sprintf("%s from %s to %s, %d attempts", c.Policy, fmtDur(d.Delay), fmtDur(d.MaxDelay), d.MaxAttempts)
		switch {
		case c.Policy != engine.PolicyAWSStandard && c.Policy != engine.PolicyAWSAdaptive:
		case d.RetryQuota == engine.NoRetryQuota:
			s += ", no retry quota"
		default:
			s += fmt.Sprintf(", retry quota %d", d.RetryQuota)
		}
		if c.Policy == engine.PolicyAWSAdaptive {
			s += ", paced by its token bucket after a throttle"
		}
		return s
	case engine.PolicyOctokit:
		s := "octokit: one retry at the reset plus 1s"
		if c.Group != "" {
			s += ", " + c.Group + " group"
		}
		return s
	case engine.PolicyStripe:
		return "stripe-go: a 429 is never retried"
	case engine.PolicyStripeLock:
		return fmt.Sprintf("stripe-go, refusals as lock_timeout: 500ms·(1+n²) up to 5s, %d attempts", c.WithDefaults().MaxAttempts)
	case engine.PolicyHeaderPaced:
		return fmt.Sprintf("paced by X-RateLimit-Remaining and -Reset; refused, retry at Retry-After, %d attempts", c.MaxAttempts)
	case engine.PolicyCenkalti:
		d := c.WithDefaults()
		s := fmt.Sprintf("cenkalti-backoff from %s to %s, up to %s", fmtDur(d.Delay), fmtDur(d.MaxDelay), fmtDur(d.MaxElapsed))
		if d.MaxAttempts > 0 {
			s += fmt.Sprintf(", %d attempts", d.MaxAttempts)
		}
		return s
	case engine.PolicyQueue:
		return fmt.Sprintf("queue of %d, timeout %s", c.QueueSize, fmtDur(c.Timeout))
	}
	return "refused requests are dropped"
}

// runText is the subtitle's common part: seed, virtual time, offered traffic, client.
func runText(sc *engine.Scenario, res *engine.Results) string {
	var offered int64
	if len(res.Lanes) > 0 {
		offered = res.Lanes[0].Totals.Offered
	}
	own := 0
	for _, l := range sc.Lanes {
		if l.Client != nil {
			own++
		}
	}
	client := clientText(sc.Client)
	switch {
	case own == len(sc.Lanes) && own > 0:
		client = "each lane has its own client"
	case own > 0:
		client += "; some lanes have their own client"
	}
	return fmt.Sprintf("seed %d · %s of virtual time · %d requests offered to every lane · %s",
		res.Seed, fmtDur(res.Horizon), offered, client)
}

// laneTitle is lane i's name, with its client when it has its own.
func laneTitle(sc *engine.Scenario, res *engine.Results, i int) string {
	if c := sc.Lanes[i].Client; c != nil {
		return res.Lanes[i].Name + " · " + clientText(*c)
	}
	return res.Lanes[i].Name
}

// span is a display bin: [start, start+dur) and the sums (or maxima) of the engine bins in it.
type span struct {
	start, dur                                  time.Duration
	offered, attempts, admitted, rejected, fail int64
	maxInFlight, maxQueue                       int
}

// group merges every g consecutive engine bins; the last may be shorter (the horizon).
func group(bins []engine.Bin, width, horizon time.Duration, g int) []span {
	var out []span
	for i := 0; i < len(bins); i += g {
		s := span{start: bins[i].Start}
		end := min(bins[i].Start+time.Duration(g)*width, horizon)
		s.dur = end - s.start
		for _, b := range bins[i:min(i+g, len(bins))] {
			s.offered += b.Offered
			s.attempts += b.Attempts
			s.admitted += b.Admitted
			s.rejected += b.RefusedAttempts
			s.fail += b.Failed
			s.maxInFlight = max(s.maxInFlight, b.MaxInFlight)
			s.maxQueue = max(s.maxQueue, b.MaxQueue)
		}
		out = append(out, s)
	}
	return out
}

// stepSeries makes a post-step series over spans: one point at each span's start and a last
// one at the end, so that the last value is drawn to the horizon.
func stepSeries(label string, role Role, c color.Color, spans []span, per time.Duration, value func(span) float64) Series {
	s := Series{Label: label, Role: role, Color: c, Step: true}
	for _, sp := range spans {
		s.X = append(s.X, toUnit(sp.start, per))
		s.Y = append(s.Y, value(sp))
	}
	if n := len(spans); n > 0 {
		last := spans[n-1]
		s.X = append(s.X, toUnit(last.start+last.dur, per))
		s.Y = append(s.Y, value(last))
	}
	return s
}

func perSecond(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// shortDur is d with at most three significant digits: "0.23ms", "987ms", "1.5s".
func shortDur(d time.Duration) string {
	if d < time.Second {
		return strconv.FormatFloat(float64(d)/1e6, 'g', 3, 64) + "ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'g', 4, 64) + "s"
}

func panelHeight(n int) int {
	switch {
	case n <= 1:
		return 380
	case n <= 3:
		return 190
	}
	return 150
}
