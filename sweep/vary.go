package sweep

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/internal/wording"

	"github.com/ratelab/ratelab/limiters"
)

// Scale is how a range is stepped between its two ends.
type Scale string

// The scales.
const (
	// Linear steps evenly: capacity=1..100 in 10 steps is 1 12 23 34 45 56 67 78 89 100.
	Linear Scale = "linear"
	// Log steps by a constant factor: capacity=1..1000 in 4 steps is 1 10 100 1000.
	Log Scale = "log"
)

// DefaultSteps is how many values a range takes when not told: 10 × 10 cells for two.
const DefaultSteps = 10

// MaxSteps is the most values one dimension may take.
const MaxSteps = 1000

// MaxDims is the most dimensions a sweep has: a heatmap has two axes. A third is a second
// sweep, run once per value of it.
const MaxDims = 2

// Value is one point of a dimension.
type Value struct {
	// Text is the value as it is written into the spec: "12", "67/1s", "1.39s", "wait".
	Text string
	// Num is where it lies on a chart's axis: the number itself, a rate in permits per
	// second, a duration in seconds; NaN for a word (mode=try,wait).
	Num float64
}

// Dimension is one --vary: the values one field takes across the grid, and what it names.
//
// TARGET.FIELD=VALUES names the field FIELD of
//
//   - every lane with a stage of kind TARGET, when TARGET is a kind of the registry
//     (token-bucket.capacity=1..100: the capacity of the token-bucket stage of each lane that
//     has one; a lane with two token-bucket stages is refused as ambiguous), or else
//   - the one lane whose name (its NAME=, or its spec when unnamed) is TARGET, in the one
//     stage of it whose kind has FIELD (cap10.capacity=1..100).
//
// The field is what follows the last "." before the last "=", so a lane named by its spec
// ("token-bucket:capacity=10,rate=0.5/1s.capacity=1..9") reads as well.
//
// VALUES is LO..HI, stepped (see Steps), or a list a,b,c taken as it is (any field, words
// too: x-time-rate.mode=try,wait). LO and HI are two whole numbers (1..100), two rates of the
// same window (50/1s..200/1s: the permits are stepped, the window kept), two durations
// (10ms..1s) or two decimal numbers (1..5.5).
type Dimension struct {
	Text   string        // as given: "token-bucket.capacity=1..100"
	Target string        // "token-bucket", or a lane's name
	Kind   limiters.Kind // Target, when it is a kind; "" when it names a lane
	Field  string        // "capacity"
	Values []Value
}

// Name is TARGET.FIELD: "token-bucket.capacity".
func (d Dimension) Name() string { return d.Target + "." + d.Field }

// Unit is what the values count, for a chart's axis: "permits/s" for rates, "s" for
// durations, "" for plain numbers and words.
func (d Dimension) Unit() string { return unitOf(d.Values) }

// Numeric is whether every value has a place on a number line.
func (d Dimension) Numeric() bool {
	for _, v := range d.Values {
		if math.IsNaN(v.Num) {
			return false
		}
	}
	return len(d.Values) > 0
}

// VaryError is a --vary that cannot be swept; Reason says why, naming the value.
type VaryError struct {
	Text   string
	Reason string
}

func (e *VaryError) Error() string { return fmt.Sprintf("vary %s: %s", e.Text, e.Reason) }

// Steps is how a range is stepped: the number of values and the scale.
type Steps struct {
	N     int   // 0: DefaultSteps
	Scale Scale // "": Linear
}

// ParseDimension reads TARGET.FIELD=VALUES (see Dimension). A TARGET that is a kind has its
// FIELD checked against the registry here; a lane's name is checked against a scenario by
// New.
func ParseDimension(text string, steps Steps) (Dimension, error) {
	d := Dimension{Text: text}
	fail := func(format string, args ...any) (Dimension, error) {
		return Dimension{}, &VaryError{Text: text, Reason: fmt.Sprintf(format, args...)}
	}
	eq := strings.LastIndex(text, "=")
	if eq < 0 {
		return fail("not TARGET.FIELD=VALUES, e.g. token-bucket.capacity=1..100 (TARGET: a kind or a lane's name)")
	}
	left, right := strings.TrimSpace(text[:eq]), strings.TrimSpace(text[eq+1:])
	dot := strings.LastIndex(left, ".")
	if dot <= 0 || dot == len(left)-1 {
		return fail("%q is not TARGET.FIELD, e.g. token-bucket.capacity (TARGET: a kind or a lane's name)", left)
	}
	d.Target, d.Field = strings.TrimSpace(left[:dot]), strings.TrimSpace(left[dot+1:])
	if info, ok := limiters.Lookup(limiters.Kind(d.Target)); ok {
		d.Kind = info.Kind
		names := fieldNames(info)
		if !slices.Contains(names, d.Field) {
			return fail("%s has no field %q%s (fields: %s)", info.Kind, d.Field,
				wording.DidYouMean(d.Field, names), strings.Join(names, ", "))
		}
	}
	if steps.N == 0 {
		steps.N = DefaultSteps
	}
	if steps.Scale == "" {
		steps.Scale = Linear
	}
	if steps.N < 2 || steps.N > MaxSteps {
		return fail("%d steps: a range takes 2 to %d", steps.N, MaxSteps)
	}
	if right == "" {
		return fail("no values after =; give LO..HI or a list a,b,c")
	}
	var err error
	if lo, hi, ok := strings.Cut(right, ".."); ok {
		d.Values, err = stepRange(strings.TrimSpace(lo), strings.TrimSpace(hi), steps)
	} else {
		d.Values, err = listValues(right)
	}
	if err != nil {
		return fail("%v", err)
	}
	return d, nil
}

func fieldNames(info limiters.KindInfo) []string {
	names := make([]string, len(info.Fields))
	for i, f := range info.Fields {
		names[i] = f.Name
	}
	return names
}

// listValues reads a,b,c: each value as it is, in the order given.
func listValues(text string) ([]Value, error) {
	var out []Value
	for _, part := range strings.Split(text, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("an empty value in the list %q", text)
		}
		if slices.ContainsFunc(out, func(v Value) bool { return v.Text == part }) {
			return nil, fmt.Errorf("%s is listed twice", part)
		}
		out = append(out, Value{Text: part, Num: number(part)})
	}
	return out, nil
}

// number is a value's place on an axis (see Value.Num).
func number(text string) float64 {
	if v, err := strconv.ParseInt(text, 10, 64); err == nil {
		return float64(v)
	}
	if strings.Contains(text, "/") {
		if r, err := limiters.ParseRate(text); err == nil {
			return float64(r.Permits) / r.Window.Seconds()
		}
		return math.NaN()
	}
	if d, err := time.ParseDuration(text); err == nil {
		return d.Seconds()
	}
	if v, err := strconv.ParseFloat(text, 64); err == nil && !math.IsInf(v, 0) {
		return v
	}
	return math.NaN()
}

// unitOf is the unit of values' numbers: "permits/s" when they are rates, "s" durations.
func unitOf(values []Value) string {
	unit := ""
	for i, v := range values {
		u := ""
		switch {
		case strings.Contains(v.Text, "/"):
			u = "permits/s"
		case !math.IsNaN(v.Num) && strings.ContainsAny(v.Text, "hmsµu") && !strings.ContainsAny(v.Text, "eE"):
			u = "s"
		}
		if i > 0 && u != unit {
			return ""
		}
		unit = u
	}
	return unit
}

// stepRange steps LO..HI: whole numbers, the permits of two rates of one window, durations
// (in whole ns) or decimals. The ends are kept exactly; the values between are rounded to a
// round unit at most a tenth of the smallest step (1..100000 in 10 steps: 1 11000 22000 …
// 100000, not 1 11112 22223 …), and repeats dropped, so a short integer range gives each of
// its values once (1..5 in 10 steps: 1 2 3 4 5).
func stepRange(lo, hi string, st Steps) ([]Value, error) {
	shape := "LO..HI takes two whole numbers (1..100), two rates of one window (50/1s..200/1s), two durations (10ms..1s) or two numbers (1..5.5); list other values as a,b,c"
	if lo == "" || hi == "" {
		return nil, fmt.Errorf("%s", shape)
	}
	if a, err := strconv.ParseInt(lo, 10, 64); err == nil {
		if b, err := strconv.ParseInt(hi, 10, 64); err == nil {
			vs, err := intSteps(a, b, st)
			if err != nil {
				return nil, err
			}
			out := make([]Value, len(vs))
			for i, v := range vs {
				out[i] = Value{Text: strconv.FormatInt(v, 10), Num: float64(v)}
			}
			return out, nil
		}
	}
	if strings.Contains(lo, "/") || strings.Contains(hi, "/") {
		a, err := limiters.ParseRate(lo)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", lo, err)
		}
		b, err := limiters.ParseRate(hi)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", hi, err)
		}
		if a.Window != b.Window {
			return nil, fmt.Errorf("%s..%s: a rate range keeps one window and steps the permits; write both per %s (e.g. %d/%s..%s)",
				lo, hi, limiters.FormatDuration(a.Window), a.Permits, limiters.FormatDuration(a.Window),
				limiters.Rate{Permits: int(max(1, int64(b.Permits)*int64(a.Window)/int64(b.Window))), Window: a.Window})
		}
		vs, err := intSteps(int64(a.Permits), int64(b.Permits), st)
		if err != nil {
			return nil, err
		}
		out := make([]Value, len(vs))
		for i, p := range vs {
			r := limiters.Rate{Permits: int(p), Window: a.Window}
			out[i] = Value{Text: r.String(), Num: float64(p) / a.Window.Seconds()}
		}
		return out, nil
	}
	if a, err := time.ParseDuration(lo); err == nil {
		b, err := time.ParseDuration(hi)
		if err != nil {
			return nil, fmt.Errorf("%s..%s: %q is not a duration like %s", lo, hi, hi, lo)
		}
		vs, err := intSteps(int64(a), int64(b), st)
		if err != nil {
			return nil, err
		}
		out := make([]Value, len(vs))
		for i, v := range vs {
			d := time.Duration(v)
			out[i] = Value{Text: limiters.FormatDuration(d), Num: d.Seconds()}
		}
		return out, nil
	}
	a, errA := strconv.ParseFloat(lo, 64)
	b, errB := strconv.ParseFloat(hi, 64)
	if errA != nil || errB != nil || math.IsInf(a, 0) || math.IsInf(b, 0) || math.IsNaN(a) || math.IsNaN(b) {
		return nil, fmt.Errorf("%s..%s: %s", lo, hi, shape)
	}
	return floatSteps(a, b, st)
}

// intSteps is st.N values from lo to hi (see stepRange).
func intSteps(lo, hi int64, st Steps) ([]int64, error) {
	if lo > hi {
		return nil, fmt.Errorf("%d..%d: LO is above HI", lo, hi)
	}
	if st.Scale == Log && lo < 1 {
		return nil, fmt.Errorf("a log range starts at 1 or more, not %d", lo)
	}
	n := st.N
	raw := make([]float64, n)
	for k := range n {
		raw[k] = position(float64(lo), float64(hi), k, n, st.Scale)
	}
	unit := max(1, roundUnit(raw)) // whole numbers: permits, nanoseconds
	var out []int64
	for k, f := range raw {
		v := int64(math.Round(f/unit) * unit)
		switch k {
		case 0:
			v = lo
		case n - 1:
			v = hi
		}
		v = min(max(v, lo), hi)
		if len(out) == 0 || v > out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out, nil
}

// floatSteps is st.N decimals from lo to hi, printed to the rounding unit's decimals.
func floatSteps(lo, hi float64, st Steps) ([]Value, error) {
	if lo > hi {
		return nil, fmt.Errorf("%g..%g: LO is above HI", lo, hi)
	}
	if st.Scale == Log && lo <= 0 {
		return nil, fmt.Errorf("a log range starts above 0, not %g", lo)
	}
	raw := make([]float64, st.N)
	for k := range st.N {
		raw[k] = position(lo, hi, k, st.N, st.Scale)
	}
	unit := roundUnit(raw)
	decimals := max(0, int(math.Round(-math.Log10(unit))))
	var out []Value
	for k, f := range raw {
		text := strconv.FormatFloat(math.Round(f/unit)*unit, 'f', decimals, 64)
		if strings.Contains(text, ".") {
			text = strings.TrimRight(strings.TrimRight(text, "0"), ".")
		}
		switch k {
		case 0:
			text = strconv.FormatFloat(lo, 'f', -1, 64)
		case st.N - 1:
			text = strconv.FormatFloat(hi, 'f', -1, 64)
		}
		v, _ := strconv.ParseFloat(text, 64)
		if len(out) == 0 || v > out[len(out)-1].Num {
			out = append(out, Value{Text: text, Num: v})
		}
	}
	return out, nil
}

// position is the k-th of n points from lo to hi on scale.
func position(lo, hi float64, k, n int, scale Scale) float64 {
	f := float64(k) / float64(n-1)
	if scale == Log {
		return lo * math.Pow(hi/lo, f)
	}
	return lo + f*(hi-lo)
}

// roundUnit is the power of ten at most a tenth of the smallest gap between raw points (1
// for gaps under 10, the points being whole numbers).
func roundUnit(raw []float64) float64 {
	gap := math.Inf(1)
	for k := 1; k < len(raw); k++ {
		if d := raw[k] - raw[k-1]; d > 0 {
			gap = min(gap, d)
		}
	}
	if math.IsInf(gap, 1) {
		return 1
	}
	return math.Pow(10, math.Floor(math.Log10(gap/10)))
}
