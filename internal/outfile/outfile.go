// Package outfile writes ratelab's output files so that a reader never sees half of one and
// no input is ever destroyed. Every file a command writes goes through Create (or WriteFile,
// for bytes written at once), and what a path names decides how it is written:
//
//   - nothing yet: a new file, created 0644 less the umask (0644 under umask 022, 0600 under
//     077), written to a temporary file beside its final name and renamed into place when
//     complete (rename(2) within one directory is atomic: a reader sees the old file or the
//     whole new one, never a part);
//   - a regular file: replaced the same way, keeping its permission bits (0640 stays 0640);
//     a WriteFile of exactly the bytes it holds leaves it untouched (same inode, same mtime);
//   - a symbolic link: followed; its target is replaced as above, beside the target, and the
//     link stays a link. A link to nothing is refused: no file is created where a link
//     points. The system's names for open streams (/dev/stdout, /dev/stderr, /dev/fd/N,
//     /proc/self/fd/N) are written through, appending as the stream itself would, so
//     `--out /dev/stdout >> log` adds to the log;
//   - a device, a FIFO or a socket: opened and written in place, never replaced. Opening a
//     FIFO waits for a reader; cancelling the context ends the wait and any blocked write;
//   - a directory: refused ("is a directory; give the path of a file").
//
// The temporary file is ".NAME.tmp-PID-N" (N counts this process's temporaries from 1), in
// the target's directory so that the rename never crosses a file system, with a leading dot
// so that a listing does not show it. A write that fails, is aborted or is cancelled removes
// it: nothing half-written appears at the path and nothing is left beside it. Only a process
// killed between creating and renaming it (SIGKILL, a power cut) can leave one behind, under
// that name, for the user to delete; the file at the path is then still the old one.
//
// "-" is standard output and not a path: the commands write it themselves, and Check lets it
// pass. Errors are one line that starts with the path the user gave ("out.csv: permission
// denied"), without the temporary's name.
//
// The input guard (inputs.go) is the other half: a command notes every file it reads
// (NoteInput, NoteStdin) in a context made by WithInputs, and Check, called up front for each
// output a command names and again by Create, refuses to write over any of them.
package outfile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// File is an output being written. Close it with Commit when complete or Abort otherwise;
// Abort after Commit does nothing, so `defer o.Abort()` is always safe.
type File struct {
	f       *os.File
	path    string // what the user named
	target  string // the file replaced when committing: path, or its symlink's target
	tmp     string // the temporary file, "" when writing through
	stop    func() bool
	ctx     context.Context
	settled bool
}

// Create opens path for writing. ctx cancels a write in place that blocks (a FIFO
// nobody reads, or nobody has opened yet).
func Create(ctx context.Context, path string) (*File, error) {
	if err := Check(ctx, Output{Path: path}); err != nil {
		return nil, err
	}
	r, err := resolve(path)
	if err != nil {
		return nil, err
	}
	o := &File{path: path, target: r.target, ctx: ctx}
	if r.through {
		if o.f, err = openThrough(ctx, path, r.append); err != nil {
			return nil, err
		}
		// Unblock a write stuck on a FIFO or a pipe once ctx is done (files that cannot
		// wait ignore deadlines).
		o.stop = context.AfterFunc(ctx, func() { o.f.SetWriteDeadline(time.Unix(1, 0)) })
		return o, nil
	}
	if o.f, err = createTemp(r.target); err != nil {
		return nil, err
	}
	o.tmp = o.f.Name()
	if r.replaces {
		// Replacing a file keeps its permissions; a new one has 0644 less the umask.
		if err := o.f.Chmod(r.mode); err != nil {
			o.Abort()
			return nil, fmt.Errorf("%s: %w", path, cause(err))
		}
	}
	return o, nil
}

func (o *File) Write(p []byte) (int, error) {
	n, err := o.f.Write(p)
	if err != nil && o.ctx.Err() != nil {
		return n, o.ctx.Err()
	}
	return n, err
}

// Commit completes the output: closes it and, when it was written beside its final name,
// renames it into place.
func (o *File) Commit() error {
	if o.settled {
		return errors.New(o.path + ": output already closed")
	}
	if o.stop != nil {
		o.stop()
	}
	err := o.f.Close()
	if err == nil && o.ctx.Err() != nil {
		err = o.ctx.Err()
	}
	if err != nil {
		o.Abort()
		return fmt.Errorf("%s: %w", o.path, err)
	}
	o.settled = true
	if o.tmp == "" {
		return nil
	}
	// Between resolving the path and now, something else may have been put there: replace
	// only a regular file or nothing, as resolve decided.
	if info, err := os.Lstat(o.target); err == nil && !info.Mode().IsRegular() {
		os.Remove(o.tmp)
		return fmt.Errorf("%s: became %s while ratelab wrote it; not replacing it", o.path, describeMode(info.Mode()))
	}
	if err := os.Rename(o.tmp, o.target); err != nil {
		os.Remove(o.tmp)
		return fmt.Errorf("%s: %w", o.path, cause(err))
	}
	return nil
}

// Abort abandons the output: the temporary file is removed, a file written in place is
// closed as it is.
func (o *File) Abort() {
	if o.settled {
		return
	}
	o.settled = true
	if o.stop != nil {
		o.stop()
	}
	o.f.Close()
	if o.tmp != "" {
		os.Remove(o.tmp)
	}
}

// WriteFile writes data to path as Create does; a regular file that already holds
// exactly data is left untouched.
func WriteFile(ctx context.Context, path string, data []byte) error {
	if r, err := resolve(path); err == nil && r.replaces {
		if old, err := os.ReadFile(r.target); err == nil && bytes.Equal(old, data) {
			return nil
		}
	}
	o, err := Create(ctx, path)
	if err != nil {
		return err
	}
	defer o.Abort()
	if _, err := o.Write(data); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return o.Commit()
}

// resolved is how an output path is written.
type resolved struct {
	target   string      // the name an atomic write renames its file to: the path, or its link's target
	replaces bool        // target is an existing regular file, whose permission bits are mode
	mode     fs.FileMode //
	through  bool        // open the path and write in place instead
	append   bool        // writing through to a regular file: at its end, as its stream does
}

// resolve decides how path is written (see the package doc).
func resolve(path string) (resolved, error) {
	link, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return resolved{target: path}, nil // a new file (a missing folder is reported when creating it)
	}
	if err != nil {
		return resolved{}, fmt.Errorf("%s: %w", path, cause(err))
	}
	info := link
	if link.Mode()&fs.ModeSymlink != 0 {
		if info, err = os.Stat(path); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				dest, _ := os.Readlink(path)
				return resolved{}, fmt.Errorf("%s: a symbolic link to %s, which does not exist; ratelab does not create files through links", path, dest)
			}
			return resolved{}, fmt.Errorf("%s: %w", path, cause(err))
		}
	}
	switch {
	case info.IsDir():
		return resolved{}, fmt.Errorf("%s: is a directory; give the path of a file", path)
	case !info.Mode().IsRegular():
		return resolved{target: path, through: true}, nil // a device, a FIFO, a socket
	case link == info:
		return resolved{target: path, replaces: true, mode: info.Mode().Perm()}, nil
	}
	// A link to a regular file: replace its target, beside it, and keep the link. The
	// system's names for open streams (/dev/stdout, /dev/fd/N, /proc/self/fd/N) are written
	// through instead, appending as the stream itself would; so is a link whose target has
	// no name to rename to (a deleted file held open).
	if isStreamName(path) {
		return resolved{target: path, through: true, append: true}, nil
	}
	dest, err := filepath.EvalSymlinks(path)
	if err == nil {
		if d, err := os.Lstat(dest); err == nil && d.Mode().IsRegular() && os.SameFile(d, info) {
			return resolved{target: dest, replaces: true, mode: info.Mode().Perm()}, nil
		}
	}
	return resolved{target: path, through: true, append: true}, nil
}

// isStreamName is whether path is one of the system's names for an open file descriptor.
func isStreamName(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	switch {
	case abs == "/dev/stdout", abs == "/dev/stderr", strings.HasPrefix(abs, "/dev/fd/"):
		return true
	case strings.HasPrefix(abs, "/proc/"):
		_, rest, _ := strings.Cut(abs[len("/proc/"):], "/")
		return strings.HasPrefix(rest, "fd/")
	}
	return false
}

// openThrough opens an existing file for writing in place. Opening a FIFO waits for a
// reader; ctx ends the wait.
func openThrough(ctx context.Context, path string, appending bool) (*os.File, error) {
	flags := os.O_WRONLY
	if appending {
		flags |= os.O_APPEND
	}
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.OpenFile(path, flags, 0)
		done <- opened{f, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, fmt.Errorf("%s: %w", path, cause(r.err))
		}
		return r.f, nil
	case <-ctx.Done():
		go func() { // the open may still succeed: close what it opens
			if r := <-done; r.f != nil {
				r.f.Close()
			}
		}()
		return nil, fmt.Errorf("%s: %w while waiting to open it (a FIFO with no reader?)", path, ctx.Err())
	}
}

var tempCount atomic.Uint64

// createTemp creates an empty file beside target, named after it (".NAME.tmp-PID-N"), with
// mode 0644 less the umask. Its name starts with a dot so that a listing does not show it.
func createTemp(target string) (*os.File, error) {
	dir, base := filepath.Split(target)
	for {
		name := filepath.Join(dir, "."+base+".tmp-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(tempCount.Add(1), 10))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: cannot create a file in %s: %w", target, filepath.Clean(dir), cause(err))
		}
		return f, nil
	}
}

// EnsureDir makes dir and its parents, as os.MkdirAll does, with an error that says what
// is in the way.
func EnsureDir(dir string) error {
	if info, err := os.Stat(dir); err == nil && !info.IsDir() {
		return fmt.Errorf("%s: is %s, not a directory", dir, describeMode(info.Mode()))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s: cannot make the directory: %w", dir, cause(err))
	}
	return nil
}

// cause is the system's reason inside an *fs.PathError ("permission denied"), which the
// caller prefixes with the path the user gave.
func cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func describeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a regular file"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "something other than a regular file"
}
