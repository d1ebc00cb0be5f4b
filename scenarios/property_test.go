package scenarios

import (
	"context"
	"flag"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// Anything validation accepts must run. Random scenarios within the documented ranges (every
// source kind, client policy and service distribution, stacks of 1 to 3 kinds made from each
// kind's example with other numbers, times up to 2^62ns, rates from 1e-10 to 1e9 per second,
// up to 2^31-1 permits), seeded and so the same on every run, are written as YAML files, which
// must load back to the same scenario; then each runs: the wide ones (any horizon, any rate)
// for their first events, the short ones (a second, modest rates) to the end through
// engine.Run. No refusal, no error, no panic, and counters that add up.
//
// go test ./scenarios -run TestValidScenariosRun -property.seed=7 -property.count=20000 tries
// other scenarios, and more.
func TestValidScenariosRun(t *testing.T) {
	scenarios, events := 400, 1500
	if raceDetector {
		scenarios, events = 100, 300
	}
	if *propertyCount > 0 {
		scenarios = *propertyCount
	}
	dir := t.TempDir()
	traces := writeTraces(t, dir)
	start := time.Now()
	var wide, short int
	var specs, varied int
	for i := range scenarios {
		rng := rand.New(rand.NewPCG(*propertySeed, uint64(i)))
		g := &gen{rng: rng, traces: traces, short: i%2 == 1}
		sc := g.scenario(fmt.Sprintf("random-%d", i))
		specs, varied = specs+g.specs, varied+g.varied
		text := render(sc)
		label := fmt.Sprintf("scenario %d:\n%s", i, text)
		require.NoError(t, sc.Validate(), label)
		path := filepath.Join(dir, sc.Name+".yaml")
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		loaded, err := LoadFile(path)
		require.NoError(t, err, label)
		require.Equal(t, sc, loaded, "the file loads back to the scenario\n%s", label)
		if g.short {
			short++
			res, err := engine.Run(context.Background(), sc, nil)
			require.NoError(t, err, label)
			for k, lane := range res.Lanes {
				require.NoError(t, checkTotals(k, lane.Totals), label)
			}
			continue
		}
		wide++
		n := events
		if sc.Trace {
			n = events / 10 // each traced decision copies the deciding stage's state
		}
		boundedRun(t, sc, n, label)
	}
	t.Logf("%d scenarios (%d wide, %d short), %d limiter specs (%d with varied numbers) in %v",
		scenarios, wide, short, specs, varied, time.Since(start).Round(time.Millisecond))
}

var (
	propertySeed  = flag.Uint64("property.seed", 15, "the seed of TestValidScenariosRun's scenarios")
	propertyCount = flag.Int("property.count", 0, "how many scenarios TestValidScenariosRun runs (0: its default)")
)

// gen makes random valid scenarios. Times and counts are drawn log-uniformly, so that values
// near 1 and near the end of the range are both common.
type gen struct {
	rng    *rand.Rand
	traces []string
	short  bool // a second of modest traffic, run to the end
	specs  int  // limiter specs made
	varied int  // of which with numbers other than the example's
}

// logInt is a number in [1, max], log-uniform: as likely in [1, 2) as in [2^40, 2^41).
func (g *gen) logInt(max int64) int64 {
	b := 1 + g.rng.IntN(bits.Len64(uint64(max))) // the number's bit length
	lo := int64(1) << (b - 1)
	return min(lo+g.rng.Int64N(lo), max)
}

// dur is a duration in [lo, hi), log-uniform above lo; hi > lo.
func (g *gen) dur(lo, hi time.Duration) time.Duration {
	if g.rng.IntN(8) == 0 {
		return hi - 1 // the edge of the range
	}
	return lo + time.Duration(g.logInt(int64(hi-lo))-1)
}

// rate is a rate in requests per second, in (0, hi].
func (g *gen) rate(hi float64) float64 {
	switch g.rng.IntN(10) {
	case 0:
		return hi
	case 1:
		return 1e-10
	}
	return math.Min(hi, math.Pow(10, -10+g.rng.Float64()*(math.Log10(hi)+10)))
}

// maxTime is the end of the range: every scenario time is below it.
func (g *gen) maxTime() time.Duration {
	if g.short {
		return time.Second
	}
	return engine.MaxTime
}

func (g *gen) maxRate() float64 {
	if g.short {
		return 1000
	}
	return 1e9
}

func (g *gen) permits() int {
	switch g.rng.IntN(8) {
	case 0, 1, 2, 3:
		return 0 // one permit
	case 4:
		return engine.MaxPermits
	}
	return int(g.logInt(engine.MaxPermits))
}

func (g *gen) key() string { return []string{"", "a", "b", "tenant-7"}[g.rng.IntN(4)] }

func (g *gen) scenario(name string) *engine.Scenario {
	sc := &engine.Scenario{Name: name, Seed: g.rng.Uint64(), Horizon: g.dur(1, g.maxTime())}
	if g.rng.IntN(2) == 0 {
		sc.Bins = int(g.logInt(100_000))
	}
	if g.short {
		sc.Bins = min(sc.Bins, 1000)
	}
	sc.Trace = g.rng.IntN(5) == 0
	for range g.rng.IntN(3) {
		sc.Windows = append(sc.Windows, g.dur(1, engine.MaxTime))
	}
	kinds := []engine.SourceKind{engine.SourceConstant, engine.SourcePoisson, engine.SourceBursts, engine.SourceOnOff,
		engine.SourceRamp, engine.SourceSine, engine.SourceScript, engine.SourceTrace}
	for range 1 + g.rng.IntN(3) {
		sc.Sources = append(sc.Sources, g.source(kinds[g.rng.IntN(len(kinds))], sc.Horizon))
	}
	sc.Client = g.client()
	for range 1 + g.rng.IntN(3) {
		lane := engine.LaneSpec{Waste: g.rng.IntN(4) == 0}
		for range 1 + g.rng.IntN(3) {
			lane.Stack = append(lane.Stack, g.spec())
		}
		if g.rng.IntN(4) == 0 {
			lane.Name = "lane " + strconv.Itoa(len(sc.Lanes))
		}
		if g.rng.IntN(4) == 0 {
			c := g.client()
			lane.Client = &c
		}
		sc.Lanes = append(sc.Lanes, lane)
	}
	if g.rng.IntN(3) > 0 {
		sc.Downstream = g.downstream()
	}
	return sc
}

// when is a time in [lo, hi) for an arrival: mostly before the horizon, where it runs.
func (g *gen) when(lo, hi, horizon time.Duration) time.Duration {
	if lo < horizon && g.rng.IntN(4) > 0 {
		hi = min(hi, horizon)
	}
	return g.dur(lo, hi)
}

func (g *gen) source(kind engine.SourceKind, horizon time.Duration) engine.Source {
	end := g.maxTime()
	s := engine.Source{Kind: kind, Permits: g.permits(), Key: g.key()}
	if g.rng.IntN(3) == 0 {
		s.From = g.when(0, end-1, horizon)
	}
	if g.rng.IntN(3) == 0 {
		s.Until = g.dur(s.From+1, end)
	}
	rate := g.rate(g.maxRate())
	switch kind {
	case engine.SourceConstant, engine.SourcePoisson:
		s.Rate = rate
	case engine.SourceOnOff:
		s.Rate, s.On, s.Off, s.Poisson = rate, g.dur(1, end), g.dur(0, end), g.rng.IntN(2) == 0
	case engine.SourceRamp:
		s.Rate, s.RateTo, s.Poisson = rate, g.rate(g.maxRate()), g.rng.IntN(2) == 0
		switch g.rng.IntN(3) {
		case 0:
			s.Rate = 0
		case 1:
			s.RateTo = 0
		}
	case engine.SourceSine:
		s.Rate, s.Period, s.Poisson = rate, g.dur(1, end), g.rng.IntN(2) == 0
		s.Amplitude = s.Rate * g.rng.Float64()
		if g.rng.IntN(4) == 0 {
			s.Amplitude = s.Rate
		}
	case engine.SourceBursts:
		at := time.Duration(0)
		count := int64(math.MaxInt32)
		if g.short {
			count = 100
		}
		for range 1 + g.rng.IntN(4) {
			at = g.when(at, engine.MaxTime-s.From, horizon-s.From)
			s.Bursts = append(s.Bursts, engine.Burst{At: at, Count: int(g.logInt(count)), Spread: g.dur(0, engine.MaxTime)})
		}
	case engine.SourceScript:
		at := time.Duration(0)
		for range 1 + g.rng.IntN(5) {
			at = g.when(at, engine.MaxTime-s.From, horizon-s.From)
			s.Script = append(s.Script, engine.Arrival{At: at, Permits: g.permits(), Key: g.key()})
		}
	case engine.SourceTrace:
		s.TraceFile = g.traces[g.rng.IntN(len(g.traces))]
		s.Permits = 0 // a trace's rows give their own
	}
	return s
}

func (g *gen) client() engine.Client {
	end := g.maxTime()
	attempts := int64(math.MaxInt32)
	if g.short {
		attempts = 5
	}
	switch g.rng.IntN(6) {
	case 0:
		return engine.Client{Policy: engine.PolicyDrop}
	case 1:
		return engine.Client{Policy: engine.PolicyRetry, Delay: g.dur(1, end), MaxAttempts: int(g.logInt(attempts))}
	case 2, 3:
		c := engine.Client{Policy: engine.PolicyBackoff, Delay: g.dur(1, end), Jitter: g.rng.IntN(2) == 0, MaxAttempts: int(g.logInt(attempts))}
		switch g.rng.IntN(3) {
		case 0:
			c.MaxDelay = g.dur(0, end)
		case 1:
			// A short cap: retries come fast, so a refused request reaches attempts whose
			// uncapped delay, Delay·2^(k−1), is past int64.
			c.MaxDelay = g.dur(1, min(end, time.Millisecond))
		}
		return c
	case 4:
		return engine.Client{Policy: engine.PolicyRetryAfter, Delay: g.dur(1, end), MaxAttempts: int(g.logInt(attempts))}
	}
	size := int64(math.MaxInt32)
	if g.short {
		size = 50
	}
	return engine.Client{Policy: engine.PolicyQueue, QueueSize: int(g.logInt(size)), Timeout: g.dur(1, end)}
}

func (g *gen) downstream() *engine.Downstream {
	d := &engine.Downstream{}
	if g.rng.IntN(2) == 0 {
		d.Pool = int(g.logInt(math.MaxInt32))
	}
	from := time.Duration(0)
	for i := range 1 + g.rng.IntN(3) {
		if i > 0 {
			if from >= g.maxTime()-1 {
				break
			}
			from = g.dur(from+1, g.maxTime())
		}
		d.Phases = append(d.Phases, engine.Phase{From: from, Service: g.distribution()})
	}
	return d
}

func (g *gen) distribution() engine.Distribution {
	end := g.maxTime()
	switch g.rng.IntN(4) {
	case 0:
		return engine.Distribution{Kind: engine.DistConstant, Mean: g.dur(0, end)}
	case 1:
		lo := g.dur(0, end)
		return engine.Distribution{Kind: engine.DistUniform, Min: lo, Max: g.dur(lo, end)}
	case 2:
		return engine.Distribution{Kind: engine.DistExponential, Mean: g.dur(0, end)}
	}
	sigma := 5 * g.rng.Float64()
	if sigma == 0 || g.rng.IntN(4) == 0 {
		sigma = 5
	}
	return engine.Distribution{Kind: engine.DistLogNormal, Mean: g.dur(1, end), Sigma: sigma}
}

// number is a number in a spec, with its unit when it is a duration.
var number = regexp.MustCompile(`[0-9]+(ns|us|ms|s|m|h)?`)

// spec is a kind's example with each number replaced by a random one (and each duration's
// unit by a random unit), drawn again until the spec validates and its window is in a
// scenario's range; after 20 tries, the example.
func (g *gen) spec() limiters.Spec {
	kinds := limiters.Kinds()
	example := kinds[g.rng.IntN(len(kinds))].Example
	g.specs++
	kind, params, _ := strings.Cut(example, ":")
	for range 20 {
		text := kind + ":" + number.ReplaceAllStringFunc(params, func(m string) string {
			n := strconv.FormatInt(g.logInt(1<<40), 10)
			if strings.IndexFunc(m, func(r rune) bool { return r > '9' }) > 0 {
				n += []string{"ns", "us", "ms", "s", "m", "h"}[g.rng.IntN(6)]
			}
			return n
		})
		if spec, err := limiters.ParseSpec(text); err == nil && spec.Validate() == nil && spec.NaturalWindow() < engine.MaxTime {
			g.varied++
			return spec
		}
	}
	spec, err := limiters.ParseSpec(example)
	if err != nil {
		panic(err)
	}
	return spec
}

// writeTraces writes the trace files random scenarios replay: times in t_ns, in decimal
// seconds and in RFC 3339, up to the end of the range, with permits up to the most allowed.
func writeTraces(t *testing.T, dir string) []string {
	t.Helper()
	rows := []time.Duration{0, 0, 1, 999, time.Millisecond, time.Second, time.Hour, engine.MaxTime / 2, engine.MaxTime - 1}
	var ns, secs, rfc strings.Builder
	ns.WriteString("t_ns,permits,key\n")
	secs.WriteString("t,permits\n")
	rfc.WriteString("t,key\n")
	origin := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, at := range rows {
		permits := []int{1, engine.MaxPermits, 7}[i%3]
		fmt.Fprintf(&ns, "%d,%d,k%d\n", at, permits, i%2)
		fmt.Fprintf(&secs, "%d.%09d,%d\n", at/time.Second, at%time.Second, permits)
		fmt.Fprintf(&rfc, "%s,k\n", origin.Add(at).Format(time.RFC3339Nano))
	}
	var paths []string
	for name, text := range map[string]string{"ns.csv": ns.String(), "secs.csv": secs.String(), "rfc.csv": rfc.String()} {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		paths = append(paths, path)
	}
	slices.Sort(paths)
	return paths
}

// render writes sc as a scenario file, every field that is not its zero value.
func render(sc *engine.Scenario) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	num := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	p("name: %s\nseed: %d\nhorizon: %v\n", sc.Name, sc.Seed, sc.Horizon)
	if sc.Bins != 0 {
		p("bins: %d\n", sc.Bins)
	}
	if sc.Trace {
		p("trace: true\n")
	}
	if len(sc.Windows) > 0 {
		p("windows:\n")
		for _, w := range sc.Windows {
			p("  - %v\n", w)
		}
	}
	p("sources:\n")
	for _, s := range sc.Sources {
		p("  - kind: %s\n", s.Kind)
		field := func(name string, value any, set bool) {
			if set {
				p("    %s: %v\n", name, value)
			}
		}
		field("rate", num(s.Rate), s.Rate != 0)
		field("rate_to", num(s.RateTo), s.RateTo != 0)
		field("from", s.From, s.From != 0)
		field("until", s.Until, s.Until != 0)
		field("poisson", s.Poisson, s.Poisson)
		field("on", s.On, s.On != 0)
		field("off", s.Off, s.Off != 0)
		field("amplitude", num(s.Amplitude), s.Amplitude != 0)
		field("period", s.Period, s.Period != 0)
		field("permits", s.Permits, s.Permits != 0)
		field("key", strconv.Quote(s.Key), s.Key != "")
		field("file", strconv.Quote(s.TraceFile), s.TraceFile != "")
		if len(s.Bursts) > 0 {
			p("    bursts:\n")
			for _, b := range s.Bursts {
				p("      - {at: %v, count: %d, spread: %v}\n", b.At, b.Count, b.Spread)
			}
		}
		if len(s.Script) > 0 {
			p("    arrivals:\n")
			for _, a := range s.Script {
				p("      - {at: %v, permits: %d, key: %q}\n", a.At, a.Permits, a.Key)
			}
		}
	}
	client := func(indent string, c engine.Client) {
		p("%spolicy: %s\n", indent, c.Policy)
		for _, f := range []struct {
			name  string
			value any
			set   bool
		}{
			{"delay", c.Delay, c.Delay != 0}, {"max_delay", c.MaxDelay, c.MaxDelay != 0}, {"jitter", c.Jitter, c.Jitter},
			{"max_attempts", c.MaxAttempts, c.MaxAttempts != 0}, {"queue_size", c.QueueSize, c.QueueSize != 0},
			{"timeout", c.Timeout, c.Timeout != 0},
		} {
			if f.set {
				p("%s%s: %v\n", indent, f.name, f.value)
			}
		}
	}
	p("client:\n")
	client("  ", sc.Client)
	p("limiters:\n")
	for _, lane := range sc.Lanes {
		spec := strconv.Quote(engine.StackString(lane.Stack))
		if lane.Name == "" && lane.Client == nil && !lane.Waste {
			p("  - %s\n", spec)
			continue
		}
		p("  - spec: %s\n", spec)
		if lane.Name != "" {
			p("    name: %q\n", lane.Name)
		}
		if lane.Waste {
			p("    refund: false\n")
		}
		if lane.Client != nil {
			p("    client:\n")
			client("      ", *lane.Client)
		}
	}
	if d := sc.Downstream; d != nil {
		p("downstream:\n")
		if d.Pool != 0 {
			p("  pool: %d\n", d.Pool)
		}
		p("  phases:\n")
		for _, ph := range d.Phases {
			s := ph.Service
			p("    - from: %v\n      service: {kind: %s", ph.From, s.Kind)
			switch s.Kind {
			case engine.DistUniform:
				p(", min: %v, max: %v}\n", s.Min, s.Max)
			case engine.DistLogNormal:
				p(", median: %v, sigma: %s}\n", s.Mean, num(s.Sigma))
			default:
				p(", mean: %v}\n", s.Mean)
			}
		}
	}
	return b.String()
}
