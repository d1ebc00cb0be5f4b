package engine

import (
	"bytes"
	"encoding/csv"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/limiters"
)

func TestReplayOutput(t *testing.T) {
	tb, err := ParseStack("token-bucket:capacity=2,rate=10/1s")
	require.NoError(t, err)
	stacked, err := ParseStack("concurrency:max=1+fixed-window:limit=3,window=1s")
	require.NoError(t, err)
	in := "t_ns,permits,key\n0,1,a\n0,1,a\n0,1,a\n50000000,2,b\n100000000,1,c\n1000000000,1,d\n"
	var out bytes.Buffer
	sum, err := Replay(strings.NewReader(in), &out, [][]limiters.Spec{tb, stacked})
	require.NoError(t, err)
	recs, err := csv.NewReader(&out).ReadAll()
	require.NoError(t, err, "the output is valid CSV: specs with commas are quoted")
	require.Len(t, recs, 7)
	assert.Equal(t, []string{"t_ns", "permits", "token-bucket:capacity=2,rate=10/1s", "concurrency:max=1+fixed-window:limit=3,window=1s"}, recs[0])
	want := [][]string{
		{"0", "1", "1", "1"},
		{"0", "1", "1", "1"}, // open loop: the concurrency permit came back at once
		{"0", "1", "0", "1"},
		{"50000000", "2", "0", "0"}, // fixed window full
		{"100000000", "1", "1", "0"},
		{"1000000000", "1", "1", "1"},
	}
	assert.Equal(t, want, recs[1:])
	assert.Equal(t, int64(6), sum.Rows)
	assert.Equal(t, int64(7), sum.Permits)
	assert.Equal(t, sec, sum.Duration)
	assert.Equal(t, []int64{4, 4}, sum.Admitted)

	_, err = Replay(strings.NewReader("t_ns\n5\n4\n"), io.Discard, [][]limiters.Spec{tb})
	assert.ErrorContains(t, err, "line 3")
	assert.Equal(t, `"a,b"`, csvField("a,b"))
	assert.Equal(t, `"say ""hi"""`, csvField(`say "hi"`))
	assert.Equal(t, "plain", csvField("plain"))
}

// Replay agrees with a simulation of the same trace with a dropping client and no downstream.
func TestReplayMatchesRun(t *testing.T) {
	sc := &Scenario{Horizon: 10 * sec, Seed: 9, Client: Client{Policy: PolicyDrop},
		Lanes:   stacks(t, "sliding-window:limit=50,window=1s,slots=10", "token-bucket:capacity=5,rate=50/1s+concurrency:max=3"),
		Sources: []Source{{Kind: SourcePoisson, Rate: 80}}}
	st, err := newStream(sc.Sources[0], 0, sc.Seed, sc.Horizon)
	require.NoError(t, err)
	var trace strings.Builder
	trace.WriteString("t_ns\n")
	for {
		a, ok, err := st.next()
		require.NoError(t, err)
		if !ok {
			break
		}
		trace.WriteString(strconv.FormatInt(a.at, 10) + "\n")
	}
	res := run(t, sc)
	var stackList [][]limiters.Spec
	for _, l := range sc.Lanes {
		stackList = append(stackList, l.Stack)
	}
	sum, err := Replay(strings.NewReader(trace.String()), io.Discard, stackList)
	require.NoError(t, err)
	assert.Equal(t, res.Lanes[0].Totals.Offered, sum.Rows)
	assert.Equal(t, []int64{res.Lanes[0].Totals.Admitted, res.Lanes[1].Totals.Admitted}, sum.Admitted)
}

// Replayed permits add up exactly: two rows of the most permits are 2·(2^31−1), where two
// rows of 2^63−1 used to report "-2 permits".
func TestReplayedPermitsAddUpExactly(t *testing.T) {
	tb, err := ParseStack("token-bucket:capacity=3,rate=100/1s")
	require.NoError(t, err)
	sum, err := Replay(strings.NewReader("t_ns,permits\n0,2147483647\n1,2147483647\n"), io.Discard, [][]limiters.Spec{tb})
	require.NoError(t, err)
	assert.Equal(t, int64(2*MaxPermits), sum.Permits)

	_, err = Replay(strings.NewReader("t_ns,permits\n0,9223372036854775807\n1,9223372036854775807\n"), io.Discard, [][]limiters.Spec{tb})
	assert.ErrorContains(t, err, "line 2: permits 9223372036854775807 is more than a request may ask for")
}
