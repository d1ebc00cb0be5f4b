package limiters

import (
	"fmt"
	"slices"
	"strings"
)

// Kind names an algorithm. Its value is the name used in limiter specs ("token-bucket:…").
type Kind string

// Family groups kinds by where they come from: ratelab's own algorithms, and (as they are
// added) each peer library's. Charts give a family one range of hues, so kinds of one library
// read as related and kinds of different libraries as distinct.
type Family string

// FamilyRatelab is ratelab's own algorithms.
const FamilyRatelab Family = "ratelab"

// Shape is how a kind's State is drawn: the vocabulary the TUI and the charts share. A new
// kind picks the shape whose fields it fills, or adds a shape (and its drawing) when none fits.
type Shape string

// The shapes of State.
const (
	// ShapeSchedule: a GCRA schedule — Arrival (TAT), Interval (T), Tolerance (τ).
	ShapeSchedule Shape = "schedule"
	// ShapeRamp: a schedule whose interval ramps with age — as ShapeSchedule, plus
	// SteadyInterval, Age and WarmUp.
	ShapeRamp Shape = "ramp"
	// ShapeWindow: one aligned window — Limit, Count, Window, WindowStart, WindowEnd.
	ShapeWindow Shape = "window"
	// ShapeSlots: a rolling window of slots — as ShapeWindow, plus SlotLength and Slots.
	ShapeSlots Shape = "slots"
	// ShapeBulkhead: permits held, not timed — InFlight and Max.
	ShapeBulkhead Shape = "bulkhead"
	// ShapeLevel: a level against its maximum — Level of LevelMax, named by LevelName ("stored
	// permits", "tokens", "excess"), and NextFree, when the next request can pass: the
	// peers that keep a (fractional) count of tokens instead of a schedule.
	ShapeLevel Shape = "level"
	// ShapeAdaptive: a bulkhead whose max moves — InFlight and Max (the limit now), plus RTT
	// (the last sample or window the rule heard), RTTNoLoad (what it compares it with) and
	// Probes (no-load RTT probes so far): the adaptive concurrency limits.
	ShapeAdaptive Shape = "adaptive"
)

// Shapes lists every shape, in the order documentation shows them.
func Shapes() []Shape {
	return []Shape{ShapeSchedule, ShapeRamp, ShapeWindow, ShapeSlots, ShapeBulkhead, ShapeLevel, ShapeAdaptive}
}

// KindInfo is everything ratelab knows about one kind apart from its algorithm and its looks
// (its colour and glyph are package present's, keyed by the kind's name): the registry entry
// that the CLI's usage, the TUI, the charts and the golden catalogue read instead of switching
// on kinds. Each kind's file defines its entry next to its spec type; the registry (kinds,
// below) lists them once.
type KindInfo struct {
	Kind    Kind
	Family  Family
	Summary string // one line for listings
	Example string // a spec that parses, e.g. "token-bucket:capacity=3,rate=100/1s"
	Shape   Shape  // how its State is drawn

	// Fields are the spec's fields in the order the spec prints them.
	Fields []FieldInfo

	// Capabilities are what the kind's limiters can do beyond the core, in the order of
	// AllCapabilities: what CapabilitiesOf finds on them (the registry test holds the two
	// equal), known without building one, so that a scenario asking a kind for what it lacks is
	// refused at validation.
	Capabilities []Capability

	// Ranges are what Validate accepts, one row per field in the order of Fields: the rows of
	// docs/LIMITS.md's limiter table, each held to Validate by specs at and just past its
	// edges. Each kind's file defines them beside its Validate.
	Ranges []FieldRange

	// Checks are the specs the catalogue's guarantees over every kind (golden's request-sizes
	// and no-alloc) run for this kind where Example does not suit; the zero value is Example
	// for each. The registry test parses each as a spec of this kind.
	Checks CheckSpecs

	// Parse returns a fresh spec with its defaults and the fields bound to it; done returns
	// the filled spec.
	Parse func() (fields []Field, done func() Spec)
	// Explain is the kind's sentence for an admitted or refused request (State.Explain
	// handles Invalid and Never for every kind).
	Explain func(s State, n int, d Decision) string
}

// CheckSpecs are a kind's specs for the checks run on every kind, where its Example is not the
// one: Example is written for reading (token-bucket capacity 3 at 100/s), a check needs a
// particular size or configuration.
type CheckSpecs struct {
	// Sizes is a spec whose MaxPermits is small (at most 6, where the kind has a size), so
	// that request-sizes can offer MaxPermits and MaxPermits+1 through the simulator:
	// "concurrency:max=5" rather than max=20. "" is Example.
	Sizes string
	// Allocs are the configurations no-alloc measures, one per distinct decision path
	// (sentinel's reject, and its warm-up throttling with a queue). nil is Example alone.
	Allocs []string
}

// SizesSpec is the spec request-sizes runs for the kind: Checks.Sizes, else Example.
func (k KindInfo) SizesSpec() string {
	if k.Checks.Sizes != "" {
		return k.Checks.Sizes
	}
	return k.Example
}

// AllocSpecs are the specs no-alloc measures for the kind: Checks.Allocs, else Example.
func (k KindInfo) AllocSpecs() []string {
	if len(k.Checks.Allocs) > 0 {
		return k.Checks.Allocs
	}
	return []string{k.Example}
}

// FieldRange is the range one field of a kind's spec accepts, and why: Validate's rule in words
// with numbers, and the specs that hold the words to the rule.
type FieldRange struct {
	Field    string
	Accepted string // e.g. "1 to 2^31−1"; a range that opens with two whole numbers has a Valid spec at each
	Why      string // why the edges are there, e.g. "the permits held are counted in 32 bits"
	Valid    []string
	Invalid  []string // specs just past the edges: ParseSpec or Validate refuses each
}

// FieldInfo describes one field of a spec.
type FieldInfo struct {
	Name     string
	Required bool
	Meaning  string // what the value means, for usage text
}

// kinds is the registry: every kind, in the order ratelab shows them. This package's kinds
// are listed here; a kind of another package is added by Register (limiters/peers registers
// the peer libraries' models so). Adding a kind is its own file (its spec type, its limiter
// and its KindInfo) and one line: here, or in its package's registration.
var kinds = []*KindInfo{
	&tokenBucketKind,
	&leakyBucketKind,
	&slidingWindowKind,
	&fixedWindowKind,
	&warmUpKind,
	&concurrencyKind,
	&aimdKind,
	&vegasKind,
	&gradientKind,
	&gradient2Kind,
	&envoyGradientKind,
}

// Register adds a kind to the registry after those already there, so that ParseSpec reads
// its specs and Kinds, Lookup and everything built on them know it as they know this
// package's own: the way a kind in another package joins, as an image format joins package
// image with image.RegisterFormat. Call it from an init function (the registry is not
// locked); limiters/peers does, once for each peer library's model, in the order they are
// shown. It panics when the entry is incomplete (Missing says what it lacks) or its kind's
// name is taken: registering a kind twice is a program's error, not a run's.
func Register(info KindInfo) {
	if missing := info.Missing(); missing != "" {
		panic("limiters: Register: " + missing)
	}
	if lookup(info.Kind) != nil {
		panic(fmt.Sprintf("limiters: Register: kind %q is registered already", info.Kind))
	}
	kinds = append(kinds, &info)
}

// Kinds lists every kind, in the order ratelab shows them.
func Kinds() []KindInfo {
	out := make([]KindInfo, len(kinds))
	for i, k := range kinds {
		out[i] = *k
	}
	return out
}

// Lookup is the registry entry of kind k.
func Lookup(k Kind) (KindInfo, bool) {
	if info := lookup(k); info != nil {
		return *info, true
	}
	return KindInfo{}, false
}

func lookup(k Kind) *KindInfo {
	for _, info := range kinds {
		if info.Kind == k {
			return info
		}
	}
	return nil
}

// KindNames is every kind's name, comma-separated, for error messages and usage text.
func KindNames() string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k.Kind)
	}
	return strings.Join(names, ", ")
}

// Required is the names of the fields a spec of this kind must give.
func (k KindInfo) Required() []string { return k.fieldNames(true) }

// Optional is the names of the fields a spec of this kind may leave out.
func (k KindInfo) Optional() []string { return k.fieldNames(false) }

func (k KindInfo) fieldNames(required bool) []string {
	var names []string
	for _, f := range k.Fields {
		if f.Required == required {
			names = append(names, f.Name)
		}
	}
	return names
}

// Has reports whether the kind's limiters have capability c.
func (k KindInfo) Has(c Capability) bool { return slices.Contains(k.Capabilities, c) }

// Lacks is a *CapabilityError when the kind's limiters lack capability c, else nil.
func (k KindInfo) Lacks(c Capability) error {
	if k.Has(c) {
		return nil
	}
	return &CapabilityError{Kind: k.Kind, Capability: c, Has: k.Capabilities}
}

// rangesFollowFields reports whether Ranges has one row per field, in the order of Fields,
// each saying what it accepts and why.
func (k KindInfo) rangesFollowFields() bool {
	if len(k.Ranges) != len(k.Fields) {
		return false
	}
	for i, r := range k.Ranges {
		if r.Field != k.Fields[i].Name || r.Accepted == "" || r.Why == "" || len(r.Valid) == 0 {
			return false
		}
	}
	return true
}

// Missing names what the entry lacks, "" when nothing: the registry test runs it on every
// kind so that a kind cannot be added half-way.
func (k KindInfo) Missing() string {
	var missing []string
	check := func(ok bool, what string) {
		if !ok {
			missing = append(missing, what)
		}
	}
	check(k.Kind != "", "kind name")
	check(k.Family != "", "family")
	check(k.Summary != "", "summary")
	check(k.Example != "", "example")
	check(slices.Contains(Shapes(), k.Shape), "shape (one of Shapes())")
	check(len(k.Fields) > 0, "fields")
	check(len(k.Fields) == 0 || k.rangesFollowFields(), "ranges (one per field, in the order of Fields)")
	check(k.Parse != nil, "parser")
	check(k.Explain != nil, "explanation")
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: no %s", k.Kind, strings.Join(missing, ", no "))
}
