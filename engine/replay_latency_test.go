package engine

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/virtualclock"
)

// TestReplayLatencyHoldsPermits: with a latency_ns column a bulkhead of 2 holds each admitted
// request for its latency; a completion due at or before a row's time is given back before
// that row is decided. Worked by hand from the rows' times and latencies.
func TestReplayLatencyHoldsPermits(t *testing.T) {
	trace := "t_ns,permits,latency_ns\n" +
		"0,1,100\n" + // admitted, until 100
		"10,1,100\n" + // admitted, until 110
		"20,1,100\n" + // refused: 2 held
		"100,1,50\n" + // the first completes at 100, first: admitted, until 150
		"105,1,0\n" + // refused: held until 110 and 150
		"110,1,0\n" + // the second completes at 110: admitted, done at once (heard at the next row)
		"111,1,0\n" // admitted: only the one until 150 is held
	var out bytes.Buffer
	stack, err := ParseStack("concurrency:max=2")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Replay(strings.NewReader(trace), &out, [][]limiters.Spec{stack})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n")[1:] {
		got = append(got, line[strings.LastIndexByte(line, ',')+1:])
	}
	if strings.Join(got, "") != "1101011" {
		t.Errorf("decisions %s, want 1101011\n%s", strings.Join(got, ""), out.String())
	}
	if sum.Admitted[0] != 5 {
		t.Errorf("admitted %d, want 5", sum.Admitted[0])
	}
	// Without the column the same rows complete at once: all seven admitted.
	plain := "t_ns,permits\n0,1\n10,1\n20,1\n100,1\n105,1\n110,1\n111,1\n"
	sum, err = Replay(strings.NewReader(plain), &out, [][]limiters.Spec{stack})
	if err != nil || sum.Admitted[0] != 7 {
		t.Errorf("without latencies: admitted %d, %v; want 7", sum.Admitted[0], err)
	}
}

// TestReplayLatencyDrivesAdaptive: AIMD (initial 20, backoff 0.9, timeout 1s) hears five
// 2s latencies, each a drop, when the row at 3s is decided: 20 → 18 → 16 → 14 → 12 → 10.
// The same rows answered in 1ms leave it at 20: five in flight of 20 is app-limited (5·2 <
// 20), so it does not grow.
func TestReplayLatencyDrivesAdaptive(t *testing.T) {
	for _, c := range []struct {
		latency string
		want    int
	}{{"2000000000", 10}, {"1000000", 20}} {
		var b strings.Builder
		b.WriteString("t_ns,permits,latency_ns\n")
		for i := range 5 {
			b.WriteString(strings.Join([]string{strconv.Itoa(i * 1000000), "1", c.latency}, ",") + "\n")
		}
		b.WriteString("3000000000,1,0\n")
		clock := virtualclock.New()
		spec, err := limiters.ParseSpec("aimd:initial=20,min=1,max=200,timeout=1s")
		if err != nil {
			t.Fatal(err)
		}
		st, err := NewStack([]limiters.Spec{spec}, clock)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if _, err := ReplayStacks(strings.NewReader(b.String()), &out, []string{"aimd"}, []*Stack{st}, clock); err != nil {
			t.Fatal(err)
		}
		if got := st.Stage(0).(limiters.Adaptive).Limit(); got != c.want {
			t.Errorf("latency %sns: limit %d, want %d", c.latency, got, c.want)
		}
	}
}
