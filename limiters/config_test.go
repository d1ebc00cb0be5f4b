package limiters

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/ratelab/ratelab/virtualclock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Bad configurations are refused at construction with a *ConfigError whose text names the
// field and the value.
func TestConfigErrors(t *testing.T) {
	c := virtualclock.New()
	var nilClock Clock
	cases := []struct {
		name  string
		build func() error
		field string
		value string
	}{
		{"token bucket capacity 0", func() error { _, err := NewTokenBucket(0, PerSecond(1), c); return err }, "capacity", "0"},
		{"token bucket capacity −3", func() error { _, err := NewTokenBucket(-3, PerSecond(1), c); return err }, "capacity", "-3"},
		{"token bucket rate 0/1s", func() error { _, err := NewTokenBucket(1, PerSecond(0), c); return err }, "rate", "0/1s"},
		{"token bucket rate −5/1s", func() error { _, err := NewTokenBucket(1, PerSecond(-5), c); return err }, "rate", "-5/1s"},
		{"token bucket window 0", func() error { _, err := NewTokenBucket(1, Rate{1, 0}, c); return err }, "rate", "1/0s"},
		{"token bucket window −1s", func() error { _, err := NewTokenBucket(1, Rate{1, -time.Second}, c); return err }, "rate", "1/-1s"},
		// 2 per ns: T = 0.5ns, below the clock's resolution.
		{"token bucket T < 1ns", func() error { _, err := NewTokenBucket(1, Rate{2, 1}, c); return err }, "rate", "2/1ns"},
		{"token bucket τ > 2^62", func() error { _, err := NewTokenBucket(1<<40, PerSecond(1), c); return err }, "capacity", "1099511627776"},
		{"token bucket nil clock", func() error { _, err := NewTokenBucket(1, PerSecond(1), nilClock); return err }, "clock", "nil"},
		{"leaky bucket rate 0", func() error { _, err := NewLeakyBucket(PerSecond(0), c); return err }, "rate", "0/1s"},
		{"leaky bucket T < 1ns", func() error { _, err := NewLeakyBucket(Rate{2, 1}, c); return err }, "rate", "2/1ns"},
		{"leaky bucket nil clock", func() error { _, err := NewLeakyBucket(PerSecond(1), nil); return err }, "clock", "nil"},
		{"sliding limit 0", func() error { _, err := NewSlidingWindow(0, time.Second, 10, c); return err }, "limit", "0"},
		{"sliding limit −1", func() error { _, err := NewSlidingWindow(-1, time.Second, 10, c); return err }, "limit", "-1"},
		{"sliding limit 2^32", func() error { _, err := NewSlidingWindow(1<<32, time.Hour, 10, c); return err }, "limit", "4294967296"},
		{"sliding window 0", func() error { _, err := NewSlidingWindow(10, 0, 10, c); return err }, "window", "0s"},
		{"sliding window −1s", func() error { _, err := NewSlidingWindow(10, -time.Second, 10, c); return err }, "window", "-1s"},
		// A window shorter than 2^(bits.Len(limit)−1) ns: over a permit per ns.
		{"sliding window too short", func() error { _, err := NewSlidingWindow(1000, 500, 10, c); return err }, "window", "500ns"},
		{"sliding slots 0", func() error { _, err := NewSlidingWindow(10, time.Second, 0, c); return err }, "slots", "0"},
		{"sliding slots −2", func() error { _, err := NewSlidingWindow(10, time.Second, -2, c); return err }, "slots", "-2"},
		{"sliding slots 4097", func() error { _, err := NewSlidingWindow(10, time.Hour, 4097, c); return err }, "slots", "4097"},
		// 1s is not a whole number of ns in 7 slots.
		{"sliding slots do not divide", func() error { _, err := NewSlidingWindow(10, time.Second, 7, c); return err }, "slots", "7"},
		{"sliding nil clock", func() error { _, err := NewSlidingWindow(10, time.Second, 10, nil); return err }, "clock", "nil"},
		{"fixed limit 0", func() error { _, err := NewFixedWindow(0, time.Second, c); return err }, "limit", "0"},
		{"fixed limit 2^32", func() error { _, err := NewFixedWindow(1<<32, time.Hour, c); return err }, "limit", "4294967296"},
		{"fixed window 0", func() error { _, err := NewFixedWindow(10, 0, c); return err }, "window", "0s"},
		{"fixed window −1ms", func() error { _, err := NewFixedWindow(10, -time.Millisecond, c); return err }, "window", "-1ms"},
		{"fixed window too short", func() error { _, err := NewFixedWindow(100, 63, c); return err }, "window", "63ns"},
		{"fixed nil clock", func() error { _, err := NewFixedWindow(10, time.Second, nil); return err }, "clock", "nil"},
		{"warm-up capacity 0", func() error { _, err := NewWarmUpTokenBucket(0, PerSecond(1), time.Second, c); return err }, "capacity", "0"},
		{"warm-up rate 0", func() error { _, err := NewWarmUpTokenBucket(1, PerSecond(0), time.Second, c); return err }, "rate", "0/1s"},
		{"warm-up T < 1ns", func() error { _, err := NewWarmUpTokenBucket(1, Rate{3, 2}, time.Second, c); return err }, "rate", "3/2ns"},
		{"warm-up period 0", func() error { _, err := NewWarmUpTokenBucket(1, PerSecond(1), 0, c); return err }, "warmup", "0s"},
		{"warm-up period −1m", func() error { _, err := NewWarmUpTokenBucket(1, PerSecond(1), -time.Minute, c); return err }, "warmup", "-1m"},
		{"warm-up nil clock", func() error { _, err := NewWarmUpTokenBucket(1, PerSecond(1), time.Second, nil); return err }, "clock", "nil"},
		{"concurrency max 0", func() error { _, err := NewConcurrency(0); return err }, "max", "0"},
		{"concurrency max −4", func() error { _, err := NewConcurrency(-4); return err }, "max", "-4"},
		{"concurrency max 2^31", func() error { _, err := NewConcurrency(math.MaxInt32 + 1); return err }, "max", "2147483648"},
	}
	for _, tc := range cases {
		err := tc.build()
		require.Error(t, err, tc.name)
		var ce *ConfigError
		require.True(t, errors.As(err, &ce), "%s: %T is not a *ConfigError", tc.name, err)
		assert.Equal(t, tc.field, ce.Field, tc.name)
		assert.Equal(t, tc.value, ce.Value, tc.name)
		assert.Contains(t, err.Error(), tc.field+"="+tc.value, tc.name)
	}
}

// The edges that are accepted: T of exactly 1ns, the largest limit, one slot.
func TestConfigEdgesAccepted(t *testing.T) {
	c := virtualclock.New()
	_, err := NewTokenBucket(1, Rate{1, 1}, c)
	assert.NoError(t, err, "T = 1ns")
	_, err = NewLeakyBucket(Rate{1_000_000_000, time.Second}, c)
	assert.NoError(t, err, "1e9/s: T = 1ns")
	_, err = NewFixedWindow(math.MaxUint32, 1<<31, c)
	assert.NoError(t, err, "largest limit, shortest window for it")
	_, err = NewFixedWindow(100, 64, c)
	assert.NoError(t, err, "limit 100: 2^6 ns")
	_, err = NewSlidingWindow(1, time.Nanosecond, 1, c)
	assert.NoError(t, err)
	_, err = NewConcurrency(math.MaxInt32)
	assert.NoError(t, err)
}

// n ≤ 0 is Invalid; n > MaxPermits is Never ("never", not "not now") and RetryAfterAt says
// ok=false; n = MaxPermits can pass.
func TestRequestSizes(t *testing.T) {
	c := virtualclock.New()
	limiters := []testLimiter{
		must(NewTokenBucket(3, PerSecond(100), c)),
		must(NewLeakyBucket(PerSecond(100), c)),
		must(NewSlidingWindow(5, time.Second, 10, c)),
		must(NewFixedWindow(5, time.Second, c)),
		must(NewWarmUpTokenBucket(6, PerSecond(100), time.Nanosecond, c)),
		must(NewConcurrency(4)),
	}
	for _, l := range limiters {
		max := l.MaxPermits()
		for _, n := range []int{0, -1, math.MinInt} {
			assert.Equal(t, Invalid, l.AcquireAt(time.Second, n), "%s n=%d", l, n)
		}
		for _, n := range []int{max + 1, math.MaxInt} {
			assert.Equal(t, Never, l.AcquireAt(time.Second, n), "%s n=%d", l, n)
			assert.False(t, l.TryAcquireAt(time.Second, n))
		}
		if rl, ok := l.(RateLimiter); ok {
			for _, n := range []int{0, -1, max + 1, math.MaxInt} {
				w, ok := rl.RetryAfterAt(time.Second, n)
				assert.False(t, ok, "%s RetryAfterAt n=%d", l, n)
				assert.Zero(t, w)
			}
			w, ok := rl.RetryAfterAt(time.Second, max)
			assert.True(t, ok, "%s n=max", l)
			assert.Zero(t, w, "%s: full at 1s", l)
		}
		assert.Equal(t, max, l.AvailableAt(time.Second), "%s: nothing was taken", l)
		assert.Equal(t, Admitted, l.AcquireAt(time.Second, max), "%s n=max", l)
		assert.Equal(t, Rejected, l.AcquireAt(time.Second, 1), "%s: not now", l)
	}
	assert.Equal(t, "never", Never.String())
	assert.Equal(t, "invalid", Invalid.String())
	assert.Equal(t, "rejected", Rejected.String())
	assert.Equal(t, "admitted", Admitted.String())
	assert.Equal(t, "Decision(9)", Decision(9).String())
}

// ParseSpec errors name the key and the value.
func TestParseSpecErrors(t *testing.T) {
	cases := []struct {
		spec     string
		contains []string
	}{
		{"token-bukket:capacity=3,rate=100/1s", []string{`unknown kind "token-bukket"`, "token-bucket"}}, // known kinds listed
		{"", []string{`unknown kind ""`}},
		{"token-bucket:capacity=3,rate=100/1s,limit=4", []string{"limit=4", "not a field of token-bucket"}},
		{"token-bucket:rate=100/1s", []string{"capacity=", "missing", "token-bucket:capacity=3,rate=100/1s"}},
		{"sliding-window:limit=5", []string{"window=", "missing"}},
		{"token-bucket:capacity=3,capacity=4,rate=1/s", []string{"capacity=4", "given twice"}},
		{"token-bucket:capacity=three,rate=100/1s", []string{"capacity=three", `"three" is not a whole number`}},
		{"token-bucket:capacity=0,rate=100/1s", []string{"capacity=0", "at least 1"}},
		{"token-bucket:capacity=-2,rate=100/1s", []string{"capacity=-2", "at least 1"}},
		{"fixed-window:limit=5,window=1 sec", []string{"window=1 sec", "not a duration"}},
		{"fixed-window:limit=5,window=-1s", []string{"window=-1s", "must be positive"}},
		{"warm-up:capacity=3,rate=1/s,warmup=0s", []string{"warmup=0s", "must be positive"}},
		{"token-bucket:capacity=3,rate=100", []string{"rate=100", "permits/window"}},
		{"token-bucket:capacity=3,rate=x/1s", []string{"rate=x/1s", "permits"}},
		{"token-bucket:capacity=3,rate=100/fortnight", []string{"rate=100/fortnight", "window"}},
		{"token-bucket:capacity=3,rate=100/0s", []string{"rate=100/0s", "must be positive"}},
		{"concurrency:max", []string{"max=", "expected key=value"}},
	}
	for _, tc := range cases {
		_, err := ParseSpec(tc.spec)
		require.Error(t, err, tc.spec)
		var se *SpecError
		require.True(t, errors.As(err, &se), "%q: %T", tc.spec, err)
		for _, want := range tc.contains {
			assert.Contains(t, err.Error(), want, tc.spec)
		}
	}
}

// ParseSpec accepts whitespace, the "/s" shorthand and default slots; every spec prints back
// as it is parsed, and New refuses values the algorithm cannot honour.
func TestParseSpec(t *testing.T) {
	spec, err := ParseSpec("  token-bucket: capacity = 3 , rate=100/s ")
	require.NoError(t, err)
	assert.Equal(t, TokenBucketSpec{Capacity: 3, Rate: PerSecond(100)}, spec)
	assert.Equal(t, "token-bucket:capacity=3,rate=100/1s", spec.String())

	spec, err = ParseSpec("sliding-window:limit=7,window=100ms")
	require.NoError(t, err)
	assert.Equal(t, DefaultSlots, spec.(SlidingWindowSpec).Slots)

	r, err := ParseRate("7/100ms")
	require.NoError(t, err)
	assert.Equal(t, Rate{7, 100 * time.Millisecond}, r)
	assert.Equal(t, time.Duration(14_285_715), r.Interval(), "rounded up")
	r, err = ParseRate("5/m")
	require.NoError(t, err)
	assert.Equal(t, Rate{5, time.Minute}, r)

	_, err = Parse("sliding-window:limit=10,window=1s,slots=7", virtualclock.New())
	var ce *ConfigError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, "slots", ce.Field)

	for _, text := range []string{
		"token-bucket:capacity=3,rate=7/100ms",
		"warm-up:capacity=10,rate=3/1s,warmup=1m30s",
		"fixed-window:limit=1,window=1h",
		"sliding-window:limit=100,window=1m,slots=60",
	} {
		l, err := Parse(text, virtualclock.New())
		require.NoError(t, err, text)
		assert.Equal(t, text, l.String())
	}
	assert.Equal(t, "1h", FormatDuration(time.Hour))
	assert.Equal(t, "1h30m", FormatDuration(90*time.Minute))
	assert.Equal(t, "333.333334ms", FormatDuration(333_333_334))
}

// A misspelt kind or field gets the closest known name, case-insensitive; surrounding spaces
// are not part of a kind's name; a negative window is echoed as written.
func TestParseSpecSuggests(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"token-buckt:capacity=3,rate=100/1s", `unknown kind "token-buckt" (did you mean token-bucket?)`},
		{"Fixed-Window:limit=1,window=1s", `(did you mean fixed-window?)`},
		{"token-bucket:capcity=3,rate=100/1s", `not a field of token-bucket (did you mean capacity?)`},
		{"sliding-window:limit=1,window=1s,slot=3", `(did you mean slots?)`},
		{"token-bucket:capacity=3,rate=100/-1s", `rate=100/-1s: window: must be positive`},
	} {
		_, err := ParseSpec(tc.spec)
		require.Error(t, err, tc.spec)
		assert.Contains(t, err.Error(), tc.want, tc.spec)
	}
	_, err := ParseSpec("bogus:x=1")
	assert.NotContains(t, err.Error(), "did you mean", "nothing is close to bogus")
	spec, err := ParseSpec(" token-bucket :capacity=3,rate=100/1s")
	require.NoError(t, err)
	assert.Equal(t, "token-bucket:capacity=3,rate=100/1s", spec.String())
}
