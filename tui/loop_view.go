package tui

import (
	"fmt"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// maxLoopRows is the most rows a lane's client loop takes in its panel: what the five
// measures need at 80 columns (a panel of 40 cells) when the herd shares no line, three when
// it does; two from 120 columns.
const maxLoopRows = 4

// loopAt is a lane's client loop as of now: what `run` says of the same scenario cut at now
// (its table's loop section, its CSV's and JSON's loop columns). The lane's own Result
// divides by the whole horizon; a run cut at now divides goodput (admitted per second) and
// the herd's mean (retries per 10ms bin) by now. Amplification, the herd's peak and the
// percentiles are counts so far either way. TestLoopMeasuresAreRuns compares them.
func loopAt(res *engine.LaneResult, now time.Duration) engine.Loop {
	l := res.Loop
	l.GoodputPerSec, l.HerdSynchrony = 0, 0
	if now > 0 {
		l.GoodputPerSec = float64(res.Totals.Admitted) / now.Seconds()
	}
	if bins := float64(now) / float64(engine.HerdBin); res.Totals.Retried > 0 && bins > 0 {
		l.HerdSynchrony = float64(l.HerdPeak) / (float64(res.Totals.Retried) / max(bins, 1))
	}
	return l
}

// loopItems are the loop's measures in run's words, most argued about first: goodput,
// amplification (attempts per offered request), the herd's synchrony (the most retries in a
// 10ms bin over their mean: about 1 when spread, ×2000 when they all come at once), the time
// to success and the end-to-end latency, p50 and p99.
func loopItems(l engine.Loop) []string {
	herd := "herd 0"
	if l.HerdPeak > 0 {
		herd = "herd ×" + threeDigits(l.HerdSynchrony)
	}
	return []string{
		"goodput " + threeDigits(l.GoodputPerSec) + "/s",
		fmt.Sprintf("amplification %.2f", l.Amplification),
		herd,
		"success p50 " + roundedDuration(l.SuccessP50) + " p99 " + roundedDuration(l.SuccessP99),
		"latency p50 " + roundedDuration(l.LatencyP50) + " p99 " + roundedDuration(l.LatencyP99),
	}
}

// threeDigits is v to three significant digits, as run's table writes it, but 2000 for
// 2e+03.
func threeDigits(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// roundedDuration is d to three significant digits, as run's table writes it (158ms for
// 158.3ms, 20.4s for 20.41s).
func roundedDuration(d time.Duration) string {
	unit := time.Duration(1)
	for v := d; v >= 1000 && unit < time.Second; v /= 10 {
		unit *= 10
	}
	return limiters.FormatDuration(d.Round(unit))
}

// packLines puts items on at most rows lines of width cells, in order, " · " between two on
// one line; what does not fit is left out from the last (an item wider than a line is cut
// at a word).
func packLines(items []string, width, rows int) []string {
	var lines []string
	for _, item := range items {
		if n := len(lines); n > 0 && ansi.StringWidth(lines[n-1])+3+ansi.StringWidth(item) <= width {
			lines[n-1] += " · " + item
			continue
		}
		if len(lines) == rows {
			break
		}
		lines = append(lines, fitWords(item, width))
	}
	return lines
}

// loopLines is lane's client loop in at most rows lines of width cells, for a lane whose
// clients retry or pace themselves (engine.Client.Retries: retry-storm's, header-paced's);
// none for one whose clients drop a refusal, or before any time has passed.
func (m *Model) loopLines(lane *engine.Lane, res *engine.LaneResult, width, rows int) []string {
	client := m.sim.sc.Client
	if c := lane.Spec().Client; c != nil {
		client = *c
	}
	if !client.Retries() || m.sim.now <= 0 || rows <= 0 {
		return nil
	}
	return packLines(loopItems(loopAt(res, m.sim.now)), width, rows)
}
