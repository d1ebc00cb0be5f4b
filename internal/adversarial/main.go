// Command adversarial runs ratelab's catalogue of adversarial inputs through the real
// binary, each with a time limit and an address-space limit, and counts the outcomes:
//
//	go run ./internal/adversarial              every case (scripts/adversarial.sh)
//	go run ./internal/adversarial -fast        the subset the tests run
//	go run ./internal/adversarial -run 'trace/.*300MB'   the cases whose category/name matches
//	go run ./internal/adversarial -list        the catalogue, without running it
//
// Each outcome is one class: ran (exit 0), refused (exit 1 or 2, one line naming the file:line:col,
// the field or the flag), budget (refused over --max-events or --max-memory), vague (one line
// naming nothing expected), accepted (exit 0 on an input outside the documented ranges),
// rejected (refused an input inside them), panic, internal (a message that leaks internals, or
// not one line), timeout, memory (exhausted under the limit), clobbered (an output target
// replaced, or a temporary file left behind). It prints the counts per class and per category
// and every outcome that is not ran, refused or budget, with the command that reproduces it;
// it exits 1 when one is a panic, an internal error, a timeout, memory exhausted or a clobber.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"time"
)

func main() {
	var (
		fast    = flag.Bool("fast", false, "run only the subset the tests run")
		filter  = flag.String("run", "", "run only the cases whose category/name matches this regular expression")
		list    = flag.Bool("list", false, "list the cases without running them")
		jobs    = flag.Int("jobs", runtime.GOMAXPROCS(0), "cases run at once")
		timeout = flag.Duration("timeout", 20*time.Second, "the time limit of one case")
		memory  = flag.Int64("memory", 3<<30, "the address-space limit of one case, bytes (prlimit --as); 0 for none")
		all     = flag.Bool("v", false, "list every outcome, not only the ones that are not clean")
	)
	flag.Parse()
	code, err := mainErr(os.Stdout, options{fast: *fast, filter: *filter, list: *list, jobs: *jobs, timeout: *timeout, memory: *memory, verbose: *all})
	if err != nil {
		fmt.Fprintln(os.Stderr, "adversarial:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

type options struct {
	fast, list, verbose bool
	filter              string
	jobs                int
	timeout             time.Duration
	memory              int64
}

func mainErr(w io.Writer, opt options) (int, error) {
	syscall.Umask(0o022) // the modes new files are checked against
	module, err := moduleRoot()
	if err != nil {
		return 0, err
	}
	work, err := os.MkdirTemp("", "adversarial-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(work)
	bin, err := Build(module, work)
	if err != nil {
		return 0, err
	}
	cases, err := Select(bin, opt.fast, opt.filter)
	if err != nil {
		return 0, err
	}
	if opt.list {
		for _, c := range cases {
			fmt.Fprintf(w, "%-8s %s\n", c.Category, c.Name)
		}
		fmt.Fprintf(w, "%d cases\n", len(cases))
		return 0, nil
	}
	r := &Runner{Binary: bin, Timeout: opt.timeout, Memory: opt.memory, Root: filepath.Join(work, "cases")}
	start := time.Now()
	outcomes := r.Run(cases, opt.jobs, func(done int) {
		if done%50 == 0 {
			fmt.Fprintf(os.Stderr, "adversarial: %d/%d cases, %s\n", done, len(cases), time.Since(start).Round(time.Second))
		}
	})
	Report(w, outcomes, opt.verbose)
	fmt.Fprintf(w, "\n%d cases in %s (jobs %d, limits %s and %d MiB a case)\n", len(cases), time.Since(start).Round(time.Second), opt.jobs, opt.timeout, opt.memory>>20)
	for _, o := range outcomes {
		if o.Class.Fatal() {
			return 1, nil
		}
	}
	return 0, nil
}

// Select is the catalogue, or its fast subset, filtered by a regular expression on
// category/name.
func Select(bin string, fast bool, filter string) ([]*Case, error) {
	cases, err := Catalogue(bin)
	if err != nil {
		return nil, err
	}
	if fast {
		cases = FastSubset(cases)
	}
	if filter != "" {
		re, err := regexp.Compile(filter)
		if err != nil {
			return nil, err
		}
		var kept []*Case
		for _, c := range cases {
			if re.MatchString(c.Category + "/" + c.Name) {
				kept = append(kept, c)
			}
		}
		cases = kept
	}
	return cases, nil
}

// The cases the fast subset always keeps (each a class of the issue), and the ones it
// leaves to the full run because they take seconds (hundreds of megabytes through a pipe,
// a 17 MB file).
var (
	alwaysFast = regexp.MustCompile(`overflow/|yaml/(alias-bomb|second-document|unclosed-flow-list$)|→(fifo|device|symlink-to-file)|` +
		`←(directory|fifo-with-writer|fifo-no-writer|dev-zero)|t=rfc3339-292y|t_ns=9223372036854775808|max-permits-twice|steady-100000h$`)
	slow = regexp.MustCompile(`300MB|17MB|15MB|2\.5MB|10MB|many-lanes|many-sources|keys-100000|limiters-5000|huge-image|wide-image|steps-1e|1e4x1e4|deep-unclosed|` +
		`bins-100000-many|--gallery`)
)

// FastSubset is every 20th case of each category, the classes, and nothing slow.
func FastSubset(cases []*Case) []*Case {
	var out []*Case
	n := map[string]int{}
	for _, c := range cases {
		key := c.Category + "/" + c.Name
		i := n[c.Category]
		n[c.Category]++
		if slow.MatchString(key) {
			continue
		}
		if alwaysFast.MatchString(key) || i%20 == 0 {
			out = append(out, c)
		}
	}
	return out
}

// Report prints the counts per class and per category, then each outcome that is not clean.
func Report(w io.Writer, outcomes []Outcome, verbose bool) {
	total := map[Class]int{}
	byCat := map[string]map[Class]int{}
	var cats []string
	for _, o := range outcomes {
		total[o.Class]++
		if byCat[o.Case.Category] == nil {
			byCat[o.Case.Category] = map[Class]int{}
			cats = append(cats, o.Case.Category)
		}
		byCat[o.Case.Category][o.Class]++
	}
	var shown []Class
	for _, c := range Classes {
		if total[c] > 0 || c.Clean() || c.Fatal() && c != ClassSetup {
			shown = append(shown, c)
		}
	}
	fmt.Fprintf(w, "%-10s %6s", "category", "inputs")
	for _, c := range shown {
		fmt.Fprintf(w, " %9s", c)
	}
	fmt.Fprintln(w)
	row := func(name string, counts map[Class]int) {
		sum := 0
		for _, n := range counts {
			sum += n
		}
		fmt.Fprintf(w, "%-10s %6d", name, sum)
		for _, c := range shown {
			fmt.Fprintf(w, " %9d", counts[c])
		}
		fmt.Fprintln(w)
	}
	for _, cat := range cats {
		row(cat, byCat[cat])
	}
	row("total", total)

	first := true
	for _, o := range outcomes {
		if o.Class.Clean() && !verbose {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nOutcomes to look at:")
			first = false
		}
		msg := strings.TrimSpace(o.Stderr)
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		msg = strings.ReplaceAll(msg, "\n", "⏎")
		fmt.Fprintf(w, "%-9s %s/%s (exit %d, %s)", o.Class, o.Case.Category, o.Case.Name, o.Exit, o.Duration.Round(10*time.Millisecond))
		if o.Detail != "" {
			fmt.Fprintf(w, ": %s", o.Detail)
		}
		fmt.Fprintf(w, "\n          stderr: %s\n", msg)
		fmt.Fprintf(w, "          repro: go run ./internal/adversarial -run '^%s$'\n", regexp.QuoteMeta(o.Case.Category+"/"+o.Case.Name))
	}
}

// moduleRoot is the directory of the go.mod above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}
