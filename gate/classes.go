package gate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/internal/wording"
)

// classMetrics are the metrics a check may ask of one request class, written
// METRIC{class=NAME}: "all.refused{class=user} == 0", "partition.latency_p99{class=user} <
// 500ms". They read the lane's engine.ClassResult of that class; a lane whose run has no such
// class has no value.
var classMetrics = []classMetric{
	{"offered", "requests of the class offered", Count, func(c engine.ClassResult) float64 { return float64(c.Offered) }},
	{"admitted", "requests of the class admitted", Count, func(c engine.ClassResult) float64 { return float64(c.Admitted) }},
	{"refused", "requests of the class refused", Count, func(c engine.ClassResult) float64 { return float64(c.Refused) }},
	{"refused%", "refused, % of the class's offered", Percent, func(c engine.ClassResult) float64 {
		if c.Offered == 0 {
			return 0
		}
		return 100 * float64(c.Refused) / float64(c.Offered)
	}},
	{"answered", "requests of the class the downstream answered", Count, func(c engine.ClassResult) float64 { return float64(c.Answered) }},
	{"latency_p50", "median time from admission to answer of the class's answered requests", Wait,
		func(c engine.ClassResult) float64 { return float64(c.LatencyP50) }},
	{"latency_p99", "99th percentile time from admission to answer of the class's answered requests", Wait,
		func(c engine.ClassResult) float64 { return float64(c.LatencyP99) }},
}

// classMetric is one of classMetrics: its value from a class's counts.
type classMetric struct {
	name, meaning string
	kind          Kind
	value         func(c engine.ClassResult) float64
}

// classMetricNames lists classMetrics' names, for errors.
func classMetricNames() []string {
	names := make([]string, len(classMetrics))
	for i, m := range classMetrics {
		names[i] = m.name
	}
	return names
}

// lookupClass reads METRIC{class=NAME}: ok is false when text has no braces; an error says
// what is wrong with a label that is there.
func lookupClass(text string) (m Metric, ok bool, err error) {
	open := strings.IndexByte(text, '{')
	if open < 0 {
		return Metric{}, false, nil
	}
	name, label := strings.TrimSpace(text[:open]), text[open+1:]
	label, closed := strings.CutSuffix(strings.TrimSpace(label), "}")
	key, class, eq := strings.Cut(label, "=")
	key, class = strings.TrimSpace(key), strings.TrimSpace(class)
	switch {
	case !closed:
		return Metric{}, true, fmt.Errorf("%q has no closing }: write METRIC{class=NAME}", text)
	case !eq || key != "class" || class == "":
		return Metric{}, true, fmt.Errorf("%q: the only label is class, written METRIC{class=NAME}", text)
	}
	i := slices.IndexFunc(classMetrics, func(c classMetric) bool { return strings.EqualFold(c.name, name) })
	if i < 0 {
		names := classMetricNames()
		return Metric{}, true, fmt.Errorf("no metric %s per class%s; per class: %s", name, wording.DidYouMeanTypo(name, names), strings.Join(names, ", "))
	}
	cm := classMetrics[i]
	return Metric{
		Name:    cm.name + "{class=" + class + "}",
		Meaning: cm.meaning + " (class " + class + ")",
		Kind:    cm.kind,
		Value: func(_ engine.LaneSpec, r engine.LaneResult) (float64, bool) {
			for _, c := range r.Classes {
				if c.Class == class {
					return cm.value(c), true
				}
			}
			return 0, false
		},
	}, true, nil
}
