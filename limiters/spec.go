package limiters

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/internal/wording"
)

// Spec is a limiter configuration in the one syntax ratelab uses everywhere (CLI flags, YAML
// scenario files, the TUI's editor):
//
//	token-bucket:capacity=3,rate=100/1s
//	leaky-bucket:rate=100/1s
//	sliding-window:limit=100,window=1s,slots=10
//	fixed-window:limit=100,window=1s
//	warm-up:capacity=10,rate=100/1s,warmup=10s
//	concurrency:max=20
//
// A rate is permits/window; "100/s" is short for "100/1s". Each kind has its own spec type
// (TokenBucketSpec, …) holding just its fields; ParseSpec reads any of them and String prints
// it back. A spec is a plain comparable value: two specs are equal when they describe the
// same limiter.
type Spec interface {
	// Kind names the algorithm.
	Kind() Kind
	// String is the spec as ParseSpec reads it; the limiter built from it prints the same.
	String() string
	// Validate refuses, with a *ConfigError naming the field, what New would refuse (a nil
	// clock apart), without building anything.
	Validate() error
	// New builds the limiter on clock (ignored by kinds with no time axis).
	New(clock Clock) (Limiter, error)
	// AdmissionBound is the most permits the kind promises to admit in any half-open
	// interval of length L > 0 — the exact worst case, reachable by an adversarial arrival
	// pattern — and false for kinds with no time axis. A bound past the int64 range
	// saturates at math.MaxInt64; it is never negative.
	AdmissionBound(L time.Duration) (int64, bool)
	// NaturalWindow is the span the spec is usually judged over (a rate's window, a window
	// limiter's window), 0 for kinds with no time axis.
	NaturalWindow() time.Duration
	// NominalRate is the steady rate the spec promises, false for kinds with no time axis.
	NominalRate() (Rate, bool)
	// InitialPermits is what a fresh limiter of this spec has available at time 0.
	InitialPermits() int
}

// AdmissionBound is spec.AdmissionBound(L), and 0 for an empty interval (L ≤ 0).
func AdmissionBound(spec Spec, L time.Duration) (int64, bool) {
	if L <= 0 {
		return 0, true
	}
	return spec.AdmissionBound(L)
}

// StackBound is the most a stack of specs admits in any interval of length L: the least of
// its stages' AdmissionBound, since a request passes only if every stage admits it; false
// when no stage has a bound (a bulkhead, a keyed stage: one limit per key, none for all).
// token-bucket:capacity=10,rate=100/1s + fixed-window:limit=100,window=1s over 1s: min(10 +
// 100 − 1, 2·100) = 109.
func StackBound(stack []Spec, L time.Duration) (int64, bool) {
	bound, found := int64(0), false
	for _, s := range stack {
		if b, ok := AdmissionBound(s, L); ok && (!found || b < bound) {
			bound, found = b, true
		}
	}
	return bound, found
}

// SpecError is a spec that could not be read. It names the field and the value.
type SpecError struct {
	Spec   string
	Field  string // "" when the error is about the whole spec or its kind
	Value  string
	Reason string
}

func (e *SpecError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("limiter spec %q: %s", e.Spec, e.Reason)
	}
	return fmt.Sprintf("limiter spec %q: %s=%s: %s", e.Spec, e.Field, e.Value, e.Reason)
}

// ParseSpec reads one limiter spec. Every field the kind needs must be given once; unknown
// fields, duplicates and bad values are errors naming the field and value. It checks syntax;
// Validate (and New) check the values against the algorithm's limits.
func ParseSpec(text string) (Spec, error) {
	fail := func(field, value, reason string) (Spec, error) {
		return nil, &SpecError{Spec: text, Field: field, Value: value, Reason: reason}
	}
	kindText, params, _ := strings.Cut(strings.TrimSpace(text), ":")
	kindText = strings.TrimSpace(kindText)
	info := lookup(Kind(kindText))
	switch {
	case info == nil && IsKeyedSpec(text):
		return fail("", "", "a keys(…) spec is a table of limiters, one per key, not one limiter: read it with "+
			"ParseKeyedSpec and build it with NewKeyed (or give the whole spec to httplimit.New, which takes "+
			"every spec the CLI takes, stacks included)")
	case isStack(text):
		return fail("", "", "a spec joined with + is a stack of limiters, not one: engine.ParseStack reads it "+
			"(httplimit.New takes it whole)")
	}
	if info == nil {
		names := strings.Split(KindNames(), ", ")
		return fail("", "", fmt.Sprintf("unknown kind %q%s (known: %s)", kindText, wording.DidYouMean(kindText, names), KindNames()))
	}
	fields, done := info.Parse()
	seen := map[string]bool{}
	parts, empty := wording.SplitList(params, ",", "field")
	if empty != "" {
		return fail("", "", empty+": fields are FIELD=VALUE joined by single commas")
	}
	for _, text := range parts {
		key, value, hasValue := strings.Cut(text, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !hasValue {
			return fail(key, "", "expected key=value")
		}
		i := slices.IndexFunc(fields, func(f Field) bool { return f.Name == key })
		if i < 0 {
			names := append(info.Required(), info.Optional()...)
			return fail(key, value, fmt.Sprintf("not a field of %s%s (fields: %s)", info.Kind,
				wording.DidYouMean(key, names), strings.Join(names, ", ")))
		}
		if seen[key] {
			return fail(key, value, "given twice")
		}
		seen[key] = true
		if err := fields[i].Set(value); err != nil {
			return fail(key, value, err.Error())
		}
	}
	for _, f := range fields {
		if f.Required && !seen[f.Name] {
			return fail(f.Name, "", "missing (e.g. "+info.Example+")")
		}
	}
	return done(), nil
}

// isStack is whether text is specs joined with +, each starting with a kind or keys(…).
func isStack(text string) bool {
	parts := strings.Split(text, "+")
	if len(parts) < 2 {
		return false
	}
	for _, p := range parts {
		kind, _, _ := strings.Cut(strings.TrimSpace(p), ":")
		if lookup(Kind(strings.TrimSpace(kind))) == nil && !IsKeyedSpec(p) {
			return false
		}
	}
	return true
}

// Parse reads a spec and builds its limiter on clock: one kind (ParseSpec). A keys(…) spec
// is a table (ParseKeyedSpec, NewKeyed) and specs joined with + a stack (engine.ParseStack);
// httplimit.New takes both.
func Parse(text string, clock Clock) (Limiter, error) {
	spec, err := ParseSpec(text)
	if err != nil {
		return nil, err
	}
	return spec.New(clock)
}

// Field is one spec field bound to the spec value being read or printed: what a kind in
// another package returns from its spec's Fields method, built with IntField, DurationField
// and RateField or written out (Set reads the value, Get prints it, Omit leaves it out).
type Field struct {
	FieldInfo
	Set  func(text string) error
	Get  func() string
	Omit func() bool // nil: always printed
}

// IntField binds a positive whole number: "capacity=3".
func IntField(name string, required bool, meaning string, v *int) Field {
	return Field{
		FieldInfo: FieldInfo{Name: name, Required: required, Meaning: meaning},
		Set: func(text string) (err error) {
			*v, err = ParsePositiveInt(text)
			return err
		},
		Get: func() string { return strconv.Itoa(*v) },
	}
}

// DurationField binds a positive duration, as time.ParseDuration reads it: "window=250ms".
func DurationField(name string, required bool, meaning string, v *time.Duration) Field {
	return Field{
		FieldInfo: FieldInfo{Name: name, Required: required, Meaning: meaning},
		Set: func(text string) (err error) {
			*v, err = parsePositiveDuration(text)
			return err
		},
		Get: func() string { return FormatDuration(*v) },
	}
}

// RateField binds a rate, as ParseRate reads it: "rate=100/1s".
func RateField(name string, required bool, meaning string, v *Rate) Field {
	return Field{
		FieldInfo: FieldInfo{Name: name, Required: required, Meaning: meaning},
		Set: func(text string) (err error) {
			*v, err = ParseRate(text)
			return err
		},
		Get: func() string { return v.String() },
	}
}

// FormatSpec prints kind:name=value,… in the fields' order: the one formatter every spec
// type's String uses, so that a spec and its limiter cannot print differently.
func FormatSpec(kind Kind, fields []Field) string {
	var b strings.Builder
	b.WriteString(string(kind))
	sep := byte(':')
	for _, f := range fields {
		if f.Omit != nil && f.Omit() {
			continue
		}
		b.WriteByte(sep)
		b.WriteString(f.Name)
		b.WriteByte('=')
		b.WriteString(f.Get())
		sep = ','
	}
	return b.String()
}

// SpecParser makes a KindInfo's Parse function for spec type T, starting from defaults.
func SpecParser[T Spec, P interface {
	*T
	Fields() []Field
}](defaults T) func() ([]Field, func() Spec) {
	return func() ([]Field, func() Spec) {
		s := defaults
		return P(&s).Fields(), func() Spec { return s }
	}
}

// FieldInfos lists spec type T's fields for its KindInfo.
func FieldInfos[T any, P interface {
	*T
	Fields() []Field
}]() []FieldInfo {
	var zero T
	fields := P(&zero).Fields()
	infos := make([]FieldInfo, len(fields))
	for i, f := range fields {
		infos[i] = f.FieldInfo
	}
	return infos
}

// ParseRate reads "100/1s", "7/100ms" or "100/s" (one second).
func ParseRate(text string) (Rate, error) {
	permitsText, windowText, ok := strings.Cut(text, "/")
	if !ok {
		return Rate{}, fmt.Errorf("expected permits/window, e.g. 100/1s")
	}
	permits, err := ParsePositiveInt(permitsText)
	if err != nil {
		return Rate{}, fmt.Errorf("permits: %v", err)
	}
	if windowText != "" && (windowText[0] >= 'a' && windowText[0] <= 'z' || windowText[0] >= 'A' && windowText[0] <= 'Z') {
		windowText = "1" + windowText // "100/s" is "100/1s"
	}
	window, err := parsePositiveDuration(windowText)
	if err != nil {
		return Rate{}, fmt.Errorf("window: %v", err)
	}
	return Rate{Permits: permits, Window: window}, nil
}

// ParsePositiveInt reads a whole number ≥ 1, saying what is wrong in a spec's words.
func ParsePositiveInt(text string) (int, error) {
	v, err := strconv.Atoi(text)
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number", text)
	}
	if v < 1 {
		return 0, fmt.Errorf("must be at least 1")
	}
	return v, nil
}

func parsePositiveDuration(text string) (time.Duration, error) {
	d, err := time.ParseDuration(text)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (e.g. 1s, 100ms, 1m30s)", text)
	}
	if d <= 0 {
		return 0, fmt.Errorf("must be positive")
	}
	return d, nil
}
