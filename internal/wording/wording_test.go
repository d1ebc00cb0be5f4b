package wording

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDidYouMean(t *testing.T) {
	known := []string{"token-bucket", "leaky-bucket", "capacity", "rate"}
	assert.Equal(t, " (did you mean token-bucket?)", DidYouMean("tokne-bucket", known))
	assert.Equal(t, " (did you mean rate?)", DidYouMean("ratee", known))
	assert.Equal(t, "", DidYouMean("rate", known), "the name itself is no suggestion")
	assert.Equal(t, "", DidYouMean("burst", known), "too far to be a typo")
}

func TestSplitListSaysWhereTheEmptyItemIs(t *testing.T) {
	items, empty := SplitList(" capacity=10 , rate=100/1s ", ",", "field")
	assert.Equal(t, []string{"capacity=10", "rate=100/1s"}, items)
	assert.Empty(t, empty)
	for text, want := range map[string]string{
		"capacity=10,rate=100/1s,": "an empty field at the end (a trailing comma)",
		",capacity=10":             "an empty field at the start (a comma before capacity=10)",
		"capacity=10,,rate=1/1s":   "an empty field after capacity=10 (two commas in a row)",
	} {
		_, empty := SplitList(text, ",", "field")
		assert.Equal(t, want, empty, text)
	}
	_, empty = SplitList("a++b", "+", "stage")
	assert.Equal(t, "an empty stage after a (two + signs in a row)", empty)
	items, empty = SplitList("   ", ",", "field")
	assert.Nil(t, items)
	assert.Empty(t, empty)
}
