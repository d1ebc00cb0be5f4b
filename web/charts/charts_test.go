package charts_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/web"
	"github.com/ratelab/ratelab/web/charts"
)

func TestChartsOfTheDefaultScenario(t *testing.T) {
	text, err := web.BuiltinYAML("burst-after-idle")
	if err != nil {
		t.Fatal(err)
	}
	set, err := charts.Run(context.Background(), text)
	if err != nil {
		t.Fatal(err)
	}
	names := set.Names()
	if !slices.Contains(names, "timeline") || !slices.Contains(names, "rate") {
		t.Fatalf("charts %v", names)
	}
	svg, err := set.SVG("timeline")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(svg, "<?xml") || !strings.Contains(svg, "<svg") || !strings.Contains(svg, "token-bucket") {
		t.Fatalf("not the timeline's SVG: %.200s", svg)
	}
	if _, err := set.SVG("nope"); err == nil {
		t.Fatal("an unknown chart drew")
	}
}
