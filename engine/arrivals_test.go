package engine

import (
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/trace"
)

// arrivalsOf reads every arrival of sc.
func arrivalsOf(t *testing.T, sc *Scenario) []trace.Row {
	t.Helper()
	a, err := NewArrivals(sc)
	require.NoError(t, err)
	defer a.Close()
	var rows []trace.Row
	for {
		row, err := a.Next()
		if errors.Is(err, io.EOF) {
			return rows
		}
		require.NoError(t, err)
		rows = append(rows, row)
	}
}

// Arrivals yields what a lane is offered, in the lane's order: the first attempt of every
// request of a traced run, by request number, has the same time, permits and key, including
// at equal times from different sources, and retries (which the client adds) are not in it.
func TestArrivalsAreWhatEveryLaneIsOffered(t *testing.T) {
	sc := &Scenario{
		Seed: 7, Horizon: 2 * sec,
		Sources: []Source{
			{Kind: SourceConstant, Rate: 50, Key: "even"},
			{Kind: SourceConstant, Rate: 25, Permits: 2, Key: "even-2"}, // every 40ms, on the first source's times
			{Kind: SourcePoisson, Rate: 80, Key: "poisson"},
			{Kind: SourceBursts, Bursts: []Burst{{At: 500 * ms, Count: 30}, {At: 1200 * ms, Count: 20, Spread: 10 * ms}}, Key: "burst"},
			{Kind: SourceScript, Script: []Arrival{{At: 0, Permits: 3, Key: "s"}, {At: 1500 * ms}, {At: 2 * sec}}},
		},
		Client: Client{Policy: PolicyRetry, Delay: 5 * ms, MaxAttempts: 3},
		Lanes:  stacks(t, "token-bucket:capacity=5,rate=60/1s"),
	}
	recs, lane := traced(t, sc, 0)
	require.False(t, lane.Truncated)
	var first []Record
	for _, r := range recs {
		if r.Attempt == 1 && (len(first) == 0 || r.Request > first[len(first)-1].Request) {
			first = append(first, r)
		}
	}
	rows := arrivalsOf(t, sc)
	require.Len(t, rows, len(first))
	require.EqualValues(t, lane.Totals.Offered, len(rows))
	assert.Greater(t, lane.Totals.Retried, int64(0), "the client retried, and Arrivals has none of them")
	ties := 0
	for i, r := range first {
		row := rows[i]
		assert.Equal(t, i+1, row.Line)
		assert.Equal(t, r.At, row.At, "arrival %d", i+1)
		assert.Equal(t, r.Permits, row.Permits, "arrival %d", i+1)
		assert.Equal(t, r.Key, row.Key, "arrival %d", i+1)
		if i > 0 && row.At == rows[i-1].At && row.Key != rows[i-1].Key {
			ties++
		}
	}
	assert.Greater(t, ties, 10, "the test has arrivals of different sources at equal times")
	assert.Less(t, rows[len(rows)-1].At, 2*sec, "nothing at or after the horizon")
	// Every call starts again, identically.
	assert.Equal(t, rows, arrivalsOf(t, sc))
	assert.True(t, slices.IsSortedFunc(rows, func(a, b trace.Row) int { return int(a.At - b.At) }))
}

func TestArrivalsRefuseAnInvalidScenario(t *testing.T) {
	_, err := NewArrivals(&Scenario{Horizon: time.Second})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sources")
}
