package engine

import (
	"context"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func sizeofEvent() uintptr { return unsafe.Sizeof(event{}) }

const (
	ms  = time.Millisecond
	sec = time.Second
)

// stacks makes one lane per stack text.
func stacks(t testing.TB, texts ...string) []LaneSpec {
	t.Helper()
	out := make([]LaneSpec, len(texts))
	for i, text := range texts {
		st, err := ParseStack(text)
		require.NoError(t, err, text)
		out[i] = LaneSpec{Stack: st}
	}
	return out
}

func run(t testing.TB, sc *Scenario) *Results {
	t.Helper()
	res, err := Run(context.Background(), sc, nil)
	require.NoError(t, err)
	return res
}

// script is a script source at the given times (all 1 permit).
func script(times ...time.Duration) Source {
	s := Source{Kind: SourceScript}
	for _, at := range times {
		s.Script = append(s.Script, Arrival{At: at})
	}
	return s
}

// traced runs sc with tracing on and returns lane i's trace.
func traced(t testing.TB, sc *Scenario, lane int) ([]Record, LaneResult) {
	t.Helper()
	sc.Trace = true
	res := run(t, sc)
	return res.Lanes[lane].Trace, res.Lanes[lane]
}

// filter keeps the records with the given outcome.
func filter(recs []Record, o Outcome) []Record {
	var out []Record
	for _, r := range recs {
		if r.Outcome == o {
			out = append(out, r)
		}
	}
	return out
}

// times lists the records' times.
func times(recs []Record) []time.Duration {
	out := make([]time.Duration, len(recs))
	for i, r := range recs {
		out[i] = r.At
	}
	return out
}

func runErr(sc *Scenario) (*Results, error) { return Run(context.Background(), sc, nil) }
