package limiters

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
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
// A rate is permits/window; "100/s" is short for "100/1s". Fields that do not apply to the
// kind are zero.
type Spec struct {
	Kind     Kind
	Capacity int
	Rate     Rate
	Limit    int
	Window   time.Duration
	Slots    int
	WarmUp   time.Duration
	Max      int
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

// KindInfo describes one algorithm for listings and spec parsing.
type KindInfo struct {
	Kind     Kind
	Summary  string
	Example  string
	Required []string
	Optional []string
}

// Kinds lists every algorithm, in the order ratelab shows them.
func Kinds() []KindInfo {
	return []KindInfo{
		{KindTokenBucket, "average rate, bursts up to capacity after idle (GCRA)", "token-bucket:capacity=3,rate=100/1s", []string{"capacity", "rate"}, nil},
		{KindLeakyBucket, "strictly even pacing, one permit per emission interval", "leaky-bucket:rate=100/1s", []string{"rate"}, nil},
		{KindSlidingWindow, "limit per rolling window, measured in slots", "sliding-window:limit=100,window=1s,slots=10", []string{"limit", "window"}, []string{"slots"}},
		{KindFixedWindow, "limit per clock-aligned window; 2×limit at a boundary", "fixed-window:limit=100,window=1s", []string{"limit", "window"}, nil},
		{KindWarmUpTokenBucket, "token bucket whose rate ramps from 1/3 to full over the warm-up", "warm-up:capacity=10,rate=100/1s,warmup=10s", []string{"capacity", "rate", "warmup"}, nil},
		{KindConcurrency, "at most max in flight at once (bulkhead); no time axis", "concurrency:max=20", []string{"max"}, nil},
	}
}

func kindInfo(k Kind) (KindInfo, bool) {
	for _, info := range Kinds() {
		if info.Kind == k {
			return info, true
		}
	}
	return KindInfo{}, false
}

// ParseSpec reads one limiter spec. Every field the kind needs must be given once; unknown
// fields, duplicates and bad values are errors naming the field and value. It checks syntax;
// New checks the values against the algorithm's limits.
func ParseSpec(text string) (Spec, error) {
	fail := func(field, value, reason string) (Spec, error) {
		return Spec{}, &SpecError{Spec: text, Field: field, Value: value, Reason: reason}
	}
	kindText, params, _ := strings.Cut(strings.TrimSpace(text), ":")
	info, ok := kindInfo(Kind(kindText))
	if !ok {
		names := make([]string, 0, 6)
		for _, k := range Kinds() {
			names = append(names, string(k.Kind))
		}
		return fail("", "", fmt.Sprintf("unknown kind %q (known: %s)", kindText, strings.Join(names, ", ")))
	}
	spec := Spec{Kind: info.Kind}
	if info.Kind == KindSlidingWindow {
		spec.Slots = DefaultSlots
	}
	seen := map[string]bool{}
	for _, field := range strings.Split(params, ",") {
		if strings.TrimSpace(field) == "" {
			continue
		}
		key, value, hasValue := strings.Cut(field, "=")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		if !hasValue {
			return fail(key, "", "expected key=value")
		}
		if !slices.Contains(info.Required, key) && !slices.Contains(info.Optional, key) {
			return fail(key, value, fmt.Sprintf("not a field of %s (fields: %s)", info.Kind,
				strings.Join(append(append([]string{}, info.Required...), info.Optional...), ", ")))
		}
		if seen[key] {
			return fail(key, value, "given twice")
		}
		seen[key] = true
		var err error
		switch key {
		case "capacity":
			spec.Capacity, err = parsePositiveInt(value)
		case "limit":
			spec.Limit, err = parsePositiveInt(value)
		case "slots":
			spec.Slots, err = parsePositiveInt(value)
		case "max":
			spec.Max, err = parsePositiveInt(value)
		case "window":
			spec.Window, err = parsePositiveDuration(value)
		case "warmup":
			spec.WarmUp, err = parsePositiveDuration(value)
		case "rate":
			spec.Rate, err = ParseRate(value)
		}
		if err != nil {
			return fail(key, value, err.Error())
		}
	}
	for _, key := range info.Required {
		if !seen[key] {
			return fail(key, "", "missing (e.g. "+info.Example+")")
		}
	}
	return spec, nil
}

// ParseRate reads "100/1s", "7/100ms" or "100/s" (one second).
func ParseRate(text string) (Rate, error) {
	permitsText, windowText, ok := strings.Cut(text, "/")
	if !ok {
		return Rate{}, fmt.Errorf("expected permits/window, e.g. 100/1s")
	}
	permits, err := parsePositiveInt(permitsText)
	if err != nil {
		return Rate{}, fmt.Errorf("permits: %v", err)
	}
	if windowText != "" && (windowText[0] < '0' || windowText[0] > '9') && windowText[0] != '.' {
		windowText = "1" + windowText
	}
	window, err := parsePositiveDuration(windowText)
	if err != nil {
		return Rate{}, fmt.Errorf("window: %v", err)
	}
	return Rate{Permits: permits, Window: window}, nil
}

func parsePositiveInt(text string) (int, error) {
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

// New builds the limiter the spec describes on clock (ignored by the concurrency limiter).
// Values the algorithm cannot honour are refused with a *ConfigError.
func (s Spec) New(clock Clock) (Limiter, error) {
	switch s.Kind {
	case KindTokenBucket:
		return NewTokenBucket(s.Capacity, s.Rate, clock)
	case KindLeakyBucket:
		return NewLeakyBucket(s.Rate, clock)
	case KindSlidingWindow:
		return NewSlidingWindow(s.Limit, s.Window, s.Slots, clock)
	case KindFixedWindow:
		return NewFixedWindow(s.Limit, s.Window, clock)
	case KindWarmUpTokenBucket:
		return NewWarmUpTokenBucket(s.Capacity, s.Rate, s.WarmUp, clock)
	case KindConcurrency:
		return NewConcurrency(s.Max)
	}
	return nil, fmt.Errorf("limiters: unknown kind %q", s.Kind)
}

// String formats the spec as ParseSpec reads it; the limiter built from it prints the same.
func (s Spec) String() string {
	switch s.Kind {
	case KindTokenBucket:
		return fmt.Sprintf("%s:capacity=%d,rate=%s", s.Kind, s.Capacity, s.Rate)
	case KindLeakyBucket:
		return fmt.Sprintf("%s:rate=%s", s.Kind, s.Rate)
	case KindSlidingWindow:
		return fmt.Sprintf("%s:limit=%d,window=%s,slots=%d", s.Kind, s.Limit, FormatDuration(s.Window), s.Slots)
	case KindFixedWindow:
		return fmt.Sprintf("%s:limit=%d,window=%s", s.Kind, s.Limit, FormatDuration(s.Window))
	case KindWarmUpTokenBucket:
		return fmt.Sprintf("%s:capacity=%d,rate=%s,warmup=%s", s.Kind, s.Capacity, s.Rate, FormatDuration(s.WarmUp))
	case KindConcurrency:
		return fmt.Sprintf("%s:max=%d", s.Kind, s.Max)
	}
	return string(s.Kind)
}

// Parse reads a spec and builds its limiter on clock.
func Parse(text string, clock Clock) (Limiter, error) {
	spec, err := ParseSpec(text)
	if err != nil {
		return nil, err
	}
	return spec.New(clock)
}
