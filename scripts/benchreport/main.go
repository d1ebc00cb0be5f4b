// Command benchreport turns the raw output of scripts/bench.sh's benchmarks into the generated
// section of docs/PERFORMANCE.md: each benchmark beside its floor and its peer as ratios first, then the
// absolute times, every figure the median of the runs with its range.
//
//	go run ./scripts/benchreport [-plot LINE] [-readme README.md] bench.txt...
//
// With -readme the section between <!-- performance:begin --> and <!-- performance:end -->
// is replaced by the report; without, the report is printed. -plot is the `ratelab plot
// --timing` line to quote.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func main() {
	readme := flag.String("readme", "", "splice the report into this README (between the performance markers)")
	plotLine := flag.String("plot", "", "the `ratelab plot --timing` line to quote")
	machine := flag.String("machine", "a 2-core AMD EPYC VM", "what the benchmarks ran on")
	load := flag.String("load", "", "the machine's 1-minute load averages while the benchmarks ran, e.g. \"0.2 1.5\" (bench.sh samples /proc/loadavg)")
	flag.Parse()
	runs := results{}
	for _, path := range flag.Args() {
		f, err := os.Open(path)
		if err != nil {
			fail(err)
		}
		err = runs.parse(f)
		f.Close()
		if err != nil {
			fail(fmt.Errorf("%s: %w", path, err))
		}
	}
	report := runs.report(*machine, loadSentence(*load), *plotLine)
	if *readme == "" {
		fmt.Print(report)
		return
	}
	if err := splice(*readme, report); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchreport:", err)
	os.Exit(1)
}

// results holds every run of every benchmark: name (with its -N GOMAXPROCS suffix as
// "/cpu=N") → unit → one value per run.
type results map[string]map[string][]float64

var line = regexp.MustCompile(`^(Benchmark\S+?)(?:-(\d+))?\s+\d+\s+(.*)$`)

// parse reads go test -bench output; lines that are not results are skipped.
func (r results) parse(in io.Reader) error {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		m := line.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		name := strings.TrimPrefix(m[1], "Benchmark")
		if m[2] != "" {
			name += "/cpu=" + m[2]
		}
		fields := strings.Fields(m[3])
		if len(fields)%2 != 0 {
			return fmt.Errorf("%q: values and units do not pair", sc.Text())
		}
		for i := 0; i < len(fields); i += 2 {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				return fmt.Errorf("%q: %w", sc.Text(), err)
			}
			if r[name] == nil {
				r[name] = map[string][]float64{}
			}
			r[name][fields[i+1]] = append(r[name][fields[i+1]], v)
		}
	}
	return sc.Err()
}

// stat is a benchmark's median and range over its runs.
type stat struct {
	median, lo, hi float64
	n              int
}

func (s stat) ok() bool { return s.n > 0 }

// get is the stat of name (a prefix up to the cpu suffix: "AcquireAt/kind=floor/path=admit"
// matches ".../cpu=2") in unit.
func (r results) get(name, unit string) stat {
	vs := r[name][unit]
	if vs == nil {
		for full, units := range r {
			if strings.HasPrefix(full, name+"/cpu=") {
				vs = units[unit]
				break
			}
		}
	}
	if len(vs) == 0 {
		return stat{}
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return stat{median: med, lo: s[0], hi: s[len(s)-1], n: len(s)}
}

func (r results) ns(name string) stat { return r.get(name, "ns/op") }

// ratio is a ÷ b of the medians, with the range of the ratio of the runs' extremes.
func ratio(a, b stat) string {
	if !a.ok() || !b.ok() || b.median == 0 {
		return "–"
	}
	return fmt.Sprintf("%s× (%s–%s)", sig(a.median/b.median), sig(a.lo/b.hi), sig(a.hi/b.lo))
}

// dur is a stat in ns as "3.46 ns (3.41–3.52)".
func dur(s stat) string {
	if !s.ok() {
		return "–"
	}
	div, unit := 1.0, "ns"
	switch {
	case s.median >= 1e9:
		div, unit = 1e9, "s"
	case s.median >= 1e6:
		div, unit = 1e6, "ms"
	case s.median >= 1e3:
		div, unit = 1e3, "µs"
	}
	return fmt.Sprintf("%s %s (%s–%s)", sig(s.median/div), unit, sig(s.lo/div), sig(s.hi/div))
}

// sig is x to three significant digits.
func sig(x float64) string {
	switch {
	case x >= 100:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case x >= 10:
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strconv.FormatFloat(x, 'f', 2, 64)
}

// loadSentence says how loaded the machine was, from the 1-minute load averages sampled
// while the benchmarks ran ("0.22 1.5 0.9"): "" when none were sampled.
func loadSentence(samples string) string {
	lo, hi, n := math.Inf(1), math.Inf(-1), 0
	for _, f := range strings.Fields(samples) {
		if x, err := strconv.ParseFloat(f, 64); err == nil {
			lo, hi, n = min(lo, x), max(hi, x), n+1
		}
	}
	switch {
	case n == 0:
		return "; the machine's load was not sampled"
	case hi < 2.5:
		return fmt.Sprintf(":\nthe 1-minute load average stayed between %.2g and %.2g on its 2 cores (%d samples), so the benchmarks had\n"+
			"the machine to themselves", lo, hi, n)
	}
	return fmt.Sprintf("\nshared with other jobs: the 1-minute load average was %.2g to %.2g on its 2 cores (%d samples), so even\n"+
		"the ratios spread (the load changes between the two runs of a pair) and the medians can mislead", lo, hi, n)
}

func (r results) report(machine, load, plotLine string) string {
	var b strings.Builder
	runs := 0
	for _, units := range r {
		runs = max(runs, len(units["ns/op"]))
	}
	fmt.Fprintf(&b, "Generated by `scripts/bench.sh` (do not edit by hand): every benchmark beside its floor and its peer in one\n"+
		"invocation, each figure the median of %d runs with the range of the runs in brackets (a ratio's range pairs\n"+
		"the extremes), all at 0 allocs/op. Ratios come first, absolute times after them, on %s%s.\n"+
		"Instruction counts, from `valgrind --tool=callgrind`, are below the section.\n\n", runs, machine, load)

	b.WriteString("**Limiters**: explicit-time decisions (`AcquireAt`), one goroutine, against the floor, a bare atomic\n" +
		"Load + CompareAndSwap, and against `golang.org/x/time/rate`'s `AllowN` in the same run:\n\n")
	b.WriteString("| limiter | admit ÷ floor | x/time/rate ÷ limiter (admit / reject) | admit | reject |\n| --- | ---: | ---: | ---: | ---: |\n")
	floor := r.ns("AcquireAt/kind=floor/path=admit")
	xa, xr := r.ns("AcquireAt/kind=x-time-rate/path=admit"), r.ns("AcquireAt/kind=x-time-rate/path=reject")
	fmt.Fprintf(&b, "| floor: atomic Load + CAS | 1.00× | – | %s | – |\n", dur(floor))
	for _, k := range []struct{ kind, label string }{{"token-bucket", "token bucket"}, {"leaky-bucket", "leaky bucket"},
		{"fixed-window", "fixed window"}, {"sliding-window", "sliding window (10 slots)"}, {"warm-up", "warm-up (warm)"},
		{"warm-up-warming", "warm-up (warming)"}, {"concurrency", "concurrency (acquire)"}} {
		a, rj := r.ns("AcquireAt/kind="+k.kind+"/path=admit"), r.ns("AcquireAt/kind="+k.kind+"/path=reject")
		if !a.ok() {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s / %s | %s | %s |\n", k.label, ratio(a, floor), ratio(xa, a), ratio(xr, rj), dur(a), dur(rj))
	}
	fmt.Fprintf(&b, "| x/time/rate `AllowN` | %s | 1.00× | %s | %s |\n\n", ratio(xa, floor), dur(xa), dur(xr))

	pf, pt, px, ps := r.ns("AcquireAtParallel/kind=floor/path=admit"), r.ns("AcquireAtParallel/kind=token-bucket/path=admit"),
		r.ns("AcquireAtParallel/kind=x-time-rate/path=admit"), r.ns("AcquireAtParallel/kind=sliding-window/path=admit")
	if pf.ok() {
		fmt.Fprintf(&b, "With `b.RunParallel` on 2 goroutines (admit): floor %s, token bucket %s (%s the floor), sliding window %s (%s), "+
			"x/time/rate %s (%s).\n\n", dur(pf), dur(pt), ratio(pt, pf), dur(ps), ratio(ps, pf), dur(px), ratio(px, pf))
	}

	b.WriteString("**Peers**: each peer kind (the real library behind ratelab's interface) against the library called\n" +
		"directly and against ratelab's token bucket on the same rate:\n\n")
	b.WriteString("| path | kind ÷ library | library ÷ token bucket | kind | library | token bucket |\n| --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, p := range []struct{ bench, path, label string }{{"PeerXTimeRate", "admit", "x/time/rate AllowN, admit"},
		{"PeerXTimeRate", "reject", "x/time/rate AllowN, reject"}, {"PeerXTimeRate", "reserve", "x/time/rate ReserveN"},
		{"PeerUber", "take", "uber Take"}, {"PeerUber", "take-wait", "uber Take that waits"}} {
		k := r.ns(p.bench + "/path=" + p.path + "/impl=kind")
		l := r.ns(p.bench + "/path=" + p.path + "/impl=library")
		t := r.ns(p.bench + "/path=" + p.path + "/impl=token-bucket")
		if !k.ok() {
			continue
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", p.label, ratio(k, l), ratio(l, t), dur(k), dur(l), dur(t))
	}
	b.WriteString("\n")

	b.WriteString("**Simulator**: ns per event of one lane, 0 allocs per event. The kernel's floor (`BenchmarkKernel/floor`)\n" +
		"does the kernel's own heap work and nothing else: per arrival its successor in the arrivals' slot and one push of\n" +
		"a bare 32-byte completion onto a typed heap of ~1000, per completion one pop (the floor this section quoted\n" +
		"before popped and pushed at every event, twice the work of a kernel that replaces an arrival in place). The\n" +
		"perf scenario's floor (`BenchmarkLanePoisson/floor`) is the least that model needs per event: the exponential\n" +
		"variate (the lane's generator, `expRand`: math/rand/v2's PCG and `ExpFloat64` written out, the same stream, which\n" +
		"the seed fixes), the time rounded to the ns, one token bucket decision and the same heap work. Lanes are stepped\n" +
		"as `Run` steps them (`Lane.StepN`).\n\n")
	b.WriteString("| model | lane ÷ floor | lane | floor |\n| --- | ---: | ---: | ---: |\n")
	kl, kf := r.ns("Kernel/lane"), r.ns("Kernel/floor")
	fmt.Fprintf(&b, "| 10,000/s through a bulkhead, ~1000 pending | %s | %s | %s |\n", ratio(kl, kf), dur(kl), dur(kf))
	pfl := r.ns("LanePoisson/floor")
	for _, k := range []string{"token-bucket", "leaky-bucket", "sliding-window", "fixed-window", "warm-up", "concurrency"} {
		l := r.ns("LanePoisson/" + k)
		if l.ok() {
			fmt.Fprintf(&b, "| perf scenario (Poisson 10,000/s), %s | %s | %s | %s |\n", k, ratio(l, pfl), dur(l), dur(pfl))
		}
	}
	if v := r.ns("Variate/exp"); v.ok() {
		fmt.Fprintf(&b, "\nOf the Poisson floor, the variate alone is %s (%s of it; the PCG's `Uint64` inside it %s; math/rand/v2's\n"+
			"`ExpFloat64`, the same stream through its interfaces, %s).\n",
			dur(v), ratio(v, pfl), dur(r.ns("Variate/pcg")), dur(r.ns("Variate/math-rand")))
	}
	// -cpu 1,2 names the GOMAXPROCS=1 runs without a suffix.
	one, two := r.get("RunSixLanes", "ns/event"), r.get("RunSixLanes/cpu=2", "ns/event")
	if one.ok() && two.ok() {
		c1, c2 := r.get("RunSixLanes", "cpu-ns/event"), r.get("RunSixLanes/cpu=2", "cpu-ns/event")
		w1, w2 := r.get("RunSixLanes", "cpu/wall"), r.get("RunSixLanes/cpu=2", "cpu/wall")
		fmt.Fprintf(&b, "\n**Cores**: the perf scenario's six lanes for 60 virtual seconds (`BenchmarkRunSixLanes`), wall time per event\n"+
			"at GOMAXPROCS 2 ÷ GOMAXPROCS 1: %s (%s against %s); CPU time per event %s against %s; cores kept busy\n"+
			"(CPU ÷ wall) %s against %s. The lanes share nothing, not even a line of memory that any of them writes at\n"+
			"every event (engine/lines.go, held by a test), so the ratio approaches ½ when the second core is free",
			ratio(two, one), dur(two), dur(one), dur(c2), dur(c1), sigStat(w2), sigStat(w1))
		if w2.median < 1.5 {
			b.WriteString(";\nhere CPU ÷ wall at GOMAXPROCS 2 stayed below 1.5: other jobs had the second core, and the speed-up was not\nmeasured")
		}
		b.WriteString(".\n")
	}

	b.WriteString("\n**Replay**: a 524,288-row in-memory trace through one token bucket, against the least a replay can do: a\n" +
		"`bufio.Scanner` over lines, `bytes.IndexByte` and `strconv.ParseInt` per field, one `AcquireAt` per row (floor), and\n" +
		"the same writing replay's output row (floor-write):\n\n")
	b.WriteString("| layout | replay ÷ floor (rows/s) | replay ÷ floor-write | replay | floor | floor-write |\n| --- | ---: | ---: | ---: | ---: | ---: |\n")
	for _, layout := range []string{"ns-permits", "ns-permits-key"} {
		rp := r.get("Replay/layout="+layout+"/path=replay", "rows/s")
		fl := r.get("Replay/layout="+layout+"/path=floor", "rows/s")
		fw := r.get("Replay/layout="+layout+"/path=floor-write", "rows/s")
		if rp.ok() {
			fmt.Fprintf(&b, "| `t_ns,permits%s` | %s | %s | %s | %s | %s |\n", map[bool]string{true: ",key"}[layout == "ns-permits-key"],
				ratio(rp, fl), ratio(rp, fw), rows(rp), rows(fl), rows(fw))
		}
	}
	if plotLine != "" {
		fmt.Fprintf(&b, "\n**Charts**: `ratelab plot --timing` on the perf scenario at 10M requests per lane (every chart that applies):\n\n```\n%s\n```\n", plotLine)
	}
	b.WriteString("\nReproduce: `scripts/bench.sh` (raw results in `$BENCH_OUT`, default /tmp/ratelab-bench; `BENCH_COUNT` runs each,\n" +
		"default 6; `--readme` rewrites this section). Whole runs: `go build -o /tmp/ratelab ./cmd/ratelab &&\n" +
		"/usr/bin/time -v /tmp/ratelab run scenarios/testdata/perf-poisson-1h.yaml` (peak RSS does not grow with the horizon).\n")
	return b.String()
}

func sigStat(s stat) string {
	if !s.ok() {
		return "–"
	}
	return fmt.Sprintf("%s (%s–%s)", sig(s.median), sig(s.lo), sig(s.hi))
}

func rows(s stat) string {
	if !s.ok() {
		return "–"
	}
	return fmt.Sprintf("%sM rows/s (%s–%s)", sig(s.median/1e6), sig(s.lo/1e6), sig(s.hi/1e6))
}

const begin, end = "<!-- performance:begin -->\n", "<!-- performance:end -->"

// splice replaces the performance section of the document at path (docs/PERFORMANCE.md) by report.
func splice(path, report string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	i, j := bytes.Index(data, []byte(begin)), bytes.Index(data, []byte(end))
	if i < 0 || j < i {
		return errors.New(path + ": no <!-- performance:begin --> … <!-- performance:end --> section")
	}
	out := slices.Concat(data[:i+len(begin)], []byte(report), data[j:])
	return os.WriteFile(path, out, 0o644)
}
