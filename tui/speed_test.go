package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/scenarios"
)

// Every speed plays its frame's share of virtual time, the fastest named ones too: at 5min/s
// a 50ms frame is 15s. v·frame/1s overflowed int64 there (1.5·10¹⁹), the target came out
// negative and the play stood still.
func TestEverySpeedMovesTime(t *testing.T) {
	for i, v := range speeds {
		if v == 0 {
			continue // max: as far as maxFrameWork reaches
		}
		if want := v * frame / time.Second; v < 2*time.Minute && perFrame(v) != want {
			t.Errorf("%v/s: %v a frame, the old formula %v", v, perFrame(v), want)
		}
		m := open(t, "diurnal", 100, 30) // 60s: two frames at 5min/s are 30s
		m.speed = i
		press(m, "space")
		frames(m, 1)
		if m.sim.now <= 0 || m.sim.now > perFrame(v) {
			t.Errorf("speed %v/s: at %v after a frame, want (0, %v]", v, m.sim.now, perFrame(v))
		}
		// A frame may stop short when its simulation outlasts maxFrameWork; the next goes on.
		for n := 0; n < 200 && m.sim.now < 2*perFrame(v); n++ {
			frames(m, 1)
		}
		if m.sim.now < 2*perFrame(v) {
			t.Errorf("speed %v/s: at %v after 200 frames, want at least %v", v, m.sim.now, 2*perFrame(v))
		}
	}
}

// A recording ends, whatever the speed its horizon picks: noisy-neighbour's 10s played at
// 500ms/s is 400 frames, past the 369th of which the old formula overflowed and never
// reached the horizon (the recording ran until killed).
func TestRecordingEnds(t *testing.T) {
	sc, err := scenarios.Get("noisy-neighbour")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := Record(context.Background(), sc, 100, 30, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if last := lines[len(lines)-2]; !strings.HasPrefix(last, "[20.") { // 10s at 500ms/s is 20s
		t.Errorf("the last frame is at %.12s…, want 20s", last)
	}
}
