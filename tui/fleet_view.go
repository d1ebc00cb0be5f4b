package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// fleetBarWidth is the most cells an instance's bar takes, brackets included.
const fleetBarWidth = 14

// fleetPanel is a fleet lane's panel beside its chart, rows lines of width cells: a row per
// instance with what it admitted (ok) and refused (no) so far and a bar of its admitted of
// its offered, then the fleet's total against the global limit. Three local instances of
// token-bucket:capacity=30,rate=150/1s at t=1s, offered 100 each, where one limiter admits 179:
//
//	#0 [████████████] ok 100 · no 0
//	#1 [████████████] ok 100 · no 0
//	#2 [████████████] ok 100 · no 0
//	total ok 300 · limit 179 (1.68×) · 1s max 300/179
//
// When the rows do not give each instance its own, the instances share one line ("ok/no #0
// 100/0 #1 100/0 #2 100/0"), and with a single row only the total stays. Numbers are never
// cut: what does not fit is left out whole, instances from the last.
func (m *Model) fleetPanel(lane *engine.Lane, f *engine.FleetResult, width, rows int) []string {
	total := m.fleetTotal(lane, f, width)
	if rows <= 1 {
		return []string{total}
	}
	note := m.instanceNotes(lane)
	if rows <= len(f.Instances) {
		return []string{compactInstances(f.Instances, note, width), total}
	}
	var okW, noW int
	for _, in := range f.Instances {
		okW = max(okW, len(strconv.FormatInt(in.Admitted, 10)))
		noW = max(noW, len(strconv.FormatInt(in.Offered-in.Admitted, 10)))
	}
	idW := len(strconv.Itoa(len(f.Instances) - 1))
	lines := make([]string, 0, len(f.Instances)+1)
	for k, in := range f.Instances {
		label := fmt.Sprintf("#%-*d ", idW, k)
		text := fmt.Sprintf(" ok %*d · no %*d", okW, in.Admitted, noW, in.Offered-in.Admitted)
		if note[k] != "" {
			text += " · " + note[k]
		}
		bar := ""
		if barW := min(width-ansi.StringWidth(label)-ansi.StringWidth(text), fleetBarWidth); barW >= 4 {
			bar = meter(int(in.Admitted), int(max(in.Offered, 1)), barW, m.styles)
		}
		lines = append(lines, fitWords(label+bar+text, width))
	}
	return append(lines, total)
}

// compactInstances is every instance on one line, "ok/no #0 100/0 #1 100/0 #2 100/0"; the
// instances that do not fit are counted at its end instead ("+7 more").
func compactInstances(instances []engine.InstanceResult, note []string, width int) string {
	parts := make([]string, len(instances))
	for k, in := range instances {
		parts[k] = fmt.Sprintf("#%d %d/%d", k, in.Admitted, in.Offered-in.Admitted)
		if note[k] != "" {
			parts[k] += " " + note[k]
		}
	}
	line := "ok/no " + strings.Join(parts, " ")
	for n := len(parts) - 1; n > 0 && ansi.StringWidth(line) > width; n-- {
		line = "ok/no " + strings.Join(parts[:n], " ") + fmt.Sprintf(" +%d more", len(parts)-n)
	}
	return fitWords(line, width)
}

// fleetTotal is the fleet's line: what all its instances admitted so far, against the
// limit — the most one limiter of the lane's spec could have admitted from 0 to now, which a
// single process keeps to — and how far over it; then the most admitted in one window of the
// spec against one limiter's bound for it (the run table's overshoot). Parts that do not fit
// are left out whole, from the last.
func (m *Model) fleetTotal(lane *engine.Lane, f *engine.FleetResult, width int) string {
	var admitted int64
	for _, in := range f.Instances {
		admitted += in.Admitted
	}
	parts := []string{fmt.Sprintf("total ok %d", admitted)}
	if limit, ok := limitSoFar(lane.Spec().Stack, m.sim.now); ok && limit > 0 {
		parts = append(parts, fmt.Sprintf("limit %d (%s×)", limit, strconv.FormatFloat(float64(admitted)/float64(limit), 'f', 2, 64)))
	}
	if f.Bound > 0 {
		parts = append(parts, fmt.Sprintf("%s max %d/%d", short(f.Window), f.MaxAdmitted, f.Bound))
	}
	return joinFit(parts, width)
}

// joinFit joins parts with " · ", leaving out whole parts from the last until the line fits
// in width cells (the first stays, cut between words if it must).
func joinFit(parts []string, width int) string {
	for len(parts) > 1 && ansi.StringWidth(strings.Join(parts, " · ")) > width {
		parts = parts[:len(parts)-1]
	}
	return fitWords(strings.Join(parts, " · "), width)
}

// limitSoFar is the most a single limiter of stack admits from 0 to now included, the
// half-open interval [0, now+1ns): the least of its stages' AdmissionBound. False when no
// stage has a time axis (a bulkhead, a keyed stage: one limit per key, no global one).
// token-bucket:capacity=30,rate=150/1s (T = 6,666,667ns) at now=1s: 30 + ⌈(1s+1ns)/T⌉ − 1 = 179.
func limitSoFar(stack []limiters.Spec, now time.Duration) (int64, bool) {
	return limiters.StackBound(stack, now+1)
}

// storeDown reports whether a central or async lane's store is out for every instance now
// (an outage fault without instances): the lane's title says so.
func (m *Model) storeDown(lane *engine.Lane) bool {
	if !hasStore(lane) {
		return false
	}
	for _, ft := range m.sim.sc.Faults {
		if ft.Kind == engine.FaultOutage && len(ft.Instances) == 0 && ft.From <= m.sim.now && m.sim.now < ft.Until {
			return true
		}
	}
	return false
}

// instanceNotes is what each instance of a fleet lane is besides its counts now: "down" when
// the balancer sends it nothing (a leave fault, or a join not yet come), "cut off" when a
// partition (an outage fault that lists it) cuts it from a central or async lane's store.
func (m *Model) instanceNotes(lane *engine.Lane) []string {
	live := lane.InstancesLive()
	note := make([]string, len(live))
	for k, up := range live {
		if !up {
			note[k] = "down"
		}
	}
	if !hasStore(lane) {
		return note
	}
	for _, ft := range m.sim.sc.Faults {
		if ft.Kind == engine.FaultOutage && ft.From <= m.sim.now && m.sim.now < ft.Until {
			for _, k := range ft.Instances {
				if k < len(note) && note[k] == "" {
					note[k] = "cut off"
				}
			}
		}
	}
	return note
}

func hasStore(lane *engine.Lane) bool {
	c := lane.Spec().Fleet
	return c != nil && slices.Contains([]engine.Coordination{engine.CoordCentral, engine.CoordAsync}, c.Model)
}
