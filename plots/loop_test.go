package plots

import (
	"slices"
	"testing"

	"github.com/ratelab/ratelab/engine"
)

// The loop chart of retry-herd: two panels per lane; the obedient lane's retries reach 400
// in one 10ms bin, at 10.5s, where its herd marker is, while the jittered lane's never pass
// 4; goodput is 100 admissions in the first 500ms bin (200/s). A scenario whose clients drop
// has no loop chart.
func TestLoopChartShowsTheHerdAndGoodput(t *testing.T) {
	sc, res := runScenario(t, "retry-herd", nil)
	fig, err := Build("loop", sc, res)
	if err != nil {
		t.Fatal(err)
	}
	if len(fig.Panels) != 4 {
		t.Fatalf("%d panels, want 2 per lane", len(fig.Panels))
	}
	series := func(p *Panel, label string) Series {
		for _, s := range p.Series {
			if s.Label == label {
				return s
			}
		}
		t.Fatalf("panel %q has no %q series", p.Title, label)
		return Series{}
	}
	obeyed, jittered := series(fig.Panels[0], "retries"), series(fig.Panels[2], "retries")
	peak := slices.Max(obeyed.Y)
	if at := obeyed.X[slices.Index(obeyed.Y, peak)]; peak != 400 || at != 10.5 {
		t.Errorf("obedient retries peak %v at %vs, want 400 at 10.5s", peak, at)
	}
	if m := slices.Max(jittered.Y); m > 4 {
		t.Errorf("jittered retries peak %v per 10ms, want at most 4", m)
	}
	if s := series(fig.Panels[0], "herd peak: 400 retries in 10ms"); s.X[0] != 10.5 {
		t.Errorf("herd marker at %v", s.X)
	}
	if g := slices.Max(series(fig.Panels[1], "admitted").Y); g != 200 {
		t.Errorf("goodput peaks at %v/s, want 100 in 500ms: 200/s", g)
	}
	sc, res = runScenario(t, "burst-after-idle", nil)
	if slices.Contains(Applicable(sc, res), "loop") {
		t.Error("burst-after-idle's clients drop: no loop chart")
	}
	sc.Client = engine.Client{Policy: engine.PolicyRetry, Delay: 1, MaxAttempts: 2}
	if !slices.Contains(Applicable(sc, res), "loop") {
		t.Error("a retrying client has a loop chart")
	}
}
