//go:build unix

package engine

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A trace source read from a FIFO (process substitution, a pipe from a recorder) is read
// once, by the run: estimating its size must not open it. Before, Estimate opened the FIFO
// to sample it, took the writer's data and closed it, and the run's own open then waited for
// a writer forever (the adversarial harness's input/trace-source←fifo-with-writer).
func TestEstimateDoesNotOpenATraceFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.csv")
	require.NoError(t, syscall.Mkfifo(path, 0o644))
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0) // waits for the first reader
		if err != nil {
			return
		}
		f.WriteString("t_ns\n1000\n2000\n3000\n")
		f.Close()
	}()
	t.Cleanup(func() { // release the writer if nothing read the FIFO
		if f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	sc := &Scenario{Name: "fifo", Horizon: time.Second, Client: Client{Policy: PolicyDrop},
		Lanes: stacks(t, "leaky-bucket:rate=100/1s"), Sources: []Source{{Kind: SourceTrace, TraceFile: path}}}
	require.Zero(t, sc.Estimate().Requests, "a FIFO's length is not known")

	done := make(chan error, 1)
	var offered int64
	go func() {
		res, err := Run(context.Background(), sc, nil)
		if err == nil {
			offered = res.Lanes[0].Totals.Offered
		}
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
		require.EqualValues(t, 3, offered)
	case <-time.After(10 * time.Second):
		t.Fatal("the run waited for a writer the estimate had used up")
	}
}
