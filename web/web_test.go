package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/jsonout"
	"github.com/ratelab/ratelab/scenarios"
	"github.com/ratelab/ratelab/web"
)

// The page runs a built-in from its scenario file (BuiltinYAML): the JSON is jsonout.RunJSON's
// of the built-in itself, which `ratelab run NAME --format json` prints (cmd/ratelab's
// TestRunJSONIsTheLibrarysJSONForEveryBuiltin).
func TestBuiltinYAMLRunsTheSameJSON(t *testing.T) {
	ctx := context.Background()
	for _, b := range web.Builtins() {
		t.Run(b.Name, func(t *testing.T) {
			text, err := web.BuiltinYAML(b.Name)
			if err != nil {
				t.Fatal(err)
			}
			got, err := web.RunJSON(ctx, text)
			if err != nil {
				t.Fatal(err)
			}
			sc, err := scenarios.Get(b.Name)
			if err != nil {
				t.Fatal(err)
			}
			want, err := jsonout.RunJSON(ctx, sc)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Fatalf("%s from its YAML: %d bytes of JSON, from the catalogue %d", b.Name, len(got), len(want))
			}
		})
	}
}

func TestProblemsAreLocated(t *testing.T) {
	text, err := web.DefaultYAML()
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(text, "token-bucket:", "token-buckt:", 1)
	_, err = web.Load(bad)
	if err == nil {
		t.Fatal("a misspelt kind loaded")
	}
	p := web.ProblemOf(err)
	if p.Line == 0 || p.Column == 0 || !strings.HasPrefix(p.Message, "scenario.yaml:") || !strings.Contains(p.Message, "did you mean token-bucket") {
		t.Fatalf("problem %+v", p)
	}
	line := strings.Split(bad, "\n")[p.Line-1]
	if !strings.Contains(line[p.Column-1:], "token-buckt") {
		t.Fatalf("line %d col %d is %q, not the misspelt kind", p.Line, p.Column, line)
	}
	if err := web.CheckSpec("fixed-window:limit=10,windw=1s"); err == nil || !strings.Contains(err.Error(), "did you mean window") {
		t.Fatalf("CheckSpec: %v", err)
	}
	if err := web.CheckSpec("fixed-window:limit=10,window=1s+concurrency:max=2"); err != nil {
		t.Fatal(err)
	}
	if p := web.ProblemOf(web.CheckSpec("nope")); p.Line != 0 || p.Message == "" {
		t.Fatalf("a spec's problem %+v", p)
	}
}

func TestAddLane(t *testing.T) {
	text, _ := web.DefaultYAML()
	more, err := web.AddLane(text, "concurrency:max=2")
	if err != nil {
		t.Fatal(err)
	}
	s, err := web.NewSession(more)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	v := s.View()
	if last := v.Lanes[len(v.Lanes)-1]; last.Label != "concurrency:max=2" || last.Color != "#56b4e9" {
		t.Fatalf("the added lane %q in %s", last.Label, last.Color)
	}
	if _, err := web.AddLane(text, "concurency:max=2"); err == nil || !strings.Contains(err.Error(), "did you mean concurrency") {
		t.Fatalf("a misspelt lane: %v", err)
	}
}

func TestSessionStepsBackToTheSameView(t *testing.T) {
	text, _ := web.BuiltinYAML("burst-after-idle")
	s, err := web.NewSession(text)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 7 {
		if err := s.Step(); err != nil {
			t.Fatal(err)
		}
	}
	want := s.View()
	if err := s.Step(); err != nil {
		t.Fatal(err)
	}
	if s.View().Steps != 8 {
		t.Fatalf("steps %d", s.View().Steps)
	}
	if err := s.Back(); err != nil {
		t.Fatal(err)
	}
	got := s.View()
	if got.Steps != 7 || got.Now != want.Now || !sameLanes(got, want) {
		t.Fatalf("back: %+v\nwant %+v", got, want)
	}
	if len(got.Lanes[0].Log) == 0 || !strings.HasPrefix(got.Lanes[0].Log[len(got.Lanes[0].Log)-1], "t=") {
		t.Fatalf("log %q", got.Lanes[0].Log)
	}
}

func sameLanes(a, b web.View) bool {
	if len(a.Lanes) != len(b.Lanes) {
		return false
	}
	for i := range a.Lanes {
		x, y := a.Lanes[i], b.Lanes[i]
		if x.Admitted != y.Admitted || x.Rejected != y.Rejected || strings.Join(x.Log, "\n") != strings.Join(y.Log, "\n") ||
			len(x.Stages) != len(y.Stages) || x.Stages[0].Available != y.Stages[0].Available || x.Stages[0].Arrival != y.Stages[0].Arrival {
			return false
		}
	}
	return true
}

// A burst is written into the scenario; the permalink carries it and the moment, and a
// session opened from the link shows the same lanes.
func TestBurstAndPermalink(t *testing.T) {
	text, _ := web.DefaultYAML()
	s, err := web.NewSession(text)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Seek(500 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	before := s.View()
	if err := s.Burst(20); err != nil {
		t.Fatal(err)
	}
	if v := s.View(); v.Now != before.Now || !sameLanes(v, before) {
		t.Fatal("a burst changed what was already decided")
	}
	if err := s.Seek(600 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	after := s.View()
	offered := func(v web.View) int { return v.Lanes[0].Admitted + v.Lanes[0].Rejected }
	withBurst, _ := web.NewSession(text)
	defer withBurst.Close()
	_ = withBurst.Seek(600 * time.Millisecond)
	if got := offered(after) - offered(withBurst.View()); got != 20 {
		t.Fatalf("the burst added %d decisions in lane 1, want 20", got)
	}
	yaml, err := s.YAML()
	if err != nil || !strings.Contains(yaml, "script") {
		t.Fatalf("the session's YAML has no script source of the burst (%v):\n%s", err, yaml)
	}
	link, err := web.EncodeLink(yaml, s.Moment())
	if err != nil {
		t.Fatal(err)
	}
	if len(link) > 1500 {
		t.Errorf("the link is %d characters", len(link))
	}
	t.Logf("permalink: %d characters for %d bytes of YAML", len(link), len(yaml))
	text2, m, err := web.DecodeLink("#" + link)
	if err != nil || text2 != yaml || m != s.Moment() {
		t.Fatalf("decoded %v, %+v; want %+v", err, m, s.Moment())
	}
	opened, err := web.NewSession(text2)
	if err != nil {
		t.Fatal(err)
	}
	defer opened.Close()
	if err := opened.GoTo(m); err != nil {
		t.Fatal(err)
	}
	if v := opened.View(); v.Now != after.Now || v.Steps != after.Steps || !sameLanes(v, after) {
		t.Fatal("the permalink's session differs")
	}
	for _, bad := range []string{"", "r1.x", "r2.AAAA.1.1", "r1.!!!.1.1", "r1.AAAA.-1.0", link[:len(link)-3] + "x.1"} {
		if _, _, err := web.DecodeLink(bad); err == nil {
			t.Errorf("DecodeLink(%q) accepted", bad)
		}
	}
}
