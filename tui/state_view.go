package tui

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ratelab/ratelab/limiters"
)

// stateLines draws a limiter's State the way the algorithms document draws it, in at most k
// lines of at most width cells, the most telling line first. It draws by the kind's shape
// (limiters.Shape), never by the kind's name:
//
//	schedule (token, leaky bucket): TAT 80ms, 20ms ahead · T 10ms · 1/3 free
//	                                now├▓▓▓▓▓▓▓▓▓▓▓▓●·······┤τ 30ms
//	ramp (warm-up), in addition:    ramp[━━━━━━╸──────] age 3.2s of 10s, 45% of the rate
//	slots (sliding window):         live 37 of 100 · 10 slots of 100ms · ~n stale
//	                                │ 3│ 9│~4│ .│12│ 8│ 5│ .│ .│ 1│
//	window (fixed window):          window [1s, 2s) · resets in 430ms
//	                                [██████░░░░░░░░░░] 37 of 100 used
//	bulkhead (concurrency):         4 of 5 in flight · 1 free
//	                                [████████████████░░░░]
//	adaptive (aimd, vegas, …):      limit 24 · 20 in flight · 4 free
//	                                [████████████████░░░░]
//	                                RTT 212ms · no-load 200ms · 3 probes
//	level (token-counting peers):   stored permits 3.5 of 10 · next free now
//	                                [███████░░░░░░░░░░░░░] 3.5/10
func stateLines(st limiters.State, width, k int, sty Styles) []string {
	if k <= 0 || width <= 0 {
		return nil
	}
	var lines []string
	switch st.Shape() {
	case limiters.ShapeSchedule, limiters.ShapeRamp:
		lines = gcraLines(st, width, k, sty)
	case limiters.ShapeSlots:
		lines = slidingLines(st, width, k, sty)
	case limiters.ShapeWindow:
		lines = fixedLines(st, width, k, sty)
	case limiters.ShapeBulkhead:
		lines = concurrencyLines(st, width, k, sty)
	case limiters.ShapeAdaptive:
		lines = adaptiveLines(st, width, k, sty)
	case limiters.ShapeLevel:
		lines = levelLines(st, width, k, sty)
	default:
		lines = []string{fmt.Sprintf("%s · %d free", st.Kind, st.Available)}
	}
	if len(lines) > k {
		lines = lines[:k]
	}
	return lines
}

func gcraLines(st limiters.State, width, k int, sty Styles) []string {
	backlog := st.Backlog()
	free := fmt.Sprintf("%d/%d free", st.Available, st.MaxPermits)
	// The numbers, shorter when the panel is narrow: T goes first, then the backlog.
	var numbers string
	if backlog > 0 {
		numbers = firstFitting(width,
			fmt.Sprintf("TAT %s (+%s) · T %s · %s", short(st.Arrival), short(backlog), short(st.Interval), free),
			fmt.Sprintf("TAT %s (+%s) · %s", short(st.Arrival), short(backlog), free),
			fmt.Sprintf("TAT %s · %s", short(st.Arrival), free))
	} else {
		numbers = firstFitting(width,
			fmt.Sprintf("TAT ≤ now (full) · T %s · %s", short(st.Interval), free),
			fmt.Sprintf("TAT ≤ now (full) · %s", free))
	}
	schedule := gcraSchedule(st, width, sty)
	if st.Shape() != limiters.ShapeRamp {
		if k == 1 {
			return []string{gcraSchedule(st, width-len(free)-1, sty) + " " + free}
		}
		return []string{numbers, schedule, gcraRule(st, width)}
	}
	rate := 100.0
	if st.Interval > 0 {
		rate = 100 * float64(st.SteadyInterval) / float64(st.Interval)
	}
	var ramp string
	if st.Age < st.WarmUp {
		ramp = fmt.Sprintf("warming %s/%s, T %s · %s", short(st.Age), short(st.WarmUp), short(st.Interval), free)
	} else {
		ramp = fmt.Sprintf("warm · T %s · %s", short(st.Interval), free)
	}
	switch {
	case k == 1:
		return []string{ramp}
	case k == 2:
		return []string{ramp, schedule}
	}
	label := fmt.Sprintf(" %.0f%% of the rate (T→%s)", rate, short(st.SteadyInterval))
	rampBar := "ramp[" + sty.Bar.Render(rampGlyphs(st, width-6-len(label))) + "]" + label
	return []string{numbers, schedule, rampBar, ramp, gcraRule(st, width)}
}

// gcraRule is the admission test for one more permit with the state's numbers:
// backlog + T ≤ τ, where backlog = max(TAT − now, 0): "backlog+T 10ms ≤ τ 30ms: 1 more fits"
// (at most 39 cells for durations of up to six characters).
func gcraRule(st limiters.State, width int) string {
	after := st.Backlog() + st.Interval
	test := fmt.Sprintf("backlog+T %s ≤ τ %s", short(after), short(st.Tolerance))
	verdict := "1 more fits"
	if after > st.Tolerance {
		test = fmt.Sprintf("backlog+T %s > τ %s", short(after), short(st.Tolerance))
		verdict = "1 more refused"
	}
	short := "fits"
	if after > st.Tolerance {
		short = "refused"
	}
	return firstFitting(width, test+": "+verdict, test+": "+short, test)
}

// firstFitting is the first of the texts that fits in width cells, else the last.
func firstFitting(width int, texts ...string) string {
	for _, t := range texts {
		if ansi.StringWidth(t) <= width {
			return t
		}
	}
	return texts[len(texts)-1]
}

// gcraSchedule draws [now, now+τ]: the backlog (TAT − now) filled, TAT marked ●.
func gcraSchedule(st limiters.State, width int, sty Styles) string {
	tail := "┤τ " + short(st.Tolerance)
	bw := width - 4 - len([]rune(tail))
	if bw < 4 {
		return fmt.Sprintf("ahead %s of τ %s", short(st.Backlog()), short(st.Tolerance))
	}
	filled := 0
	if st.Tolerance > 0 {
		filled = int(float64(bw) * float64(st.Backlog()) / float64(st.Tolerance))
	}
	filled = min(max(filled, 0), bw-1)
	return "now├" + sty.Bar.Render(strings.Repeat("▓", filled)) + "●" + sty.Dim.Render(strings.Repeat("·", bw-filled-1)) + tail
}

func rampGlyphs(st limiters.State, w int) string {
	if w < 2 {
		return ""
	}
	frac := 1.0
	if st.WarmUp > 0 && st.Age < st.WarmUp {
		frac = float64(st.Age) / float64(st.WarmUp)
	}
	done := min(int(frac*float64(w)), w)
	if done == w {
		return strings.Repeat("━", w)
	}
	return strings.Repeat("━", done) + "╸" + strings.Repeat("─", w-done-1)
}

func slidingLines(st limiters.State, width, k int, sty Styles) []string {
	head := fmt.Sprintf("live %d/%d · %d×%s slots · ~n stale", st.Count, st.Limit, len(st.Slots), short(st.SlotLength))
	cells, per := slotCells(st, width, sty)
	if per > 1 {
		head = fmt.Sprintf("live %d/%d · %d×%s slots, %d a cell · ~n stale", st.Count, st.Limit, len(st.Slots), short(st.SlotLength), per)
	}
	if k == 1 {
		prefix := fmt.Sprintf("%d/%d", st.Count, st.Limit)
		cells, _ = slotCells(st, width-len(prefix), sty)
		return []string{prefix + cells}
	}
	lines := []string{head, cells}
	if k >= 3 {
		expiry := "nothing counted"
		for _, s := range st.Slots {
			if s.Live && s.Count > 0 {
				expiry = fmt.Sprintf("oldest live slot (%d) expires at %s", s.Count, short(s.Start+st.Window))
				break
			}
		}
		// A window that began before the run is drawn from 0: nothing happened before it.
		lines = append(lines, fmt.Sprintf("window [%s, %s) · %s", short(max(st.WindowStart, 0)), short(st.WindowEnd), expiry))
	}
	return lines
}

// slotCells draws the slots oldest first, the current one last: a live slot's count ("."
// when empty), a stale generation's leftover count as "~n" (ignored by reads). When the
// slots do not fit, neighbours share a cell; per says how many.
func slotCells(st limiters.State, width int, sty Styles) (string, int) {
	n := len(st.Slots)
	if n == 0 || width < 4 {
		return "", 1
	}
	maxCells := max((width-1)/3, 1)
	per := (n + maxCells - 1) / maxCells
	cells := (n + per - 1) / per
	cw := min((width-1)/cells, 5) // separator + content
	content := cw - 1
	type cell struct {
		live, stale int
		anyLive     bool
	}
	all := make([]cell, cells)
	numbers := true // every count fits as a number; otherwise bars against the limit
	for c := range all {
		for _, s := range st.Slots[c*per : min((c+1)*per, n)] {
			if s.Live {
				all[c].anyLive = true
				all[c].live += s.Count
			} else {
				all[c].stale += s.StaleCount
			}
		}
		numbers = numbers && len(fmt.Sprint(all[c].live)) <= content
	}
	var b strings.Builder
	for _, c := range all {
		b.WriteString(sty.Dim.Render("│"))
		switch {
		case c.live > 0 && numbers:
			b.WriteString(fitRight(fmt.Sprint(c.live), content))
		case c.live > 0:
			level := min(max(c.live*8/max(st.Limit, 1), 1), 8)
			b.WriteString(strings.Repeat(" ", content-1) + string(eighths[level]))
		case c.stale > 0 && !c.anyLive && numbers && len(fmt.Sprint(c.stale))+1 <= content:
			b.WriteString(sty.Stale.Render(fitRight("~"+fmt.Sprint(c.stale), content)))
		case c.stale > 0 && !c.anyLive:
			b.WriteString(sty.Stale.Render(fitRight("~", content)))
		case c.anyLive:
			b.WriteString(sty.Dim.Render(fitRight(".", content)))
		default:
			b.WriteString(strings.Repeat(" ", content))
		}
	}
	b.WriteString(sty.Dim.Render("│"))
	return b.String(), per
}

// fitRight right-aligns s in w cells, or shows # when it does not fit.
func fitRight(s string, w int) string {
	if len(s) > w {
		return strings.Repeat("#", w)
	}
	return strings.Repeat(" ", w-len(s)) + s
}

func fixedLines(st limiters.State, width, k int, sty Styles) []string {
	used := fmt.Sprintf(" %d of %d used", st.Count, st.Limit)
	bar := meter(st.Count, st.Limit, width-len(used), sty) + used
	head := fmt.Sprintf("window [%s, %s) · resets in %s", short(st.WindowStart), short(st.WindowEnd), short(st.WindowEnd-st.At))
	if k == 1 {
		return []string{bar}
	}
	return []string{head, bar}
}

func concurrencyLines(st limiters.State, width, k int, sty Styles) []string {
	head := fmt.Sprintf("%d of %d in flight · %d free", st.InFlight, st.Max, st.Max-st.InFlight)
	if k == 1 {
		label := fmt.Sprintf(" %d/%d in flight", st.InFlight, st.Max)
		return []string{meter(st.InFlight, st.Max, width-len(label), sty) + label}
	}
	return []string{head, meter(st.InFlight, st.Max, width, sty)}
}

// adaptiveLines is a bulkhead whose max is the limit now, and the RTTs its rule compares.
func adaptiveLines(st limiters.State, width, k int, sty Styles) []string {
	head := fmt.Sprintf("limit %d · %d in flight · %d free", st.Max, st.InFlight, st.Available)
	if k == 1 {
		label := fmt.Sprintf(" %d/%d", st.InFlight, st.Max)
		return []string{meter(st.InFlight, st.Max, width-len(label), sty) + label}
	}
	rtt := "no sample yet"
	if st.RTT > 0 {
		rtt = "RTT " + short(st.RTT)
		if st.RTTNoLoad > 0 {
			rtt += " · no-load " + short(st.RTTNoLoad)
		}
	}
	if st.Probes > 0 {
		rtt += fmt.Sprintf(" · %d probes", st.Probes)
	}
	return []string{head, meter(st.InFlight, st.Max, width, sty), firstFitting(width, rtt, strings.SplitN(rtt, " · ", 2)[0])}
}

func levelLines(st limiters.State, width, k int, sty Styles) []string {
	next := "now"
	if st.NextFree > st.At {
		next = "in " + short(st.NextFree-st.At)
	}
	head := fmt.Sprintf("%s %s of %s · next free %s", st.LevelName, levelText(st.Level), levelText(st.LevelMax), next)
	label := fmt.Sprintf(" %s/%s", levelText(st.Level), levelText(st.LevelMax))
	const scale = 1000 // meter takes whole numbers: the level in thousandths
	bar := meter(int(st.Level*scale), int(st.LevelMax*scale), width-len(label), sty) + label
	if k == 1 {
		return []string{bar}
	}
	return []string{head, bar}
}

// levelText prints a level with at most two decimals: 3, 3.5, 0.25.
func levelText(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }

// meter is [████░░░░] of used against limit, width cells including the brackets.
func meter(used, limit, width int, sty Styles) string {
	w := width - 2
	if w < 1 || limit <= 0 {
		return ""
	}
	filled := min(max(used*w/limit, 0), w)
	if used > 0 && filled == 0 {
		filled = 1
	}
	return "[" + sty.Bar.Render(strings.Repeat("█", filled)) + sty.Dim.Render(strings.Repeat("░", w-filled)) + "]"
}

// short formats a duration for a narrow column: limiters.ShortDuration, at most four
// significant digits (1.0105263s → 1.011s, 57.5ms, 250µs), as the page shows them too.
func short(d time.Duration) string { return limiters.ShortDuration(d) }
