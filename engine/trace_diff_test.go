package engine

// Differential tests of Replay: on random traces of every layout, with rows that stress the
// trace reader's plain path's edges (digits at its limits, leading zeros, spaces, CRLF, blank
// lines, quotes, keys with commas or Unicode spaces, errors of every kind), read in chunks of
// random sizes, Replay's output and summary must be the seed's (trace_ref_test.go) byte for
// byte. The reader's own paths are held to the seed's reader in trace/diff_test.go, with the
// same generator.

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/internal/tracegen"
	"github.com/ratelab/ratelab/limiters"
)

// diffRuns is n, or a fifth of it under -race or -short.
func diffRuns(n int) int {
	if raceDetector || testing.Short() {
		return max(n/5, 1)
	}
	return n
}

// TestReplayPathsAgree: Replay's output, summary and error are the seed's, byte for byte, on
// plain traces (whose numbers it copies) and others (whose numbers it writes), with a stack of
// several stages and several stacks.
func TestReplayPathsAgree(t *testing.T) {
	var specs [][]limiters.Spec
	for _, text := range []string{"token-bucket:capacity=5,rate=50/1s", "sliding-window:limit=50,window=1s,slots=10",
		"fixed-window:limit=50,window=1s+concurrency:max=3", "leaky-bucket:rate=1000/1s"} {
		st, err := ParseStack(text)
		require.NoError(t, err)
		specs = append(specs, st)
	}
	r := rand.New(rand.NewPCG(14, 4))
	for _, layout := range []string{"plain", "plain", "ns", "t"} {
		for _, nasty := range []int{0, 2, 20, -20, -200} {
			for range diffRuns(25) {
				g := &tracegen.Gen{R: r, Nasty: max(nasty, -nasty), Benign: nasty < 0, Layout: layout}
				rows := tracegen.PickOf(r, 0, 1, 50, 500, 2000)
				if r.IntN(15) == 0 {
					rows = 30_000 // several 64 KiB writes
				}
				text := g.Trace(rows)
				stacks := specs[:1+r.IntN(len(specs))]
				var want, got bytes.Buffer
				wantSum, wantErr := refReplay(strings.NewReader(text), &want, stacks)
				sum, err := Replay(&tracegen.ChunkReader{R: rand.New(rand.NewPCG(1, 1)), Text: text, Max: 70_000, FailAt: -1}, &got, stacks)
				require.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(err), "trace %.300q", text)
				require.Equal(t, wantSum, sum)
				if !bytes.Equal(want.Bytes(), got.Bytes()) {
					require.Equal(t, want.String(), got.String(), "trace %.300q", text)
				}
			}
		}
	}
}

// A writer that fails part way stops Replay where the seed's stopped, having written the same.
func TestReplayWriteErrorAsBefore(t *testing.T) {
	spec, err := ParseStack("token-bucket:capacity=5,rate=50/1s")
	require.NoError(t, err)
	text := string(benchTrace(50_000, true))
	for _, limit := range []int{0, 1, 65535, 65536, 65537, 3*65536 - 1, 3 * 65536, 3*65536 + 1} {
		var want, got failingWriter
		want.limit, got.limit = limit, limit
		wantSum, wantErr := refReplay(strings.NewReader(text), &want, [][]limiters.Spec{spec})
		sum, err := Replay(strings.NewReader(text), &got, [][]limiters.Spec{spec})
		require.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(err), "limit %d", limit)
		require.Equal(t, wantSum, sum, "limit %d", limit)
		require.Equal(t, want.buf.String(), got.buf.String(), "limit %d", limit)
		require.Equal(t, want.writes, got.writes, "limit %d", limit)
	}
}

// failingWriter takes at most limit bytes, then fails; it counts the calls.
type failingWriter struct {
	buf    bytes.Buffer
	limit  int
	writes int
}

func (f *failingWriter) Write(p []byte) (int, error) {
	f.writes++
	n := min(len(p), f.limit-f.buf.Len())
	f.buf.Write(p[:n])
	if n < len(p) {
		return n, tracegen.ErrBroken
	}
	return n, nil
}

// When a row fills the output's 64 KiB exactly and the next row is malformed, what has been
// written is what the seed's bufio.Writer had written: nothing of that 64 KiB.
func TestReplayStopsAtAFullBufferAsBefore(t *testing.T) {
	spec, err := ParseStack("token-bucket:capacity=5,rate=50/1s")
	require.NoError(t, err)
	header := "t_ns,permits," + csvField(StackString(spec)) + "\n"
	for _, extra := range []int{-1, 0, 1} {
		var trace strings.Builder
		trace.WriteString("t_ns,permits\n")
		size := len(header)
		at := int64(1_000_000_000)
		for outChunk+extra-size >= 15+30 { // rows of 10 digits, ",1", ",d", "\n"
			trace.WriteString(strconv.FormatInt(at, 10) + ",1\n")
			size += 15
			at++
		}
		rest := outChunk + extra - size // 30 to 44: two rows of 10 to 17 digits, the second wider
		for _, width := range []int{rest / 2, rest - rest/2} {
			trace.WriteString(strconv.FormatInt(at, 10) + strings.Repeat("0", width-15) + ",1\n")
			size += width
			at++
		}
		require.Equal(t, outChunk+extra, size)
		trace.WriteString("bad\n")
		var want, got failingWriter
		want.limit, got.limit = 1<<30, 1<<30
		_, wantErr := refReplay(strings.NewReader(trace.String()), &want, [][]limiters.Spec{spec})
		_, err := Replay(strings.NewReader(trace.String()), &got, [][]limiters.Spec{spec})
		require.Error(t, wantErr)
		require.Equal(t, wantErr.Error(), err.Error())
		require.Equal(t, want.writes, got.writes, "extra %d: output %d", extra, size)
		require.Equal(t, want.buf.String(), got.buf.String())
	}
}
