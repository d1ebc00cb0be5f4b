package scenarios

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A seed is decimal digits, and only that: each form another reader takes another way is
// refused with the reading it would have had.
func TestParseSeed(t *testing.T) {
	for text, want := range map[string]uint64{"0": 0, "7": 7, "31": 31, "18446744073709551615": 1<<64 - 1} {
		got, err := ParseSeed(text)
		require.NoError(t, err, text)
		assert.Equal(t, want, got, text)
	}
	for text, want := range map[string]string{
		"0x1f":                 "a seed is written in decimal digits: 0x1f is hex for 31, so write 31",
		"0X1F":                 "a seed is written in decimal digits: 0X1F is hex for 31, so write 31",
		"0o17":                 "a seed is written in decimal digits: 0o17 is octal for 15, so write 15",
		"0b101":                "a seed is written in decimal digits: 0b101 is binary for 5, so write 5",
		"0xg":                  "a seed is written in decimal digits, not hex",
		"010":                  "a seed is written in decimal digits without a leading 0: 010 is 10 in decimal but 8 in octal, so write 10 (or 8)",
		"09":                   "a seed is written in decimal digits without a leading 0: write 9",
		"00":                   "a seed is written in decimal digits without a leading 0: write 0",
		"1_000":                "a seed is written in decimal digits without _: write 1000",
		"-1":                   "must be 0 or more",
		"+1":                   "not a whole number",
		"1e3":                  "not a whole number",
		"18446744073709551616": "too large (at most 18446744073709551615)",
		"":                     "empty: a seed is a whole number from 0 to 18446744073709551615",
	} {
		_, err := ParseSeed(text)
		assert.EqualError(t, err, want, text)
	}
}

// A scenario file's seed: reads as ParseSeed reads it (and as --seed does): a hex seed is
// refused where it stands. A spec with an empty field or stage is refused in a file as on
// the command line, where the file gives it.
func TestScenarioFileSeedAndSpecAreStrict(t *testing.T) {
	const rest = "horizon: 1s\nsources: [{kind: constant, rate: 5}]\n"
	for _, tc := range []struct{ yaml, want string }{
		{"seed: 0x1f\n" + rest + "limiters: [concurrency:max=1]\n", `f.yaml:1:7: seed: "0x1f": a seed is written in decimal digits: 0x1f is hex for 31, so write 31`},
		{"seed: 010\n" + rest + "limiters: [concurrency:max=1]\n", `f.yaml:1:7: seed: "010": a seed is written in decimal digits without a leading 0: 010 is 10 in decimal but 8 in octal, so write 10 (or 8)`},
		{"seed: 1_000\n" + rest + "limiters: [concurrency:max=1]\n", `f.yaml:1:7: seed: "1_000": a seed is written in decimal digits without _: write 1000`},
		{rest + "limiters:\n  - token-bucket:capacity=10,rate=100/1s,\n", `f.yaml:4:5: limiters[0]: limiter spec "token-bucket:capacity=10,rate=100/1s,": an empty field at the end (a trailing comma): fields are FIELD=VALUE joined by single commas`},
		{rest + "limiters:\n  - {spec: \"token-bucket:capacity=10,,rate=100/1s\"}\n", `f.yaml:4:12: limiters[0]: limiter spec "token-bucket:capacity=10,,rate=100/1s": an empty field after capacity=10 (two commas in a row)`},
		{rest + "limiters:\n  - \"keys(max=10,):token-bucket:capacity=10,rate=100/1s\"\n", `f.yaml:4:5: limiters[0]: limiter spec "keys(max=10,)": an empty field at the end (a trailing comma)`},
		{rest + "limiters:\n  - token-bucket:capacity=10,rate=100/1s+\n", `f.yaml:4:5: limiters[0]: limiter spec "token-bucket:capacity=10,rate=100/1s+": an empty stage at the end (a trailing +)`},
	} {
		_, err := Load("f.yaml", []byte(tc.yaml))
		require.Error(t, err, tc.yaml)
		assert.Contains(t, err.Error(), tc.want, tc.yaml)
	}
	sc, err := Load("f.yaml", []byte("seed: 31\n"+rest+"limiters: [\"token-bucket:capacity=10,rate=100/1s\"]\n"))
	require.NoError(t, err)
	assert.EqualValues(t, 31, sc.Seed)
}
