package limiters

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Parse names the way to the specs it cannot build alone: a keyed table and a stack, both of
// which the CLI takes (a user met "unknown kind" for keys(…) and wrote their own middleware).
func TestParseSaysWhereKeyedAndStackedSpecsGo(t *testing.T) {
	_, err := Parse("keys(max=100):token-bucket:capacity=3,rate=1/1s", NewMonotonicClock())
	require.ErrorContains(t, err, "ParseKeyedSpec")
	require.ErrorContains(t, err, "httplimit.New")
	_, err = Parse("token-bucket:capacity=3,rate=1/1s+concurrency:max=2", NewMonotonicClock())
	require.ErrorContains(t, err, "engine.ParseStack")
	ks, err := ParseKeyedSpec("keys(max=100):token-bucket:capacity=3,rate=1/1s")
	require.NoError(t, err)
	_, err = NewKeyed(ks.Spec, ks.Keys, NewMonotonicClock())
	require.NoError(t, err)
}
