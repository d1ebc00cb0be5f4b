package peers

import (
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A keyed spec reads, prints back, validates and refuses to build one limiter.
func TestKeyedSpec(t *testing.T) {
	s, err := limiters.ParseKeyedSpec(" keys( max=1000, evict=fresh ) : nginx:rate=10r/s,burst=5")
	require.NoError(t, err)
	assert.Equal(t, "keys(max=1000,evict=fresh):nginx:rate=10r/s,burst=5", s.String())
	again, err := limiters.ParseKeyedSpec(s.String())
	require.NoError(t, err)
	assert.Equal(t, s, again)
	assert.Equal(t, KindNginx, s.Kind())
	assert.NoError(t, s.Validate())
	_, bounded := s.AdmissionBound(time.Second)
	assert.False(t, bounded, "no bound over all keys")
	assert.Equal(t, s.Spec.InitialPermits(), s.InitialPermits())
	_, err = s.New(zeroClock{})
	assert.ErrorContains(t, err, "NewKeyed")
	assert.True(t, limiters.IsKeyedSpec(s.String()))
	assert.False(t, limiters.IsKeyedSpec("token-bucket:capacity=1,rate=1/1s"))
	for text, want := range map[string]string{
		"keys(max=10:token-bucket:capacity=1,rate=1/1s": "no closing )",
		"keys(max=10)token-bucket:capacity=1,rate=1/1s": "expected : and the limiter",
		"keys(max=0):token-bucket:capacity=1,rate=1/1s": "max=0",
		"keys(max=10):token-bucket:capacity=1":          "rate=: missing",
		"token-bucket:capacity=1,rate=1/1s":             "starts with keys(",
	} {
		_, err := limiters.ParseKeyedSpec(text)
		if assert.Error(t, err, text) {
			assert.Contains(t, err.Error(), want, text)
		}
	}
}
