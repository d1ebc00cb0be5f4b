package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A Case is one adversarial input: a command line of the real binary, the files it reads
// (written into a fresh directory, the command's working directory), what its standard
// input carries, and what must hold of the directory afterwards.
type Case struct {
	Category string // output, scenario, trace, spec, flag, budget, input
	Name     string // unique within the catalogue

	Args  []string          // the command line after "ratelab", relative to the case's directory
	Files map[string][]byte // written before the run, relative to the directory

	// Stdin, when set, is the run's standard input (called once per run: it may generate
	// gigabytes without storing them). Without it standard input is empty.
	Stdin func() io.Reader

	// Setup prepares what Files cannot (a FIFO with a reader, a symbolic link, a device); its
	// cleanup runs after the command exits.
	Setup func(dir string) (cleanup func(), err error)
	// Check is what must hold of the directory afterwards (the output target not
	// clobbered), whatever the outcome: an error makes the case "clobbered".
	Check func(dir string) error

	// Names are the words a clear refusal names (a flag, a field, a path): one of them must
	// appear in it. Located requires file:line:col (a scenario file) or "line N" (a trace)
	// instead. With neither, any one-line refusal is clear.
	Names   []string
	Located bool

	// Want is what a correct ratelab does: WantAny when either is right.
	Want Want

	// Interrupt, when set, is when the harness sends SIGINT (Ctrl-C): the case then runs
	// correctly when ratelab stops with one line and exit 130 before the time limit.
	Interrupt time.Duration
}

// Want is what a case expects of a correct ratelab.
type Want int

const (
	WantAny    Want = iota
	WantRefuse      // the input is outside the documented ranges
	WantRun         // the input is within them: it must run (exit 0)
)

// Class is how an outcome is judged.
type Class string

const (
	ClassRan       Class = "ran"        // exit 0
	ClassRefused   Class = "refused"    // exit 1 or 2, one line naming what is wrong
	ClassBudget    Class = "budget"     // refused over --max-events or --max-memory, naming the flag
	ClassVague     Class = "vague"      // exit 1 or 2, one line, but naming nothing the case expected
	ClassAccepted  Class = "accepted"   // exit 0 on an input the documented ranges refuse
	ClassRejected  Class = "rejected"   // refused an input the documented ranges accept
	ClassPanic     Class = "panic"      // "panic:", "goroutine ", "fatal error:"
	ClassInternal  Class = "internal"   // a message that leaks internals, or not one line, or an odd exit
	ClassTimeout   Class = "timeout"    // killed after the case's time limit
	ClassMemory    Class = "memory"     // out of memory under the address-space limit
	ClassClobbered Class = "clobbered"  // the output target was replaced, or a temporary file left
	ClassSetup     Class = "setup-fail" // the harness could not prepare the case
)

// Classes lists every class, clean ones first, in the order reports show them.
var Classes = []Class{ClassRan, ClassRefused, ClassBudget, ClassVague, ClassAccepted, ClassRejected,
	ClassPanic, ClassInternal, ClassTimeout, ClassMemory, ClassClobbered, ClassSetup}

// Clean reports whether c is an outcome a correct ratelab may give.
func (c Class) Clean() bool { return c == ClassRan || c == ClassRefused || c == ClassBudget }

// Fatal reports whether c is a bug the test suite fails on (a vague message, or a judgement
// against the documented ranges, is listed but left to a reader).
func (c Class) Fatal() bool {
	switch c {
	case ClassPanic, ClassInternal, ClassTimeout, ClassMemory, ClassClobbered, ClassSetup:
		return true
	}
	return false
}

// Outcome is what one case did.
type Outcome struct {
	Case     *Case
	Class    Class
	Exit     int
	Stderr   string // at most a few KiB, for the report
	Detail   string // why the class, when not plain
	Duration time.Duration
}

// Runner runs cases through one built binary.
type Runner struct {
	Binary  string        // the ratelab binary
	Timeout time.Duration // per case
	Memory  int64         // the address-space limit, bytes (prlimit --as); 0: none
	Root    string        // a directory under which each case gets its own
}

// Build compiles cmd/ratelab (the module's root is moduleDir) into dir once.
func Build(moduleDir, dir string) (string, error) {
	bin := filepath.Join(dir, "ratelab")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/ratelab")
	cmd.Dir = moduleDir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/ratelab: %v\n%s", err, out)
	}
	return bin, nil
}

// Run runs every case, jobs at a time, and returns the outcomes in the cases' order.
func (r *Runner) Run(cases []*Case, jobs int, progress func(done int)) []Outcome {
	out := make([]Outcome, len(cases))
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range max(jobs, 1) {
		wg.Go(func() {
			for i := range next {
				out[i] = r.RunOne(cases[i], i)
				if progress != nil {
					mu.Lock()
					done++
					progress(done)
					mu.Unlock()
				}
			}
		})
	}
	for i := range cases {
		next <- i
	}
	close(next)
	wg.Wait()
	return out
}

// RunOne runs one case in a directory of its own (the n-th under Root) and judges it.
func (r *Runner) RunOne(c *Case, n int) Outcome {
	o := Outcome{Case: c}
	dir := filepath.Join(r.Root, fmt.Sprintf("%04d", n))
	defer os.RemoveAll(dir)
	tmp := filepath.Join(dir, ".tmpdir")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return o.setupFailed(err)
	}
	for name, data := range c.Files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return o.setupFailed(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return o.setupFailed(err)
		}
	}
	if c.Setup != nil {
		cleanup, err := c.Setup(dir)
		if err != nil {
			return o.setupFailed(err)
		}
		if cleanup != nil {
			defer cleanup()
		}
	}
	before, err := hiddenEntries(dir)
	if err != nil {
		return o.setupFailed(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), r.Timeout)
	defer cancel()
	name, args := r.Binary, c.Args
	if r.Memory > 0 {
		name, args = "prlimit", append([]string{"--as=" + strconv.FormatInt(r.Memory, 10), "--", r.Binary}, c.Args...)
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "NO_COLOR=1", "TERM=dumb")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	if c.Stdin != nil {
		cmd.Stdin = c.Stdin()
	}
	var stderr limitedBuffer
	stderr.max = 64 << 10
	cmd.Stdout = io.Discard
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return o.setupFailed(err)
	}
	if c.Interrupt > 0 {
		t := time.AfterFunc(c.Interrupt, func() { cmd.Process.Signal(os.Interrupt) })
		defer t.Stop()
	}
	runErr := cmd.Wait()
	o.Duration = time.Since(start)
	o.Stderr = stderr.String()
	if cmd.ProcessState == nil { // not started
		return o.setupFailed(runErr)
	}
	o.Exit = cmd.ProcessState.ExitCode()
	timedOut := ctx.Err() != nil
	if status, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && status.Signaled() {
		o.Exit = 128 + int(status.Signal())
	}
	if runErr != nil && o.Exit == -1 && !timedOut {
		return o.setupFailed(runErr)
	}

	o.Class, o.Detail = judge(c, o.Exit, o.Stderr, timedOut)
	if c.Check != nil {
		if err := c.Check(dir); err != nil {
			o.Class, o.Detail = ClassClobbered, err.Error()
		}
	}
	if left, err := leftovers(dir, tmp, before); err != nil || left != "" {
		o.Class, o.Detail = ClassClobbered, "left behind: "+left+errString(err)
	}
	return o
}

func (o Outcome) setupFailed(err error) Outcome {
	o.Class, o.Detail = ClassSetup, err.Error()
	return o
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return " (" + err.Error() + ")"
}

// Signs of a message meant for ratelab's developers rather than its user: a Go package path
// or source line, the clock's or the runtime's own words, a formatting slip, a library's
// prefix.
var internalSigns = regexp.MustCompile(`github\.com/|golang\.org/|\.go:\d+|virtualclock|runtime error|` +
	`makeslice|index out of range|invalid argument to|nil pointer|strconv\.|%!|yaml: unmarshal|` +
	`\bint64\(|\bAdvanceTo\b|\bunexpected\b.*\bstate\b|\binternal error\b`)

// A located refusal names file:line:col (a scenario) or "line N" (a trace).
var located = regexp.MustCompile(`:\d+:\d+: |\bline \d+\b`)

// interruptedCleanly is whether stderr is an interrupted run's: "ratelab: interrupted" alone,
// after the estimate a long run is announced with ("steady: about 3.2G events and 2 MiB; about
// 5m24s on one core").
func interruptedCleanly(stderr string) bool {
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if lines[len(lines)-1] != "ratelab: interrupted" {
		return false
	}
	for _, l := range lines[:len(lines)-1] {
		if !strings.Contains(l, " events and ") || !strings.HasSuffix(l, " on one core") {
			return false
		}
	}
	return true
}

// judge classifies an exit and its standard error.
func judge(c *Case, exit int, stderr string, timedOut bool) (Class, string) {
	switch {
	case timedOut:
		return ClassTimeout, ""
	case strings.Contains(stderr, "out of memory") || strings.Contains(stderr, "cannot allocate memory"):
		return ClassMemory, firstLine(stderr)
	case strings.Contains(stderr, "panic:") || strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "fatal error:"):
		return ClassPanic, firstLine(stderr)
	case c.Interrupt > 0 && exit == 130 && interruptedCleanly(stderr):
		return ClassRan, "interrupted"
	case exit == 0:
		if c.Want == WantRefuse {
			return ClassAccepted, ""
		}
		return ClassRan, ""
	case exit != 1 && exit != 2:
		return ClassInternal, fmt.Sprintf("exit %d", exit)
	}
	msg := strings.TrimSuffix(stderr, "\n")
	if msg == "" || strings.Contains(msg, "\n") {
		return ClassInternal, "not one line"
	}
	if m := internalSigns.FindString(msg); m != "" {
		return ClassInternal, "leaks " + strconv.Quote(m)
	}
	if strings.Contains(msg, "--max-events") || strings.Contains(msg, "--max-memory") {
		return ClassBudget, ""
	}
	if !names(c, msg) {
		return ClassVague, "names none of " + strings.Join(expected(c), ", ")
	}
	if c.Want == WantRun {
		return ClassRejected, ""
	}
	return ClassRefused, ""
}

func names(c *Case, msg string) bool {
	if !c.Located && len(c.Names) == 0 {
		return true
	}
	if c.Located && located.MatchString(msg) {
		return true
	}
	for _, n := range c.Names {
		if strings.Contains(msg, n) {
			return true
		}
	}
	return false
}

func expected(c *Case) []string {
	e := append([]string(nil), c.Names...)
	if c.Located {
		e = append(e, "file:line:col or line N")
	}
	return e
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "panic:") || strings.Contains(l, "fatal error:") || strings.Contains(l, "out of memory") {
			return strings.TrimSpace(l)
		}
	}
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// hiddenEntries lists the names starting with "." under dir (temporary files are hidden),
// relative to it.
func hiddenEntries(dir string) (map[string]bool, error) {
	seen := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrPermission) {
				return nil
			}
			return err
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			rel, _ := filepath.Rel(dir, p)
			seen[rel] = true
		}
		return nil
	})
	return seen, err
}

// leftovers names what the run left behind: hidden files that were not there before, and
// anything in its TMPDIR.
func leftovers(dir, tmp string, before map[string]bool) (string, error) {
	after, err := hiddenEntries(dir)
	if err != nil {
		return "", err
	}
	var left []string
	for p := range after {
		if !before[p] && !strings.HasPrefix(p, ".tmpdir") {
			left = append(left, p)
		}
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		left = append(left, "$TMPDIR/"+e.Name())
	}
	sort.Strings(left)
	return strings.Join(left, ", "), nil
}

// limitedBuffer keeps the first max bytes written to it and discards the rest.
type limitedBuffer struct {
	bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
