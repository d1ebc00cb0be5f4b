package outfile

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// What the tests write: three CSV rows, as a command would.
const smallDecisions = "t_ns,permits,leaky-bucket:rate=100/1s\n0,1,1\n0,1,0\n10000000,1,1\n"

// writeTo writes smallDecisions to path as a command does: Create, Write, Commit.
func writeTo(ctx context.Context, path string) error {
	o, err := Create(ctx, path)
	if err != nil {
		return err
	}
	defer o.Abort()
	if _, err := o.Write([]byte(smallDecisions)); err != nil {
		return err
	}
	return o.Commit()
}

// names lists dir, so that a test sees any temporary file left behind.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var n []string
	for _, e := range entries {
		n = append(n, e.Name())
	}
	return n
}

// withUmask runs f with the process's umask set to mask.
func withUmask(mask int, f func()) {
	old := syscall.Umask(mask)
	defer syscall.Umask(old)
	f()
}

func TestOutputNewFileIs0644LessTheUmask(t *testing.T) {
	dir := t.TempDir()
	for _, mask := range []int{0o022, 0o077} {
		out := filepath.Join(dir, fmt.Sprintf("new-%o.csv", mask))
		withUmask(mask, func() { require.NoError(t, writeTo(context.Background(), out)) })
		info, err := os.Stat(out)
		require.NoError(t, err)
		assert.Equal(t, fs.FileMode(0o644)&^fs.FileMode(mask), info.Mode().Perm(), "umask %03o", mask)
		got, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.Equal(t, smallDecisions, string(got))
	}
}

func TestOutputReplacesARegularFileAtomicallyKeepingItsMode(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "decisions.csv")
	require.NoError(t, os.WriteFile(out, []byte("old content, longer than the new one will be ............................\n"), 0o600))
	require.NoError(t, os.Chmod(out, 0o640))
	before, err := os.Stat(out)
	require.NoError(t, err)

	require.NoError(t, writeTo(context.Background(), out))
	after, err := os.Stat(out)
	require.NoError(t, err)
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, smallDecisions, string(got))
	assert.Equal(t, fs.FileMode(0o640), after.Mode().Perm(), "the replaced file keeps its permissions")
	assert.False(t, os.SameFile(before, after), "a new file renamed into place, not the old one rewritten")
	assert.ElementsMatch(t, []string{"decisions.csv"}, names(t, dir))
}

func TestOutputFollowsASymlinkAndKeepsIt(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "real")
	require.NoError(t, os.Mkdir(sub, 0o755))
	target := filepath.Join(sub, "decisions.csv")
	require.NoError(t, os.WriteFile(target, []byte("old\n"), 0o644))
	link := filepath.Join(dir, "link.csv")
	require.NoError(t, os.Symlink(filepath.Join("real", "decisions.csv"), link))

	require.NoError(t, writeTo(context.Background(), link))
	info, err := os.Lstat(link)
	require.NoError(t, err)
	assert.True(t, info.Mode()&fs.ModeSymlink != 0, "the link is still a link")
	dest, err := os.Readlink(link)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join("real", "decisions.csv"), dest, "pointing where it did")
	got, err := os.ReadFile(target)
	require.NoError(t, err)
	assert.Equal(t, smallDecisions, string(got), "its target was written")
	assert.ElementsMatch(t, []string{"decisions.csv"}, names(t, sub), "no temporary file beside the target")

	// A link to nothing is refused, and nothing is created at either end.
	dangling := filepath.Join(dir, "dangling.csv")
	require.NoError(t, os.Symlink(filepath.Join(dir, "nowhere.csv"), dangling))
	err = writeTo(context.Background(), dangling)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "does not exist")
	assert.NotContains(t, err.Error(), "\n")
	_, err = os.Stat(filepath.Join(dir, "nowhere.csv"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
	info, err = os.Lstat(dangling)
	require.NoError(t, err)
	assert.True(t, info.Mode()&fs.ModeSymlink != 0)
}

func TestOutputToADirectoryIsAClearError(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "somedir")
	require.NoError(t, os.Mkdir(target, 0o755))
	err := writeTo(context.Background(), target)
	require.Error(t, err)
	assert.Equal(t, target+": is a directory; give the path of a file", err.Error())
	assert.Empty(t, names(t, target))
	assert.ElementsMatch(t, []string{"somedir"}, names(t, dir))
}

// mkfifo makes a FIFO in dir, or skips the test where there are none.
func mkfifo(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return path
}

func TestOutputWritesThroughAFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := mkfifo(t, dir, "out.csv")
	read := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			read <- err.Error()
			return
		}
		defer f.Close()
		data, _ := io.ReadAll(f)
		read <- string(data)
	}()
	require.NoError(t, writeTo(context.Background(), fifo))
	select {
	case got := <-read:
		assert.Equal(t, smallDecisions, got, "the reader got every row")
	case <-time.After(10 * time.Second):
		t.Fatal("the FIFO's reader got nothing")
	}
	info, err := os.Lstat(fifo)
	require.NoError(t, err)
	assert.True(t, info.Mode()&fs.ModeNamedPipe != 0, "still a FIFO, not replaced by a regular file")
	assert.ElementsMatch(t, []string{"out.csv"}, names(t, dir), "no temporary file")
}

func TestOutputToAFIFOWithNoReaderStopsOnCancel(t *testing.T) {
	dir := t.TempDir()
	fifo := mkfifo(t, dir, "out.csv")
	t.Cleanup(func() { // let the abandoned open finish
		if f, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			time.Sleep(10 * time.Millisecond)
			f.Close()
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := writeTo(ctx, fifo)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 5*time.Second)
	info, err := os.Lstat(fifo)
	require.NoError(t, err)
	assert.True(t, info.Mode()&fs.ModeNamedPipe != 0)
}

// A device node of our own (the null device, made in a temporary folder) is written through,
// never replaced. Needs the right to make device nodes.
func TestOutputWritesThroughADevice(t *testing.T) {
	dir := t.TempDir()
	dev := filepath.Join(dir, "null")
	if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, int(1<<8|3)); err != nil {
		t.Skipf("mknod: %v", err)
	}
	require.NoError(t, writeTo(context.Background(), dev))
	info, err := os.Lstat(dev)
	require.NoError(t, err)
	assert.True(t, info.Mode()&fs.ModeCharDevice != 0, "still a device")
	assert.ElementsMatch(t, []string{"null"}, names(t, dir))
}

// A write abandoned halfway (the command's own error) leaves the old file as it was and no
// temporary file; a folder that does not exist is one line naming the path.
func TestAnAbandonedWriteLeavesTheOldFileAndNoTemporary(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "decisions.csv")
	require.NoError(t, os.WriteFile(out, []byte("old\n"), 0o644))
	o, err := Create(context.Background(), out)
	require.NoError(t, err)
	_, err = o.Write([]byte("t_ns,permits\n0,1\n"))
	require.NoError(t, err)
	o.Abort() // as `defer o.Abort()` does when the command returns its error
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, "old\n", string(got))
	assert.ElementsMatch(t, []string{"decisions.csv"}, names(t, dir))

	err = writeTo(context.Background(), filepath.Join(dir, "missing", "out.csv"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing/out.csv: cannot create a file in")
	assert.NotContains(t, err.Error(), ".tmp-", "the temporary name is ratelab's business")
}

func TestWriteOutputLeavesAnUnchangedFileUntouched(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "GALLERY.md")
	require.NoError(t, WriteFile(context.Background(), path, []byte("same")))
	before, err := os.Stat(path)
	require.NoError(t, err)
	require.NoError(t, WriteFile(context.Background(), path, []byte("same")))
	after, err := os.Stat(path)
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after), "not rewritten")
	require.NoError(t, WriteFile(context.Background(), path, []byte("other")))
	got, _ := os.ReadFile(path)
	assert.Equal(t, "other", string(got))
}

func TestAnAbortedOutputLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	o, err := Create(context.Background(), filepath.Join(dir, "x.csv"))
	require.NoError(t, err)
	_, err = o.Write([]byte("partial"))
	require.NoError(t, err)
	require.Len(t, names(t, dir), 1, "the temporary file while writing")
	o.Abort()
	o.Abort()
	assert.Empty(t, names(t, dir))
	assert.Error(t, o.Commit(), "an aborted output cannot be committed")
}

// The system's name for an open file descriptor is written through, appending as the
// descriptor would: `--out /dev/stdout >> log` adds to the log, it does not replace it.
func TestOutputToAnOpenDescriptorsNameAppends(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log.csv")
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteString("before\n")
	require.NoError(t, err)
	before, err := f.Stat()
	require.NoError(t, err)
	name := fmt.Sprintf("/proc/self/fd/%d", f.Fd())
	if _, err := os.Lstat(name); err != nil {
		t.Skipf("no %s: %v", name, err)
	}
	require.NoError(t, writeTo(context.Background(), name))
	after, err := os.Stat(log)
	require.NoError(t, err)
	assert.True(t, os.SameFile(before, after), "the same file, not replaced")
	got, err := os.ReadFile(log)
	require.NoError(t, err)
	assert.Equal(t, "before\n"+smallDecisions, string(got))
}
