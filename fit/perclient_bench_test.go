package fit

import (
	"bufio"
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/virtualclock"
)

// perClientBenchRows is the trace's length: the 10M rows.
const perClientBenchRows = 10_000_000

// writeKeyedBenchTrace writes rows requests t_ns,permits,key: Poisson gaps at 100k/s from
// 1000 clients, client k's share falling as 1/(k+1) (a few heavy clients, a long tail), one
// request in 50 of 2 to 5 permits.
func writeKeyedBenchTrace(b *testing.B, rows int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "clients.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("t_ns,permits,key\n")
	rng := rand.New(rand.NewPCG(2, 2))
	at := int64(0)
	var line []byte
	for range rows {
		at += int64(rng.ExpFloat64() * 10_000)
		n := 1
		if rng.IntN(50) == 0 {
			n = 2 + rng.IntN(4)
		}
		client := int(float64(1000) * rng.Float64() * rng.Float64()) // denser near 0
		line = strconv.AppendInt(line[:0], at, 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(n), 10)
		line = append(line, ",client-"...)
		line = strconv.AppendInt(line, int64(client), 10)
		line = append(line, '\n')
		w.Write(line)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return path
}

// replayFloor is engine's replay floor on a file (BenchmarkReplay/path=floor): a
// bufio.Scanner, one strconv.ParseInt per number, one token-bucket decision per row.
func replayFloor(path string) (rows int64) {
	f, err := os.Open(path)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	tb, err := limiters.NewTokenBucket(100, limiters.PerSecond(50_000), virtualclock.New())
	if err != nil {
		panic(err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	sc.Scan() // the header
	for sc.Scan() {
		line := sc.Bytes()
		comma := bytes.IndexByte(line, ',')
		rest := line[comma+1:]
		if c := bytes.IndexByte(rest, ','); c >= 0 {
			rest = rest[:c]
		}
		ns, err1 := strconv.ParseInt(string(line[:comma]), 10, 64)
		permits, err2 := strconv.ParseInt(string(rest), 10, 64)
		if err1 != nil || err2 != nil {
			panic("bad row")
		}
		tb.AcquireAt(time.Duration(ns), int(permits))
		rows++
	}
	return rows
}

// BenchmarkFitPerClientVsReplayFloor: `fit --clients` (FitPerClient with its defaults: 24
// rates, 99% of clients, its confirming replay through keys(…)) against the replay floor on
// the same 10M-row keyed trace on disk. The target: fit within 3× the floor's time.
// Measured (4 interleaved runs, load ~1, CPU ns a row): fit-clients 324-344 against the floor's
// 117-127 in the same run, 2.64-2.85×; by cachegrind instructions (each path alone, less the
// run that only writes the trace) 1,985 against 921 a row, 2.16×.
// Run the two interleaved:
//
//	go test -c -o /tmp/fit.test ./fit/
//	for i in 1 2 3; do /tmp/fit.test -test.run '^$' -test.bench FitPerClientVsReplayFloor -test.benchtime 1x; done
func BenchmarkFitPerClientVsReplayFloor(b *testing.B) {
	if testing.Short() {
		b.Skip("10M rows")
	}
	path := writeKeyedBenchTrace(b, perClientBenchRows)
	report := func(b *testing.B, cpu0 time.Duration) {
		b.ReportMetric(float64(perClientBenchRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(perClientBenchRows*b.N), "cpu-ns/row")
	}
	b.Run("path=replay-floor", func(b *testing.B) {
		cpu0 := processCPU()
		for range b.N {
			if rows := replayFloor(path); rows != perClientBenchRows {
				b.Fatal(rows)
			}
		}
		report(b, cpu0)
	})
	b.Run("path=fit-clients", func(b *testing.B) {
		cpu0 := processCPU()
		for range b.N {
			rep, err := FitPerClient(context.Background(), File(path, "clients.csv"), PerClientOptions{})
			if err != nil {
				b.Fatal(err)
			}
			if rep.Requests != perClientBenchRows {
				b.Fatal(rep.Requests)
			}
			b.ReportMetric(float64(rep.Clients), "clients")
		}
		report(b, cpu0)
	})
}

// processCPU is the process's user and system CPU time (the wall clock of a shared machine
// says how loaded it was as much as how fast the code is).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
