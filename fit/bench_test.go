package fit

import (
	"bufio"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
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

// BenchmarkFit fits a trace of 10M rows (statistics, the curve over 24 rates and the knee's
// refinement, the relaxed search at 1%, the confirming replay) beside the replay floor on the
// same file (replayFloor: a bufio.Scanner, strconv.ParseInt, one token-bucket decision a row),
// so the ratio is read from one run. The target: fit within 2× the floor's time.
//
//	go test -c -o /tmp/fit.test ./fit/
//	/tmp/fit.test -test.run '^$' -test.bench 'Fit$' -test.benchtime 1x -test.count 6
func BenchmarkFit(b *testing.B) {
	if testing.Short() {
		b.Skip("10M rows")
	}
	const rows = 10_000_000
	path := writeBenchTrace(b, rows)
	report := func(b *testing.B, cpu0 time.Duration) {
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(rows*b.N), "cpu-ns/row")
	}
	b.Run("path=replay-floor", func(b *testing.B) {
		cpu0 := processCPU()
		for range b.N {
			if n := replayFloor(path); n != rows {
				b.Fatal(n)
			}
		}
		report(b, cpu0)
	})
	b.Run("path=fit", func(b *testing.B) {
		cpu0 := processCPU()
		for range b.N {
			rep, err := Fit(context.Background(), File(path, "bench.csv"), Options{RefusePPM: 10000})
			if err != nil {
				b.Fatal(err)
			}
			if rep.Stats.Requests != rows {
				b.Fatal(rep.Stats.Requests)
			}
			b.ReportMetric(float64(rep.Relaxed.Passes), "search-passes")
		}
		report(b, cpu0)
	})
}

// BenchmarkFitSteps fits BenchmarkFit's trace with grids of 12, 24 and 48 rates (--steps):
// the difference is the curve's cost per rate, in CPU ns a row and a rate.
//
//	go test -c -o /tmp/fit.test ./fit/
//	for i in 1 2 3 4 5 6; do /tmp/fit.test -test.run '^$' -test.bench 'FitSteps' -test.benchtime 1x; done
func BenchmarkFitSteps(b *testing.B) {
	if testing.Short() {
		b.Skip("10M rows")
	}
	const rows = 10_000_000
	path := writeBenchTrace(b, rows)
	for _, steps := range []int{12, 24, 48} {
		b.Run("steps="+strconv.Itoa(steps), func(b *testing.B) {
			cpu0 := processCPU()
			for range b.N {
				rep, err := Fit(context.Background(), File(path, "bench.csv"), Options{RefusePPM: 10000, Steps: steps})
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
