package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// The output and input paths that are not plain files. Each output target says what must
// hold afterwards: a FIFO is still a FIFO, a link still the same link, a device still that
// device, a directory still holds what it held. The device is made here (a null device of our
// own, when the harness may make one), never the system's /dev/null.

// writer is a command that writes to a path: P is replaced by the target.
type writer struct {
	name string
	args []string
	dir  bool // the path is a directory of files (plot, sweep) rather than one file
}

var writers = []writer{
	{"replay", []string{"replay", "--in", "t.csv", "--limiter", "leaky-bucket:rate=100/1s", "--out", "P"}, false},
	{"fit-chart", []string{"fit", "--in", "t.csv", "--steps", "4", "--chart", "P"}, false},
	{"plot-one-chart", []string{"plot", "burst-after-idle", "--chart", "rate", "--out", "P"}, true},
	{"plot", []string{"plot", "burst-after-idle", "--out", "P"}, true},
	{"sweep", []string{"sweep", "burst-after-idle", "--vary", "token-bucket.capacity=1..5", "--steps", "2", "--out", "P"}, true},
}

// target is something at the output path, made by setup and checked by check.
type target struct {
	name  string
	path  string
	setup func(dir string) (func(), error)
	check func(dir string, w writer) error
	root  bool // needs the rights to make a device
}

func outputTargets() []target {
	return []target{
		{name: "fifo", path: "out", setup: func(dir string) (func(), error) { return fifoWithReader(filepath.Join(dir, "out")) },
			check: func(dir string, _ writer) error { return isMode(filepath.Join(dir, "out"), fs.ModeNamedPipe) }},
		{name: "symlink-to-file", path: "out", setup: func(dir string) (func(), error) {
			if err := os.WriteFile(filepath.Join(dir, "real"), []byte("keep"), 0o640); err != nil {
				return nil, err
			}
			return nil, os.Symlink("real", filepath.Join(dir, "out"))
		}, check: func(dir string, w writer) error {
			if err := isLinkTo(filepath.Join(dir, "out"), "real"); err != nil {
				return err
			}
			return isMode(filepath.Join(dir, "real"), 0)
		}},
		{name: "dangling-symlink", path: "out", setup: func(dir string) (func(), error) {
			return nil, os.Symlink("nowhere", filepath.Join(dir, "out"))
		}, check: func(dir string, w writer) error {
			if err := isLinkTo(filepath.Join(dir, "out"), "nowhere"); err != nil {
				return err
			}
			if _, err := os.Lstat(filepath.Join(dir, "nowhere")); err == nil && !w.dir {
				return errors.New("created the file a dangling link points to")
			}
			return nil
		}},
		{name: "symlink-to-fifo", path: "out", setup: func(dir string) (func(), error) {
			cleanup, err := fifoWithReader(filepath.Join(dir, "pipe"))
			if err != nil {
				return nil, err
			}
			return cleanup, os.Symlink("pipe", filepath.Join(dir, "out"))
		}, check: func(dir string, _ writer) error {
			if err := isLinkTo(filepath.Join(dir, "out"), "pipe"); err != nil {
				return err
			}
			return isMode(filepath.Join(dir, "pipe"), fs.ModeNamedPipe)
		}},
		{name: "symlink-loop", path: "out", setup: func(dir string) (func(), error) {
			return nil, os.Symlink("out", filepath.Join(dir, "out"))
		}, check: func(dir string, _ writer) error { return isLinkTo(filepath.Join(dir, "out"), "out") }},
		{name: "directory", path: "out", setup: func(dir string) (func(), error) {
			if err := os.Mkdir(filepath.Join(dir, "out"), 0o755); err != nil {
				return nil, err
			}
			return nil, os.WriteFile(filepath.Join(dir, "out", "keep"), []byte("keep"), 0o644)
		}, check: func(dir string, _ writer) error {
			if err := isMode(filepath.Join(dir, "out"), fs.ModeDir); err != nil {
				return err
			}
			return hasContent(filepath.Join(dir, "out", "keep"), "keep")
		}},
		{name: "regular-0640", path: "out", setup: func(dir string) (func(), error) {
			p := filepath.Join(dir, "out")
			if err := os.WriteFile(p, []byte("keep"), 0o640); err != nil {
				return nil, err
			}
			return nil, os.Chmod(p, 0o640)
		}, check: func(dir string, w writer) error {
			p := filepath.Join(dir, "out")
			if w.dir { // a file where a directory is asked for: refused, untouched
				return hasContent(p, "keep")
			}
			info, err := os.Lstat(p)
			if err != nil {
				return err
			}
			if info.Mode() != 0o640 {
				return fmt.Errorf("out: mode %v, was -rw-r-----", info.Mode())
			}
			return nil
		}},
		{name: "new-file", path: "out", check: func(dir string, w writer) error {
			info, err := os.Lstat(filepath.Join(dir, "out"))
			if errors.Is(err, fs.ErrNotExist) {
				return nil // refused
			}
			if err != nil {
				return err
			}
			if !w.dir && info.Mode() != 0o644 {
				return fmt.Errorf("out: created %v, want -rw-r--r-- (umask 022)", info.Mode())
			}
			return nil
		}},
		{name: "dash", path: "-", check: func(dir string, _ writer) error {
			if _, err := os.Lstat(filepath.Join(dir, "-")); err == nil {
				return errors.New(`created a file named "-"`)
			}
			return nil
		}},
		{name: "empty-path", path: ""},
		{name: "missing-parent", path: "nodir/deeper/out"},
		{name: "trailing-slash", path: "out/"},
		{name: "dev-stdout", path: "/dev/stdout"},
		{name: "device", path: "out", root: true, setup: func(dir string) (func(), error) {
			return nil, syscall.Mknod(filepath.Join(dir, "out"), syscall.S_IFCHR|0o666, int(nullDevice))
		}, check: func(dir string, _ writer) error {
			info, err := os.Lstat(filepath.Join(dir, "out"))
			if err != nil {
				return err
			}
			st, ok := info.Sys().(*syscall.Stat_t)
			if info.Mode()&fs.ModeCharDevice == 0 || !ok || st.Rdev != nullDevice {
				return fmt.Errorf("out: the device became %v", info.Mode())
			}
			return nil
		}},
	}
}

// nullDevice is the null device's number (major 1, minor 3): our own node for it is a
// device ratelab may write through without harm, at a path of the case's own.
const nullDevice = 1<<8 | 3

// canMakeDevices reports whether this process may make device nodes (root, outside a
// restricted container).
func canMakeDevices() bool {
	dir, err := os.MkdirTemp("", "adversarial-mknod-")
	if err != nil {
		return false
	}
	defer os.RemoveAll(dir)
	return syscall.Mknod(filepath.Join(dir, "n"), syscall.S_IFCHR|0o666, int(nullDevice)) == nil
}

func outputCases() []*Case {
	devices := canMakeDevices()
	files := map[string][]byte{"t.csv": []byte(smallTrace)}
	var cs []*Case
	for _, w := range writers {
		for _, t := range outputTargets() {
			if t.root && !devices {
				continue
			}
			args := make([]string, len(w.args))
			for i, a := range w.args {
				if a == "P" {
					a = t.path
				}
				args[i] = a
			}
			check := t.check
			w := w
			c := &Case{Category: "output", Name: w.name + "→" + t.name, Args: args, Files: files, Setup: t.setup}
			if t.path != "" {
				c.Names = []string{t.path, "--out", "--chart"}
			}
			if check != nil {
				c.Check = func(dir string) error { return check(dir, w) }
			}
			cs = append(cs, c)
		}
	}
	return cs
}

// reader is a command that reads a path.
type reader struct {
	name    string
	args    []string
	content string // what a FIFO's writer gives it
}

var readers = []reader{
	{"replay", []string{"replay", "--in", "P", "--limiter", "leaky-bucket:rate=100/1s"}, smallTrace},
	{"fit", []string{"fit", "--in", "P", "--steps", "4"}, smallTrace},
	{"run", []string{"run", "P"}, base},
	{"show", []string{"show", "P"}, base},
	{"sweep-merge", []string{"sweep", "merge", "P"}, "x\n"},
	{"trace-source", []string{"run", "s.yaml"}, smallTrace},
}

// inputCases are the paths a command reads that are not plain files. A FIFO nobody writes
// blocks the read, as it blocks cat: the interrupt cases hold that Ctrl-C ends that wait.
func inputCases() []*Case {
	devices := canMakeDevices()
	type source struct {
		name  string
		path  string
		setup func(dir, content string) (func(), error)
		root  bool
	}
	sources := []source{
		{name: "directory", path: "."},
		{name: "fifo-with-writer", path: "in", setup: func(dir, content string) (func(), error) { return fifoWithWriter(filepath.Join(dir, "in"), content) }},
		{name: "dev-zero", path: "/dev/zero"},
		{name: "dev-null", path: "/dev/null"},
		{name: "zero-device", path: "in", root: true, setup: func(dir, _ string) (func(), error) {
			return nil, syscall.Mknod(filepath.Join(dir, "in"), syscall.S_IFCHR|0o666, 1<<8|5)
		}},
		{name: "missing", path: "nowhere.csv"},
		{name: "dangling-symlink", path: "in", setup: func(dir, _ string) (func(), error) { return nil, os.Symlink("nowhere", filepath.Join(dir, "in")) }},
		{name: "symlink-loop", path: "in", setup: func(dir, _ string) (func(), error) { return nil, os.Symlink("in", filepath.Join(dir, "in")) }},
		{name: "empty-file", path: "in", setup: func(dir, _ string) (func(), error) { return nil, os.WriteFile(filepath.Join(dir, "in"), nil, 0o644) }},
		{name: "empty-path", path: ""},
		{name: "proc-file", path: "/proc/self/status"},
	}
	var cs []*Case
	for _, r := range readers {
		for _, s := range sources {
			if s.root && !devices {
				continue
			}
			args := make([]string, len(r.args))
			for i, a := range r.args {
				if a == "P" {
					a = s.path
				}
				args[i] = a
			}
			var files map[string][]byte
			if r.name == "trace-source" {
				files = map[string][]byte{"s.yaml": []byte(fmt.Sprintf("horizon: 1s\nsources: [{kind: trace, file: %q}]\n", s.path) + lanes)}
			}
			setup, content := s.setup, r.content
			c := &Case{Category: "input", Name: r.name + "←" + s.name, Args: args, Files: files}
			if setup != nil {
				c.Setup = func(dir string) (func(), error) { return setup(dir, content) }
			}
			if s.path != "" {
				c.Names = []string{s.path}
			}
			cs = append(cs, c)
		}
	}
	return cs
}

// fifoWithReader makes a FIFO at path and drains it until cleanup, so that a writer through
// it neither blocks on opening it nor on a full pipe.
func fifoWithReader(path string) (func(), error) {
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0) // a reader that does not wait for a writer
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, f)
		close(done)
	}()
	return func() {
		f.Close()
		select {
		case <-done:
		case <-time.After(time.Second):
		}
	}, nil
}

// fifoWithWriter makes a FIFO at path that gives content to the first reader.
func fifoWithWriter(path, content string) (func(), error) {
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f, err := os.OpenFile(path, os.O_WRONLY, 0) // waits for the reader
		if err != nil {
			return
		}
		f.WriteString(content)
		f.Close()
	}()
	return func() {
		select {
		case <-done:
		default: // nobody read it: open it to release the writer
			if f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
				<-done
				f.Close()
			}
		}
	}, nil
}

func isMode(path string, want fs.FileMode) error {
	info, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("%s: %v", filepath.Base(path), err)
	}
	if info.Mode().Type() != want {
		return fmt.Errorf("%s: became %v (was %v)", filepath.Base(path), info.Mode().Type(), want)
	}
	return nil
}

func isLinkTo(path, dest string) error {
	got, err := os.Readlink(path)
	if err != nil {
		return fmt.Errorf("%s: no longer a symbolic link: %v", filepath.Base(path), err)
	}
	if got != dest {
		return fmt.Errorf("%s: now links to %s, not %s", filepath.Base(path), got, dest)
	}
	return nil
}

func hasContent(path, want string) error {
	got, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: %v", filepath.Base(path), err)
	}
	if !bytes.Equal(got, []byte(want)) {
		return fmt.Errorf("%s: overwritten", filepath.Base(path))
	}
	return nil
}

func sortStrings(s []string) { sort.Strings(s) }

var _ = strings.Cut

// endlessTrace is a valid trace that never ends: a request every microsecond.
type endlessTrace struct {
	header bool
	t      int64
	buf    []byte
}

func (e *endlessTrace) Read(p []byte) (int, error) {
	if len(e.buf) == 0 {
		if !e.header {
			e.header = true
			e.buf = []byte("t_ns\n")
		}
		for len(e.buf) < 4096 {
			e.buf = fmt.Appendf(e.buf, "%d\n", e.t)
			e.t += 1000
		}
	}
	n := copy(p, e.buf)
	e.buf = e.buf[n:]
	return n, nil
}

// interruptCases are Ctrl-C during long work and during a wait that only an interruption
// ends (a FIFO nobody writes to, or reads from): each must stop with exit 130. A scenario
// named by a FIFO (run fifo, show fifo) is refused before it is opened, by any name: those
// two stop at once, refused, before the interruption.
func interruptCases() []*Case {
	const after = time.Second
	fifo := func(dir string) (func(), error) { return nil, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644) }
	trace := map[string][]byte{"t.csv": []byte(smallTrace)}
	endless := func() io.Reader { return &endlessTrace{} }
	cs := []*Case{
		{Name: "run-long", Args: []string{"run", "steady", "--horizon", "1000h"}},
		{Name: "plot-long", Args: []string{"plot", "steady", "--horizon", "1000h", "--out", "out"}},
		{Name: "sweep-long", Args: []string{"sweep", "steady", "--horizon", "100h", "--vary", "token-bucket.capacity=1..5", "--steps", "2"}},
		{Name: "replay-endless-stdin", Args: []string{"replay", "--in", "-", "--limiter", "leaky-bucket:rate=100/1s"}, Stdin: endless},
		{Name: "replay-endless-stdin-out", Args: []string{"replay", "--in", "-", "--limiter", "leaky-bucket:rate=100/1s", "--out", "out.csv"}, Stdin: endless},
		{Name: "fit-endless-stdin", Args: []string{"fit", "--in", "-"}, Stdin: endless},
		{Name: "run-fifo-no-writer", Args: []string{"run", "fifo"}, Setup: fifo},
		{Name: "show-fifo-no-writer", Args: []string{"show", "fifo"}, Setup: fifo},
		{Name: "replay-fifo-no-writer", Args: []string{"replay", "--in", "fifo", "--limiter", "leaky-bucket:rate=100/1s"}, Setup: fifo},
		{Name: "fit-fifo-no-writer", Args: []string{"fit", "--in", "fifo"}, Setup: fifo},
		{Name: "sweep-merge-fifo-no-writer", Args: []string{"sweep", "merge", "fifo"}, Setup: fifo},
		{Name: "trace-source-fifo-no-writer", Args: []string{"run", "s.yaml"}, Setup: fifo,
			Files: map[string][]byte{"s.yaml": []byte("horizon: 1s\nsources: [{kind: trace, file: fifo}]\n" + lanes)}},
		{Name: "replay-out-fifo-no-reader", Args: []string{"replay", "--in", "t.csv", "--limiter", "leaky-bucket:rate=100/1s", "--out", "fifo"}, Setup: fifo, Files: trace},
		{Name: "fit-chart-fifo-no-reader", Args: []string{"fit", "--in", "t.csv", "--chart", "fifo"}, Setup: fifo, Files: trace},
		{Name: "plot-out-fifo-no-reader", Args: []string{"plot", "burst-after-idle", "--chart", "rate", "--out", "fifo"}, Setup: fifo},
	}
	for _, c := range cs {
		c.Category, c.Interrupt = "interrupt", after
		if c.Setup != nil {
			c.Check = func(dir string) error { return isMode(filepath.Join(dir, "fifo"), fs.ModeNamedPipe) }
		}
	}
	return cs
}
