package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/virtualclock"
)

// Every kind in the registry is drawn by its shape's drawing, not by the generic fallback
// ("kind · n free"), in at most the lines and cells allowed: a kind whose shape has no
// drawing fails here, by name.
func TestEveryKindsStateIsDrawn(t *testing.T) {
	sty := DefaultStyles()
	for _, info := range limiters.Kinds() {
		l, err := limiters.Parse(info.Example, virtualclock.New())
		if err != nil {
			t.Fatalf("%s: %v", info.Kind, err)
		}
		st := l.Snapshot(0)
		lines := stateLines(st, 60, 3, sty)
		fallback := fmt.Sprintf("%s · %d free", st.Kind, st.Available)
		if len(lines) == 0 || lines[0] == fallback {
			t.Errorf("%s (shape %q): drawn by the fallback %q: its shape has no drawing", info.Kind, info.Shape, fallback)
		}
		if len(lines) > 3 {
			t.Errorf("%s: %d lines, want at most 3", info.Kind, len(lines))
		}
		if strings.Contains(strings.Join(lines, "\n"), "%!") {
			t.Errorf("%s: a formatting error in %q", info.Kind, lines)
		}
	}
}

// The level shape (peers that count tokens) draws its level against its maximum and when the
// next request can pass.
func TestLevelShapeDraws(t *testing.T) {
	st := limiters.State{At: 10 * time.Millisecond, Level: 3.5, LevelMax: 10, LevelName: "stored permits", NextFree: 25 * time.Millisecond}
	lines := levelLines(st, 40, 2, DefaultStyles())
	if len(lines) != 2 || lines[0] != "stored permits 3.5 of 10 · next free in 15ms" || !strings.HasSuffix(lines[1], " 3.5/10") {
		t.Errorf("level lines %q", lines)
	}
	if one := levelLines(st, 40, 1, DefaultStyles()); len(one) != 1 || !strings.Contains(one[0], "3.5/10") {
		t.Errorf("one line: %q", one)
	}
}
