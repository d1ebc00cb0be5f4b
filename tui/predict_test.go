package tui

import (
	"strings"
	"testing"
)

// playUntilAsked plays frames until the workbench asks or stops.
func playUntilAsked(t *testing.T, m *Model) {
	t.Helper()
	for i := 0; i < 10000 && m.playing && m.mode != modeGuess; i++ {
		frames(m, 1)
	}
}

// Predict mode pauses before the burst, asks, plays, and shows each lane's answer against
// the guess: the token bucket admits 3 of the burst's 5 (its capacity), the leaky bucket 1.
func TestPredictThenReveal(t *testing.T) {
	m := open(t, "burst-after-idle", 80, 24)
	press(m, "p", "space")
	playUntilAsked(t, m)
	if m.mode != modeGuess {
		t.Fatalf("predict mode did not ask (t=%v):\n%s", m.sim.now, m.View())
	}
	view := strings.ReplaceAll(m.View(), "\n", " ")
	mustContain(t, view, "next: a burst after idle at t=50ms", "Of the next 5 requests (#1–#5), how many will each lane admit?",
		"admitted 0/0", "guess>")
	checkFits(t, m.View(), 80, 24)
	if m.sim.steps != 0 {
		t.Fatalf("asked at event %d: the question comes before the burst", m.sim.steps)
	}
	press(m, "3")
	press(m, "enter")
	mustContain(t, m.View(), "1 numbers for 2 lanes")
	press(m, "ctrl+u", "3 9", "enter")
	mustContain(t, m.View(), `lane 2: "9" is not a count from 0 to 5`)
	press(m, "ctrl+u", "3 2", "enter")
	for i := 0; i < 1000 && m.playing; i++ {
		frames(m, 1)
	}
	view = m.View()
	checkLegible(t, m, "the reveal")
	mustContain(t, view, "reveal · requests #1–#5: 1 of 2 lanes guessed right",
		"token-bucket:capacity=3,rate=100/1s  admitted 3 of 5 · you said 3 ✓ right",
		"leaky-bucket:rate=100/1s  admitted 1 of 5 · you said 2 ✗ off by 1",
		"t=50ms of 250ms")
	golden(t, "predict-reveal-80x24", "predict mode on burst-after-idle at 80×24: the answer for the first burst\n"+
		"(requests 1 to 5) against the guesses 3 and 2.", view)

	press(m, "x") // any key closes the answer
	press(m, "space")
	playUntilAsked(t, m)
	mustContain(t, strings.ReplaceAll(m.View(), "\n", " "), "next: a burst after idle at t=80ms", "(#6–#10)")
	press(m, "esc", "p")
	if m.predictOn || m.predict != nil {
		t.Fatal("p did not leave predict mode")
	}
}

// Before a full fixed window's boundary, predict mode asks too.
func TestPredictAtAFullWindowsBoundary(t *testing.T) {
	m := open(t, "boundary-attack", 100, 30)
	press(m, "p", "space")
	playUntilAsked(t, m)
	mustContain(t, strings.ReplaceAll(m.View(), "\n", " "), "next: a burst after idle at t=990ms")
	press(m, "esc", "space") // no guess for the first burst
	playUntilAsked(t, m)
	mustContain(t, strings.ReplaceAll(m.View(), "\n", " "), "next: the boundary at 1s of a full window", "admitted 100/")
	press(m, "ctrl+u", "5 0 0", "enter")
	for i := 0; i < 1000 && m.playing; i++ {
		frames(m, 1)
	}
	// At 1s the fixed window opens anew: it admits all five; the sliding window and the
	// bucket still count the last second's 100.
	mustContain(t, m.View(), "fixed-window:limit=100,window=1s  admitted 5 of 5 · you said 5 ✓ right",
		"sliding-window:limit=100,window=1s,slots=10  admitted 0 of 5 · you said 0 ✓ right")
}
