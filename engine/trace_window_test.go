package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A trace narrowed to a window is the whole run's trace cut to that window, record for
// record, and changes nothing else: the bins, totals and waits are the untraced run's. A
// run that stops at the window's end (the horizon moved to it) traces the same records.
func TestTraceWindowIsTheWholeTraceCut(t *testing.T) {
	mk := func() *Scenario {
		return &Scenario{Seed: 3, Horizon: 3 * sec, Client: Client{Policy: PolicyBackoff, MaxAttempts: 3, Delay: 5 * ms, Jitter: true},
			Lanes:      stacks(t, "token-bucket:capacity=5,rate=100/1s", "sliding-window:limit=100,window=1s,slots=10"),
			Sources:    []Source{{Kind: SourcePoisson, Rate: 300}},
			Downstream: &Downstream{Phases: []Phase{{Service: Distribution{Kind: DistExponential, Mean: 20 * ms}}}}}
	}
	full := mk()
	full.Trace = true
	whole := run(t, full)
	plain := run(t, mk())

	from, to := 1200*ms, 1700*ms
	win := mk()
	win.Trace, win.TraceFrom, win.TraceTo = true, from, to
	narrowed := run(t, win)

	short := mk()
	short.Horizon, short.Trace, short.TraceFrom = to, true, from
	stopped := run(t, short)

	for i := range whole.Lanes {
		var cut []Record
		for _, r := range whole.Lanes[i].Trace {
			if r.At >= from && r.At < to {
				cut = append(cut, r)
			}
		}
		require.NotEmpty(t, cut)
		require.Less(t, len(cut), len(whole.Lanes[i].Trace)/3)
		require.Equal(t, cut, narrowed.Lanes[i].Trace, "lane %d", i)
		require.Equal(t, cut, stopped.Lanes[i].Trace, "lane %d, stopped at the window's end", i)
		require.Equal(t, from, narrowed.Lanes[i].TraceFrom)
		require.Equal(t, to, narrowed.Lanes[i].TraceTo)

		n := narrowed.Lanes[i]
		n.Trace, n.TraceFrom, n.TraceTo = nil, 0, 0
		require.Equal(t, plain.Lanes[i], n, "lane %d: the window changes nothing but the trace", i)
	}
}

func TestTraceWindowIsValidated(t *testing.T) {
	for _, tc := range []struct {
		from, to time.Duration
		field    string
	}{{-1, 0, "trace_from"}, {3 * sec, 0, "trace_from"}, {0, -1, "trace_to"}, {sec, sec, "trace_to"}, {sec, 500 * ms, "trace_to"}} {
		sc := &Scenario{Horizon: 3 * sec, Lanes: stacks(t, "token-bucket:capacity=5,rate=100/1s"),
			Sources: []Source{{Kind: SourcePoisson, Rate: 300}}, TraceFrom: tc.from, TraceTo: tc.to}
		require.ErrorContains(t, sc.Validate(), tc.field, "%v..%v", tc.from, tc.to)
	}
}

// TraceWindow gives an untraced run's results the window's trace, as a run traced in that
// window has it.
func TestTraceWindowAddsTheWindowsTrace(t *testing.T) {
	sc := &Scenario{Seed: 5, Horizon: 2 * sec, Client: Client{Policy: PolicyDrop},
		Lanes:   stacks(t, "leaky-bucket:rate=100/1s", "fixed-window:limit=100,window=1s"),
		Sources: []Source{{Kind: SourceRamp, Rate: 50, RateTo: 400}}}
	res := run(t, sc)
	require.Empty(t, res.Lanes[0].Trace)
	require.NoError(t, TraceWindow(context.Background(), sc, res, 900*ms, 1100*ms))

	traced := *sc
	traced.Trace, traced.TraceFrom, traced.TraceTo = true, 900*ms, 1100*ms
	want := run(t, &traced)
	require.Equal(t, want, res)
	require.NotEmpty(t, res.Lanes[1].Trace)
}
