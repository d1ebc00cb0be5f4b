package scenarios

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ParseSeed reads a seed as every entry point takes it (a scenario file's seed:, the
// --seed of run, plot, sweep, fit and translate): decimal digits, 0 to 2^64−1. Forms that
// read differently elsewhere are refused with the reading they would have had, not taken
// one way silently: hex, octal and binary (0x1f, 0o17, 0b101: Go's flag package read them,
// the scenario file did not), a leading zero (010: decimal 10, or octal 8 as C and YAML 1.1
// read it), digit separators (1_000), a sign.
//
//	ParseSeed("31")   = 31
//	ParseSeed("0x1f") : a seed is written in decimal digits: 0x1f is hex for 31, so write 31
func ParseSeed(text string) (uint64, error) {
	v, err := strconv.ParseUint(text, 10, 64)
	switch {
	case err == nil && (len(text) == 1 || text[0] != '0'):
		return v, nil
	case errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("too large (at most %d)", uint64(1<<64-1))
	case text == "":
		return 0, fmt.Errorf("empty: a seed is a whole number from 0 to %d", uint64(1<<64-1))
	case strings.HasPrefix(text, "-"):
		return 0, fmt.Errorf("must be 0 or more")
	}
	lower := strings.ToLower(text)
	for _, p := range []struct{ prefix, base string }{{"0x", "hex"}, {"0o", "octal"}, {"0b", "binary"}} {
		if strings.HasPrefix(lower, p.prefix) {
			if v, err := strconv.ParseUint(text, 0, 64); err == nil && !strings.Contains(text, "_") {
				return 0, fmt.Errorf("a seed is written in decimal digits: %s is %s for %d, so write %d", text, p.base, v, v)
			}
			return 0, fmt.Errorf("a seed is written in decimal digits, not %s", p.base)
		}
	}
	if err == nil { // a leading zero
		trimmed := strings.TrimLeft(text, "0")
		if trimmed == "" {
			trimmed = "0"
		}
		if octal, err := strconv.ParseUint(text, 8, 64); err == nil && octal != v {
			return 0, fmt.Errorf("a seed is written in decimal digits without a leading 0: %s is %s in decimal but %d in octal, so write %s (or %d)", text, trimmed, octal, trimmed, octal)
		}
		return 0, fmt.Errorf("a seed is written in decimal digits without a leading 0: write %s", trimmed)
	}
	if digits := strings.ReplaceAll(text, "_", ""); digits != text {
		if _, err := strconv.ParseUint(digits, 10, 64); err == nil {
			return 0, fmt.Errorf("a seed is written in decimal digits without _: write %s", digits)
		}
	}
	return 0, fmt.Errorf("not a whole number")
}
