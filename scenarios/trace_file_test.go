package scenarios

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A trace source's file is checked where the scenario names it. Every lane reads the trace
// from its start, so a FIFO fed once gave the first lane its rows and left the second
// waiting for a writer forever (the adversarial harness's input/trace-source←fifo-with-writer);
// a missing one was reported by the run without its place in the file.
func TestTraceFileMustBeARegularFile(t *testing.T) {
	dir := t.TempDir()
	const lanes = "limiters: [\"leaky-bucket:rate=1/1s\", \"token-bucket:capacity=1,rate=1/1s\"]\n"
	write := func(name, file string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte("horizon: 1s\nsources:\n  - kind: trace\n    file: "+file+"\n"+lanes), 0o644))
		return p
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "t.csv"), []byte("t_ns\n1\n"), 0o644))
	_, err := LoadFile(write("ok.yaml", "t.csv"))
	require.NoError(t, err)

	_, err = LoadFile(write("missing.yaml", "nowhere.csv"))
	assert.EqualError(t, err, filepath.Join(dir, "missing.yaml")+":4:11: sources[0].file: "+filepath.Join(dir, "nowhere.csv")+": no such file or directory")

	_, err = LoadFile(write("dir.yaml", "."))
	assert.EqualError(t, err, filepath.Join(dir, "dir.yaml")+":4:11: sources[0].file: "+dir+": is a directory, not a trace")

	if mkfifo(filepath.Join(dir, "pipe.csv")) == nil {
		_, err = LoadFile(write("fifo.yaml", "pipe.csv"))
		assert.EqualError(t, err, filepath.Join(dir, "fifo.yaml")+":4:11: sources[0].file: "+filepath.Join(dir, "pipe.csv")+
			": is a FIFO (named pipe): every lane reads the trace from its start, so only a regular file is read (a pipe's or a device's data is read once)")
	}
}
