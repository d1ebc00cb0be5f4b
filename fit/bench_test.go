package fit

import (
	"bufio"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// writeBenchTrace writes rows requests: Poisson gaps at 100k/s, with a burst of 1000 at one
// instant every 100k rows and one request in 50 of 2 to 5 permits.
func writeBenchTrace(b *testing.B, rows int) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bench.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("t_ns,permits\n")
	rng := rand.New(rand.NewPCG(1, 1))
	at := int64(0)
	var line []byte
	for i := range rows {
		if i%100_000 >= 1000 {
			at += int64(rng.ExpFloat64() * 10_000)
		}
		n := 1
		if rng.IntN(50) == 0 {
			n = 2 + rng.IntN(4)
		}
		line = strconv.AppendInt(line[:0], at, 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(n), 10)
		line = append(line, '\n')
		w.Write(line)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return path
}

// BenchmarkFit fits a trace of 10M rows: the statistics pass (two readers), the curve's pass
// over 24 rates, the relaxed search's passes and the confirming replay. rows/s counts the
// trace's rows once per fit.
func BenchmarkFit(b *testing.B) {
	if testing.Short() {
		b.Skip("10M rows")
	}
	const rows = 10_000_000
	path := writeBenchTrace(b, rows)
	b.ResetTimer()
	for b.Loop() {
		rep, err := Fit(context.Background(), File(path, "bench.csv"), Options{RefusePPM: 10000})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Stats.Requests != rows {
			b.Fatal(rep.Stats.Requests)
		}
		b.ReportMetric(float64(rep.Relaxed.Passes), "search-passes")
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
