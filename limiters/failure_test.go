package limiters

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestFailurePolicyDecides(t *testing.T) {
	clock := fixedClock(0)
	local, err := NewTokenBucket(2, PerSecond(10), clock)
	require.NoError(t, err)
	open := FailurePolicy{Mode: FailOpen, Timeout: 50 * time.Millisecond}
	closed := FailurePolicy{Mode: FailClosed, Timeout: 50 * time.Millisecond}
	fallback := FailurePolicy{Mode: FailLocal, Timeout: 50 * time.Millisecond, Local: local}
	for _, p := range []FailurePolicy{open, closed, fallback} {
		require.NoError(t, p.Validate(), p.String())
		require.Equal(t, Invalid, p.Decide(0, 0, 3), "%s: n=0 is invalid whatever the mode", p)
		require.Equal(t, Never, p.Decide(0, 4, 3), "%s: n beyond the remote's maximum can never pass", p)
	}
	for range 5 {
		require.Equal(t, Admitted, open.Decide(0, 3, 3), "fail-open admits every valid request")
		require.Equal(t, Rejected, closed.Decide(0, 1, 3), "fail-closed refuses every request")
	}
	require.Equal(t, 3, open.Available(0, 3))
	require.Equal(t, 0, closed.Available(0, 3))
	// local: the token bucket of capacity 2 at 10/s decides: two at once, then one per 100ms.
	require.Equal(t, 2, fallback.Available(0, 3))
	require.Equal(t, Admitted, fallback.Decide(0, 1, 3))
	require.Equal(t, Admitted, fallback.Decide(0, 1, 3))
	require.Equal(t, Rejected, fallback.Decide(0, 1, 3), "the local bucket is empty")
	require.Equal(t, Admitted, fallback.Decide(100*time.Millisecond, 1, 3), "one permit back after T = 100ms")
	require.Equal(t, "local (token-bucket:capacity=2,rate=10/1s), timeout 50ms", fallback.String())
	require.Equal(t, "fail-open, timeout 50ms", open.String())
}

func TestFailurePolicyValidate(t *testing.T) {
	local, err := NewTokenBucket(2, PerSecond(10), fixedClock(0))
	require.NoError(t, err)
	for _, c := range []struct {
		p    FailurePolicy
		want string
	}{
		{FailurePolicy{Timeout: time.Second}, "mode=FailureMode(0): must be fail-open, fail-closed or local"},
		{FailurePolicy{Mode: FailOpen}, "timeout=0s: must be positive"},
		{FailurePolicy{Mode: FailLocal, Timeout: time.Second}, "mode=local: a local limiter is required"},
		{FailurePolicy{Mode: FailClosed, Timeout: time.Second, Local: local}, "mode=fail-closed: a local limiter is only used by mode=local"},
	} {
		require.ErrorContains(t, c.p.Validate(), c.want)
	}
}

func TestParseFailureMode(t *testing.T) {
	for _, m := range FailureModes() {
		got, err := ParseFailureMode(m.String())
		require.NoError(t, err)
		require.Equal(t, m, got)
	}
	_, err := ParseFailureMode("fail-opne")
	require.EqualError(t, err, `unknown failure mode "fail-opne" (did you mean fail-open?) (known: fail-open, fail-closed, local)`)
}
