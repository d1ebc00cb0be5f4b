package web_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/web"
)

// viewJSON is the view without the speed meter (which counts re-runs too).
func viewJSON(t *testing.T, s *web.Session) string {
	t.Helper()
	v := s.View()
	v.Events = 0
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Going back from a checkpoint (quietly re-run, counts restored, the log observed again) shows
// exactly what a session run there from t=0 shows: columns, counts, states and the log.
func TestBackFromACheckpointIsAFreshRun(t *testing.T) {
	for _, name := range []string{"poisson", "burst-after-idle", "retry-storm", "fleet", "slow-downstream"} {
		t.Run(name, func(t *testing.T) {
			text, _ := web.BuiltinYAML(name)
			s, err := web.NewSession(text)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			h := s.View().Horizon
			if err := s.Seek(h * 9 / 10); err != nil {
				t.Fatal(err)
			}
			check := func(what string) {
				t.Helper()
				fresh, err := web.NewSession(text)
				if err != nil {
					t.Fatal(err)
				}
				defer fresh.Close()
				if err := fresh.GoTo(s.Moment()); err != nil {
					t.Fatal(err)
				}
				if got, want := viewJSON(t, s), viewJSON(t, fresh); got != want {
					t.Fatalf("%s at %+v: the view differs from a fresh run's\n got %.300s\nwant %.300s", what, s.Moment(), got, want)
				}
			}
			for range 3 {
				if err := s.Back(); err != nil {
					t.Fatal(err)
				}
			}
			check("three steps back")
			if err := s.Seek(h / 3); err != nil {
				t.Fatal(err)
			}
			check("a seek back")
			if err := s.Seek(h / 2); err != nil {
				t.Fatal(err)
			}
			check("a seek on")
			if err := s.Burst(7); err != nil {
				t.Fatal(err)
			}
			yaml, _ := s.YAML()
			text = yaml // the fresh run is of the scenario with the burst
			check("a burst")
		})
	}
}

// The log's durations are rounded as the TUI rounds them (engine.Readable), exact on request.
func TestLogRoundedAsTheTUI(t *testing.T) {
	text, _ := web.BuiltinYAML("poisson")
	s, _ := web.NewSession(text)
	defer s.Close()
	if err := s.Seek(1234567891); err != nil {
		t.Fatal(err)
	}
	rounded := strings.Join(s.View().Lanes[0].Log, "\n")
	s.SetExact(true)
	exact := strings.Join(s.View().Lanes[0].Log, "\n")
	if rounded == exact || engine.Readable(exact, false) != rounded {
		t.Fatalf("rounded:\n%s\nexact:\n%s", rounded, exact)
	}
}

// ↑ on the page is the TUI's: the source's rate ×1.25 from now, written into the scenario;
// what was decided before stays.
func TestChangeRate(t *testing.T) {
	text, _ := web.BuiltinYAML("poisson")
	s, _ := web.NewSession(text)
	defer s.Close()
	if err := s.Seek(2 * time.Second); err != nil {
		t.Fatal(err)
	}
	before := viewJSON(t, s)
	c, err := s.ChangeRate(engine.RateStep)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.String(), "source 1: poisson ") || !strings.Contains(c.String(), " from t=2s ") {
		t.Fatalf("%s", c)
	}
	if viewJSON(t, s) != before {
		t.Fatal("the rate change altered what was already decided")
	}
	yaml, _ := s.YAML()
	if strings.Count(yaml, "poisson") < 2 {
		t.Fatalf("the change is not in the scenario:\n%s", yaml)
	}
	plain, _ := web.NewSession(text)
	defer plain.Close()
	_ = plain.Seek(10 * time.Second)
	_ = s.Seek(10 * time.Second)
	if a, b := s.View().Lanes[0], plain.View().Lanes[0]; a.Admitted+a.Rejected <= b.Admitted+b.Rejected {
		t.Fatalf("×1.25 from 2s offered %d, the plain run %d", a.Admitted+a.Rejected, b.Admitted+b.Rejected)
	}
}

// Predict mode on burst-after-idle asks before its first burst, as the TUI does, and reveals
// what each lane admitted of the next five requests.
func TestPredictThenReveal(t *testing.T) {
	text, _ := web.BuiltinYAML("burst-after-idle")
	s, _ := web.NewSession(text)
	defer s.Close()
	s.SetPredict(true)
	if err := s.Advance(time.Second); err != nil {
		t.Fatal(err)
	}
	v := s.View()
	if v.Predict == nil || !v.Predict.Asking || v.Predict.Why != "a burst after idle at t=50ms" || v.Predict.First != 1 || v.Now >= 50*time.Millisecond {
		t.Fatalf("at %v: %+v", v.Now, v.Predict)
	}
	if err := s.Guess("5"); err == nil || !strings.Contains(err.Error(), "one guess per lane") {
		t.Fatalf("a short guess: %v", err)
	}
	guess := strings.TrimSpace(strings.Repeat("3 ", len(v.Lanes)))
	if err := s.Guess(guess); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if v = s.View(); v.Predict.Revealed {
			break
		}
		if err := s.Advance(10 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	p := v.Predict
	if !p.Revealed || len(p.Admitted) != len(v.Lanes) {
		t.Fatalf("not revealed: %+v", p)
	}
	right := 0
	for i := range p.Admitted {
		if p.Ended[i] != engine.PredictCount || p.Admitted[i] > engine.PredictCount {
			t.Fatalf("lane %d: %+v", i, p)
		}
		if p.Admitted[i] == 3 {
			right++
		}
	}
	if p.Right != right {
		t.Fatalf("right %d, want %d", p.Right, right)
	}
	t.Logf("revealed at t=%v: admitted %v", v.Now, p.Admitted)
	if err := s.Advance(time.Millisecond); err != nil || s.View().Predict != nil {
		t.Fatalf("playing on after the answer: %v %+v", err, s.View().Predict)
	}
}

// Going back late in a long run re-runs quietly from a checkpoint; see the browser test for
// the WebAssembly's numbers.
func BenchmarkBackLate(b *testing.B) {
	text, _ := web.BuiltinYAML("poisson")
	s, _ := web.NewSession(text)
	defer s.Close()
	_ = s.Seek(9 * time.Second)
	b.ResetTimer()
	for range b.N {
		if err := s.Back(); err != nil {
			b.Fatal(err)
		}
	}
}
