package plots

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Spike clipping. One short spike far above everything else (peers: 2,500 req/s for 80 ms
// in a run whose limits are 100/s) sets a shared y axis on its own and flattens every other
// line into the zero line. A broken axis would keep the spike's height honest but makes two
// scales in one panel, which readers misread; a clipped axis keeps one linear scale for what
// the chart is about and says the spike's value in words where it is cut. So: when the
// highest value is more than 10 times the rest (the median of the non-zero values: 200/s on
// peers), the axis is cut at the next nice value (1, 2, 2.5, 5 × 10ⁿ) above 1.2 times the
// 90th percentile (375/s on peers: cut at 500/s), and never below twice the median or a
// configured limit; every cut run is labelled with its peak ("2500/s ↑"), and the figure's
// note says where the axis was cut. Only spikes are cut: at most 2 stretches per panel and
// side above the cut (else the cut rises to the next nice value), and the highest at least
// 2.5 times the cut (else nothing is cut).
const (
	spikeRatio = 10
	spikeRuns  = 2   // the most stretches above the cut in one panel, per side
	spikeWorth = 2.5 // the highest value must be this many times the cut
)

// clipSpikes cuts the rate series of f's panels at a common cap when one spike would
// flatten the rest (see above) and labels each cut; false when nothing needed cutting.
// Refusals drawn below zero are cut at −cap the same way.
func clipSpikes(f *Figure, unit string) bool {
	clipped := func(r Role) bool {
		return r == RoleOffered || r == RoleAttempts || r == RoleAdmitted || r == RoleRejected
	}
	var vals []float64
	for _, pn := range f.Panels {
		for _, s := range pn.Series {
			if !clipped(s.Role) {
				continue
			}
			for _, v := range s.Y {
				if v != 0 {
					vals = append(vals, math.Abs(v))
				}
			}
		}
	}
	if len(vals) < 8 {
		return false
	}
	slices.Sort(vals)
	rest, high, peak := vals[(len(vals)-1)/2], vals[int(0.9*float64(len(vals)-1))], vals[len(vals)-1]
	if rest <= 0 || peak <= spikeRatio*rest {
		return false
	}
	limit := niceStep(max(1.2*high, 2*rest), 1)
	for _, pn := range f.Panels {
		// Other lines (the configured limit) stay visible: the cap never hides them.
		for _, s := range pn.Series {
			if s.Role == RoleNominal {
				for _, v := range s.Y {
					limit = math.Max(limit, niceStep(1.2*math.Abs(v), 1))
				}
			}
		}
	}
	// Spikes are few: raise the cut (to the next nice value) until no panel has more than
	// spikeRuns stretches above it on either side. A chart whose body is above the cut
	// (retry-storm's attempts) ends up uncut; one whose highest stretch is only a few times
	// the cut (replay's 810/s against a cut at 500/s) is not worth cutting either.
	for limit < peak && spikeStretches(f, limit, clipped) > spikeRuns {
		limit = niceStep(limit*1.0001, 1)
	}
	if peak < spikeWorth*limit {
		return false
	}
	type cut struct {
		x, top float64
		neg    bool
		what   string
	}
	cuts := 0
	for _, pn := range f.Panels {
		var here []cut
		for si := range pn.Series {
			s := &pn.Series[si]
			if !clipped(s.Role) {
				continue
			}
			y := slices.Clone(s.Y)
			for i := 0; i < len(y); {
				if math.Abs(y[i]) <= limit {
					i++
					continue
				}
				// A run of cut points: its peak is labelled at its start.
				j, top := i, 0.0
				for j < len(y) && math.Abs(y[j]) > limit {
					top = math.Max(top, math.Abs(y[j]))
					y[j] = math.Copysign(limit, y[j])
					j++
				}
				// A step series' closing point repeats the last value: not a cut of its own.
				if !(j == len(y) && j-i == 1 && s.Step && i > 0) {
					here = append(here, cut{x: s.X[i], top: top, neg: y[i] < 0, what: roleWord(s.Role)})
				}
				i = j
			}
			s.Y = y
		}
		// Cuts at one instant on one side (offered and admitted in one bin) share a label,
		// highest first: "2500/s offered, 1250 admitted ↑".
		slices.SortStableFunc(here, func(a, b cut) int {
			switch {
			case a.x != b.x:
				return cmp.Compare(a.x, b.x)
			case a.neg != b.neg:
				if a.neg {
					return 1
				}
				return -1
			}
			return cmp.Compare(b.top, a.top)
		})
		for i := 0; i < len(here); {
			j := i + 1
			for j < len(here) && here[j].x == here[i].x && here[j].neg == here[i].neg {
				j++
			}
			text := g(math.Round(here[i].top)) + unit
			if j-i > 1 {
				text += " " + here[i].what
				for _, c := range here[i+1 : j] {
					text += ", " + g(math.Round(c.top)) + " " + c.what
				}
			}
			arrow, y := " ↑", limit
			if here[i].neg {
				arrow, y = " ↓", -limit
			}
			right := pn.XMax > pn.XMin && (here[i].x-pn.XMin)/(pn.XMax-pn.XMin) > 0.7
			pn.Labels = append(pn.Labels, Label{X: here[i].x, Y: y, Text: text + arrow, Small: true, Left: right})
			cuts++
			i = j
		}
	}
	if cuts == 0 {
		return false
	}
	note := fmt.Sprintf("Axis cut at %s%s so that the rest stays readable: the highest bin reaches %s%s; each cut is labelled with its value.",
		g(limit), unit, g(peak), unit)
	if f.Note != "" {
		f.Note += " "
	}
	f.Note += note
	return true
}

// spikeStretches is the most stretches of consecutive points above limit in any one panel,
// counting each side (above zero, below zero) and each instant once.
func spikeStretches(f *Figure, limit float64, clipped func(Role) bool) int {
	most := 0
	for _, pn := range f.Panels {
		type start struct {
			x   float64
			neg bool
		}
		seen := map[start]bool{}
		for _, s := range pn.Series {
			if !clipped(s.Role) {
				continue
			}
			for i := range s.Y {
				if math.Abs(s.Y[i]) > limit && (i == 0 || math.Abs(s.Y[i-1]) <= limit) {
					seen[start{s.X[i], s.Y[i] < 0}] = true
				}
			}
		}
		up, down := 0, 0
		for k := range seen {
			if k.neg {
				down++
			} else {
				up++
			}
		}
		most = max(most, up, down)
	}
	return most
}

func roleWord(r Role) string {
	switch r {
	case RoleOffered:
		return "offered"
	case RoleAttempts:
		return "attempts"
	case RoleAdmitted:
		return "admitted"
	}
	return "refused"
}
