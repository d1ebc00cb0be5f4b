package outfile

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
)

// ratelab never writes over what it reads. Every file a command reads is noted as it is
// opened (NoteInput: a trace --in, a scenario file and the trace files its sources name, a
// shard; NoteStdin: standard input when it is read); every file it writes is checked against
// them before anything is written (Check, up front in each command, and again in Create for
// any path the command did not name up front). Two paths are the same file when they have
// the same device and inode (os.SameFile), so ./in.csv, a symbolic link to in.csv and a hard
// link to it are all in.csv. Standard output is checked as an input is noted: `ratelab run
// s.yaml >> s.yaml` appends to the file being read.
//
// Only regular files and FIFOs are compared: a device (/dev/null, a terminal) may be read
// and written at once, and is never replaced. A context without WithInputs guards nothing.

// SameFileError refuses an output that is one of the command's inputs: a mistake in the
// command line (ratelab exits 2), said before anything is written.
type SameFileError struct{ msg string }

func (e *SameFileError) Error() string { return e.msg }

// inputFiles is what a command has read so far, and its standard output.
type inputFiles struct {
	mu     sync.Mutex
	stdout fs.FileInfo // nil unless standard output is a regular file or a FIFO
	files  []inputFile
}

type inputFile struct {
	what string // how an error names it: "the trace --in in.csv"
	info fs.FileInfo
}

type inputsKey struct{}

// WithInputs gives ctx an empty set of inputs for one command, whose standard output is
// stdout.
func WithInputs(ctx context.Context, stdout io.Writer) context.Context {
	in := &inputFiles{}
	if f, ok := stdout.(*os.File); ok {
		if info, err := f.Stat(); err == nil && guarded(info) {
			in.stdout = info
		}
	}
	return context.WithValue(ctx, inputsKey{}, in)
}

// guarded is whether info is a file that reading and writing at once would destroy.
func guarded(info fs.FileInfo) bool {
	return info.Mode().IsRegular() || info.Mode()&fs.ModeNamedPipe != 0
}

// NoteInput records that the command reads path, named what in errors ("the trace --in
// in.csv"). A path that does not exist (yet) is not an input; "-" is standard input, noted
// with NoteStdin. It refuses an input that is also standard output.
func NoteInput(ctx context.Context, what, path string) error {
	if path == "" || path == "-" {
		return nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil // reported by whoever opens it
	}
	return note(ctx, what, info)
}

// NoteStdin records that the command reads standard input (stdin), as what.
func NoteStdin(ctx context.Context, what string, stdin io.Reader) error {
	f, ok := stdin.(*os.File)
	if !ok {
		return nil
	}
	info, err := f.Stat()
	if err != nil {
		return nil
	}
	return note(ctx, what, info)
}

func note(ctx context.Context, what string, info fs.FileInfo) error {
	in, _ := ctx.Value(inputsKey{}).(*inputFiles)
	if in == nil || !guarded(info) {
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.stdout != nil && os.SameFile(in.stdout, info) {
		return &SameFileError{fmt.Sprintf("standard output is %s: ratelab does not write over what it reads; send the output elsewhere", what)}
	}
	in.files = append(in.files, inputFile{what: what, info: info})
	return nil
}

// Output is a path a command will write and the flag that named it ("" in Create, whose
// callers add it).
type Output struct{ Flag, Path string }

// Check refuses to write any of outputs that is one of ctx's inputs, before anything is
// written: "--chart in.csv: the same file as the trace --in in.csv; …". Standard output (-),
// "" (none) and paths that do not exist yet pass.
func Check(ctx context.Context, outputs ...Output) error {
	in, _ := ctx.Value(inputsKey{}).(*inputFiles)
	if in == nil {
		return nil
	}
	for _, o := range outputs {
		if o.Path == "" || o.Path == "-" {
			continue
		}
		info, err := os.Stat(o.Path)
		if err != nil {
			continue
		}
		in.mu.Lock()
		files := in.files
		in.mu.Unlock()
		for _, f := range files {
			if os.SameFile(f.info, info) {
				name := quote(o.Path)
				if o.Flag != "" {
					name = o.Flag + " " + name
				}
				return &SameFileError{fmt.Sprintf("%s: the same file as %s; ratelab does not write over what it reads: give another path", name, f.what)}
			}
		}
	}
	return nil
}

// quote shows a path as the user would type it in a shell: quoted only when needed (the
// command line's quoteArg).
func quote(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n\"'\\") {
		return strconv.Quote(s)
	}
	return s
}
