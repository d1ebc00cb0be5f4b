package engine

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/limiters"
)

// A stage whose admission bound over a meter's length is past int64 (limit 2^32-1 per 2^31ns
// over 146 years) bounds nothing: AdmissionBound saturates at MaxInt64, the meter keeps the
// other stages' bound, and reports MaxInt64 when no stage has a smaller one. The bound used to
// wrap negative and replace the token bucket's, so that the meter checked nothing and printed
// -9223372034707292161.
func TestMeterIgnoresABoundPastInt64(t *testing.T) {
	long := MaxTime - 1
	sc := &Scenario{
		Horizon: 10 * ms, Windows: []time.Duration{long},
		Sources: []Source{{Kind: SourceConstant, Rate: 1000}},
		Lanes: stacks(t, "fixed-window:limit=4294967295,window=2147483648ns",
			"token-bucket:capacity=3,rate=100/1s+fixed-window:limit=4294967295,window=2147483648ns"),
	}
	res := run(t, sc)
	meter := func(lane int) WindowMeter {
		for _, w := range res.Lanes[lane].Windows {
			if w.Length == long {
				return w
			}
		}
		t.Fatalf("lane %d has no %v meter", lane, long)
		return WindowMeter{}
	}
	single := meter(0).Bound
	assert.True(t, single == -1 || single == math.MaxInt64, "no stage bounds it: %d", single)
	tb, ok := limiters.AdmissionBound(sc.Lanes[1].Stack[0], long)
	require.True(t, ok)
	assert.Equal(t, tb, meter(1).Bound, "the token bucket's bound")
}

// A stage whose window is 2^62ns or longer (a rate's window may be: 415180/2083807h is a
// valid leaky bucket) is refused: the meters measure over it, and its neighbour's bound over
// it overflowed into 0, so that the meter reported the lane's first admission as exceeding it.
func TestValidateRefusesAStageWindowPastTheRange(t *testing.T) {
	for _, text := range []string{
		"leaky-bucket:rate=415180/2083807h+flash5-fixed:limit=98737,window=1250283h",
		"token-bucket:capacity=1,rate=1000/2000000h",
		"fixed-window:limit=1,window=1281023h53m38.427387904s",
	} {
		sc := &Scenario{Horizon: sec, Sources: []Source{{Kind: SourceConstant, Rate: 5}}, Lanes: stacks(t, "concurrency:max=1", text)}
		err := sc.Validate()
		var fe *FieldError
		if assert.ErrorAs(t, err, &fe, text) {
			assert.Equal(t, "limiters[1]", fe.Field)
			assert.Contains(t, fe.Reason, "must be less than 2^62ns (about 146 years)", text)
		}
	}
	sc := &Scenario{Horizon: sec, Sources: []Source{{Kind: SourceConstant, Rate: 5}},
		Lanes: stacks(t, "fixed-window:limit=1,window=1281023h53m38.427387903s+leaky-bucket:rate=1000/1281023h")}
	require.NoError(t, sc.Validate(), "below 2^62ns")
}
