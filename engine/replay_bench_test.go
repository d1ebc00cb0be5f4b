package engine

// Benchmarks of Replay against its floor. Run:
//
//	go test -run '^$' -bench Replay -count 6 ./engine/ | tee new.txt   # benchstat old.txt new.txt
//
// Every benchmark streams the same deterministic in-memory trace of benchRows rows (one
// iteration is the whole trace) and reports rows/s, ns/row and allocs/row besides the
// per-trace figures:
//
//	BenchmarkReplay/layout=L/path=replay       Replay with one token bucket, output to io.Discard
//	BenchmarkReplay/layout=L/path=floor        the least a replay can do: bufio.Scanner lines,
//	                                           bytes.IndexByte and strconv.ParseInt for t_ns and
//	                                           permits, one TokenBucket.AcquireAt per row, no output
//	BenchmarkReplay/layout=L/path=floor-write  the floor plus writing Replay's output row
//	                                           (strconv.AppendInt to a bufio.Writer)
//
// layout=ns-permits is a t_ns,permits trace; layout=ns-permits-key adds a key column of a
// few hundred distinct keys.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/virtualclock"
)

const benchRows = 1 << 19

// benchLimiter admits about half of the benchmark trace's requests (one per 10µs on average
// of 1.3 permits, 130,000 permits/s, against 65,000 permits/s).
const benchLimiter = "token-bucket:capacity=50,rate=65000/1s"

var benchTraces = struct {
	sync.Mutex
	m map[bool][]byte
}{m: map[bool][]byte{}}

// benchTrace is a deterministic t_ns,permits[,key] trace of rows rows: gaps uniform in
// [0, 20µs), permits 1 (80%), 2 or 3, and with keys one of 300 "tenant-N".
func benchTrace(rows int, key bool) []byte {
	benchTraces.Lock()
	defer benchTraces.Unlock()
	if rows == benchRows {
		if b, ok := benchTraces.m[key]; ok {
			return b
		}
	}
	r := rand.New(rand.NewPCG(14, 3))
	var buf bytes.Buffer
	if key {
		buf.WriteString("t_ns,permits,key\n")
	} else {
		buf.WriteString("t_ns,permits\n")
	}
	line := make([]byte, 0, 64)
	at := int64(1_000_000_000)
	for range rows {
		at += r.Int64N(20_000)
		permits := 1
		if p := r.IntN(10); p >= 8 {
			permits = p - 6
		}
		line = strconv.AppendInt(line[:0], at, 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(permits), 10)
		if key {
			line = append(line, ",tenant-"...)
			line = strconv.AppendInt(line, int64(r.IntN(300)), 10)
		}
		line = append(line, '\n')
		buf.Write(line)
	}
	if rows == benchRows {
		benchTraces.m[key] = buf.Bytes()
	}
	return buf.Bytes()
}

// floorReplay is the minimal replay of a t_ns,permits[,...] trace: a bufio.Scanner, one
// strconv.ParseInt per number, one GCRA decision per row. With out it also writes Replay's
// row. It returns the rows and the admitted count.
func floorReplay(trace []byte, tb *limiters.TokenBucket, out *bufio.Writer) (rows, admitted int64) {
	sc := bufio.NewScanner(bytes.NewReader(trace))
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
			panic(fmt.Sprint(err1, err2))
		}
		rows++
		d := tb.AcquireAt(time.Duration(ns), int(permits))
		if d == limiters.Admitted {
			admitted++
		}
		if out != nil {
			if out.Available() < 64 {
				out.Flush()
			}
			buf := out.AvailableBuffer()
			buf = strconv.AppendInt(buf, ns, 10)
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, permits, 10)
			if d == limiters.Admitted {
				buf = append(buf, ",1\n"...)
			} else {
				buf = append(buf, ",0\n"...)
			}
			out.Write(buf)
		}
	}
	if sc.Err() != nil {
		panic(sc.Err())
	}
	return rows, admitted
}

// perRow reports the per-row figures of a benchmark that processed rows rows per iteration,
// with the mallocs counted from before.
func perRow(b *testing.B, rows int64, before *runtime.MemStats) {
	b.StopTimer()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	total := float64(rows) * float64(b.N)
	b.ReportMetric(total/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/total, "ns/row")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/total, "allocs/row")
}

func BenchmarkReplay(b *testing.B) {
	spec, err := ParseStack(benchLimiter)
	if err != nil {
		b.Fatal(err)
	}
	for _, layout := range []struct {
		name string
		key  bool
	}{{"ns-permits", false}, {"ns-permits-key", true}} {
		trace := benchTrace(benchRows, layout.key)
		b.Run("layout="+layout.name+"/path=replay", func(b *testing.B) {
			var sum ReplaySummary
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			b.SetBytes(int64(len(trace)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if sum, err = Replay(bytes.NewReader(trace), io.Discard, [][]limiters.Spec{spec}); err != nil {
					b.Fatal(err)
				}
			}
			perRow(b, sum.Rows, &before)
			b.ReportMetric(float64(sum.Admitted[0])/float64(sum.Rows), "admits/row")
		})
		for _, write := range []bool{false, true} {
			name := "floor"
			if write {
				name = "floor-write"
			}
			b.Run("layout="+layout.name+"/path="+name, func(b *testing.B) {
				var rows, admitted int64
				var before runtime.MemStats
				runtime.ReadMemStats(&before)
				b.SetBytes(int64(len(trace)))
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					tb, err := limiters.NewTokenBucket(50, limiters.PerSecond(65_000), virtualclock.New())
					if err != nil {
						b.Fatal(err)
					}
					var out *bufio.Writer
					if write {
						out = bufio.NewWriterSize(io.Discard, 64<<10)
					}
					rows, admitted = floorReplay(trace, tb, out)
					if out != nil {
						out.Flush()
					}
				}
				perRow(b, rows, &before)
				b.ReportMetric(float64(admitted)/float64(rows), "admits/row")
			})
		}
	}
}
