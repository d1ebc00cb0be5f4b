package main

import (
	"context"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/web"
)

// `run LINK` runs the scenario a page's permalink carries, bursts injected on the page
// included: its JSON is the page's (web.RunJSON of the session's scenario file, which the
// browser test checks against the page itself), whether the link is bare or a whole URL.
func TestRunAPermalink(t *testing.T) {
	text, err := web.BuiltinYAML("burst-after-idle")
	if err != nil {
		t.Fatal(err)
	}
	s, err := web.NewSession(text)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for range 6 {
		if err := s.Step(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Burst(40); err != nil {
		t.Fatal(err)
	}
	withBurst, err := s.YAML()
	if err != nil {
		t.Fatal(err)
	}
	link, err := web.EncodeLink(withBurst, s.Moment())
	if err != nil {
		t.Fatal(err)
	}
	want, err := web.RunJSON(context.Background(), withBurst)
	if err != nil {
		t.Fatal(err)
	}
	plain, _, err := ratelab(t, "run", "burst-after-idle", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	if plain == want {
		t.Fatal("the burst changed nothing: the test would not see a link that lost it")
	}
	for _, arg := range []string{link, "http://127.0.0.1:8080/#" + link, "file:///tmp/site/index.html#" + link} {
		got, _, err := ratelab(t, "run", arg, "--format", "json")
		if err != nil {
			t.Fatalf("run %.40s…: %v", arg, err)
		}
		if got != want {
			t.Fatalf("run %.40s… --format json (%d bytes) is not the page's JSON (%d bytes)", arg, len(got), len(want))
		}
	}
	// A damaged link says what is wrong with it.
	_, _, err = ratelab(t, "run", link[:len(link)/2]+"!"+link[len(link)/2:], "--format", "json")
	if err == nil || !strings.Contains(err.Error(), "link:") {
		t.Fatalf("a damaged link: %v", err)
	}
}
