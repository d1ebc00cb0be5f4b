package fit

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/accesslog"
	"github.com/ratelab/ratelab/trace"
)

// csvTextLog reads a log as fit did before trace.Rows: as the CSV text accesslog.Input writes
// of it, parsed again by trace.Reader. The tests hold the rows path to it.
type csvTextLog struct{ path, name string }

func (c csvTextLog) Name() string { return c.name }

func (c csvTextLog) Open() (Rows, io.Closer, error) {
	f, err := os.Open(c.path)
	if err != nil {
		return nil, nil, err
	}
	in, err := accesslog.Open(f, accesslog.Options{})
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", c.name, err)
	}
	r, err := trace.NewReader(in)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", c.name, err)
	}
	return r, f, nil
}

// writeCombinedLog writes an nginx combined log of rows requests, 2,000 a second stamped to
// the second, from 300 client addresses; with badLine > 0, that line is not one nginx wrote.
func writeCombinedLog(tb testing.TB, rows, badLine int) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "access.log")
	f, err := os.Create(path)
	require.NoError(tb, err)
	w := bufio.NewWriterSize(f, 1<<20)
	start := time.Date(2026, 12, 2, 18, 0, 0, 0, time.UTC)
	seed := uint64(7)
	var line []byte
	for i := range rows {
		seed = seed*6364136223846793005 + 1442695040888963407
		r := seed >> 33
		if i+1 == badLine {
			w.WriteString("a line nginx did not write\n")
			continue
		}
		line = fmt.Appendf(line[:0], "10.0.%d.%d - - [", r%300/100, r%100)
		line = start.Add(time.Duration(i/2000)*time.Second).AppendFormat(line, "02/Jan/2006:15:04:05 -0700")
		line = append(line, `] "GET /api/items/`...)
		line = strconv.AppendUint(line, r>>10%1000, 10)
		line = append(line, ` HTTP/1.1" 200 `...)
		line = strconv.AppendUint(line, 200+r>>20%800, 10)
		line = append(line, ` "-" "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0"`+"\n"...)
		w.Write(line)
	}
	require.NoError(tb, w.Flush())
	require.NoError(tb, f.Close())
	return path
}

// A log fits to the same report read as rows (LogSource, trace.Rows) as read through its CSV
// text, for the whole traffic and per client; a log failing part way fails with the same error,
// naming the log's line.
func TestLogRowsFitAsTheirCSVText(t *testing.T) {
	ctx := context.Background()
	path := writeCombinedLog(t, 30_000, 0)
	rows, text := File(path, "access.log"), csvTextLog{path, "access.log"}
	want, err := Fit(ctx, text, Options{RefusePPM: 10000})
	require.NoError(t, err)
	got, err := Fit(ctx, rows, Options{RefusePPM: 10000})
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.EqualValues(t, 30_000, got.Stats.Requests)
	_, isRows := mustOpen(t, rows).(*trace.Rows)
	require.True(t, isRows, "the log is read as rows")

	wantPC, err := FitPerClient(ctx, text, PerClientOptions{})
	require.NoError(t, err)
	gotPC, err := FitPerClient(ctx, rows, PerClientOptions{})
	require.NoError(t, err)
	require.Equal(t, wantPC, gotPC)

	bad := writeCombinedLog(t, 30_000, 17_001)
	_, wantErr := Fit(ctx, csvTextLog{bad, "access.log"}, Options{})
	_, gotErr := Fit(ctx, File(bad, "access.log"), Options{})
	require.ErrorContains(t, wantErr, "access.log: line 17001, column 1: ")
	require.Equal(t, wantErr.Error(), gotErr.Error())
}

func mustOpen(t *testing.T, src Source) Rows {
	t.Helper()
	rows, closer, err := src.Open()
	require.NoError(t, err)
	t.Cleanup(func() { closer.Close() })
	return rows
}

// BenchmarkFitLogRows fits an nginx combined log of 1M requests read as rows (path=rows, as
// fit reads a log) and through its CSV text (path=csv-text, as it did before trace.Rows):
//
//	go test -c -o /tmp/fit.test ./fit/
//	/tmp/fit.test -test.run '^$' -test.bench 'FitLogRows' -test.benchtime 2x -test.count 6
func BenchmarkFitLogRows(b *testing.B) {
	const rows = 1_000_000
	path := writeCombinedLog(b, rows, 0)
	for _, c := range []struct {
		name string
		src  Source
	}{{"csv-text", csvTextLog{path, "access.log"}}, {"rows", File(path, "access.log")}} {
		b.Run("path="+c.name, func(b *testing.B) {
			cpu0 := processCPU()
			for range b.N {
				rep, err := Fit(context.Background(), c.src, Options{RefusePPM: 10000})
				if err != nil {
					b.Fatal(err)
				}
				if rep.Stats.Requests != rows {
					b.Fatal(rep.Stats.Requests)
				}
			}
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(rows*b.N), "cpu-ns/row")
		})
	}
}

// A log's notes are those of the read that loaded its rows, not of a read opened and left:
// after Fit and after FitPerClient, the first note counts every request of the log.
func TestLogNotesCountTheRowsFit(t *testing.T) {
	const rows = 5000
	path := writeCombinedLog(t, rows, 0)
	for _, perClient := range []bool{false, true} {
		src := Log(path, "access.log", accesslog.Options{})
		var err error
		if perClient {
			_, err = FitPerClient(context.Background(), src, PerClientOptions{})
		} else {
			_, err = Fit(context.Background(), src, Options{})
		}
		require.NoError(t, err)
		notes := src.Notes()
		require.NotEmpty(t, notes, "per client: %v", perClient)
		require.Contains(t, notes[0], fmt.Sprintf(", %d requests,", rows), "per client: %v", perClient)
	}
}
