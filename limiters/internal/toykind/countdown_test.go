package toykind

import (
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/present"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The toy of docs/ADDING-A-KIND.md, registered from outside package limiters, is a kind like
// any other: ParseSpec reads it, the registry lists it complete, it decides, explains and
// prints back, and a second registration is refused.
func TestCountdownJoinsTheRegistry(t *testing.T) {
	Register()
	info, ok := limiters.Lookup(KindCountdown)
	require.True(t, ok)
	assert.Empty(t, info.Missing())
	style, ok := present.Lookup(string(KindCountdown))
	require.True(t, ok, "Register styles the kind too")
	assert.Equal(t, present.Style{Color: "#44aa99", ColorName: "toy teal", Glyph: "cross"}, style)
	assert.Equal(t, style, present.Of(string(KindCountdown)), "charts draw it in its own colour, not the fallback's")
	assert.Equal(t, []string{"limit"}, info.Required())

	l, err := limiters.Parse("countdown: limit=3", limiters.NewMonotonicClock())
	require.NoError(t, err)
	assert.Equal(t, "countdown:limit=3", l.String())
	assert.Equal(t, limiters.Admitted, l.AcquireAt(0, 2))
	assert.Equal(t, limiters.Rejected, l.AcquireAt(time.Hour, 2), "1 left, 2 asked")
	st := l.Snapshot(time.Hour)
	assert.Equal(t, limiters.ShapeLevel, st.Shape())
	assert.Equal(t, "1 of 3 permits left: 2 more would pass the limit, now and forever", st.Explain(2, limiters.Rejected))
	assert.Equal(t, limiters.Admitted, l.AcquireAt(time.Hour, 1))
	assert.Equal(t, limiters.Never, l.AcquireAt(0, 4), "more than the limit can ever pass")

	_, err = limiters.ParseSpec("countdown:limit=0")
	assert.ErrorContains(t, err, "limit=0: must be at least 1", "IntField reads whole numbers from 1")
	assert.ErrorContains(t, CountdownSpec{}.Validate(), "limit=0: must be at least 1", "and Validate refuses the zero value")
	_, err = limiters.ParseSpec("countdown:limt=3")
	assert.ErrorContains(t, err, "did you mean limit")

	assert.PanicsWithValue(t, `limiters: Register: kind "countdown" is registered already`, Register)
	assert.PanicsWithValue(t, `present: Register: kind "countdown" is styled already`, func() {
		present.Register("countdown", present.Style{Color: "#44aa98", ColorName: "teal", Glyph: "ring"})
	})
	assert.PanicsWithValue(t, `present: Register: kind "another-toy": colour #999933 is nginx's`, func() {
		present.Register("another-toy", present.Style{Color: "#999933", ColorName: "olive", Glyph: "ring"})
	}, "a colour another kind has is refused: the toy's first colour was nginx's olive")
	assert.Panics(t, func() { limiters.Register(limiters.KindInfo{Kind: "half-done"}) }, "an incomplete entry is refused")
}
