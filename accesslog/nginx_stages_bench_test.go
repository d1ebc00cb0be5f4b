package accesslog

// Where the time of reading an nginx combined log goes, stage by stage. Run:
//
//	go test -run '^$' -bench NginxStages -count 6 -benchtime 5x ./accesslog/
//
// Each sub-benchmark reads the same log (nginxStagesRows lines, 10,000 a second, as
// BenchmarkNginxCombinedVsCSV's) and does more than stage 1, so that the differences are
// the stages' costs:
//
//	stage=1-line    the lines (Reader.readLine)
//	stage=2-fields  and their fields split by parse, up to the last one needed ($status):
//	                the path of a line decodeCombined leaves to decodeCLF, not of most
//	stage=3-decode  the lines decoded as the reader does (stamp, key, status; for most
//	                lines decodeCombined, which splits nothing first)
//	stage=4-rows    Reader.NextRow: and ordered by arrival through the reorder window
//
// On 2 shared cores (load about 1), CPU ns a row, 3 runs: 1-line 41-43, 2-fields 85-88,
// 3-decode 73-79, 4-rows 109-121: a line costs about 42 to find, 35 to decode and 35 to
// queue and return.
//
// cpu-ns/row is the process's CPU time a row, which a machine shared with other work disturbs
// less than the wall clock.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"
)

const nginxStagesRows = 1 << 18

// nginxStagesLog is an nginx combined log of nginxStagesRows requests, 10,000 a second, from
// 300 clients.
func nginxStagesLog() []byte { return nginxStagesLogRows(nginxStagesRows) }

// nginxStagesLogRows is nginxStagesLog's first rows lines.
func nginxStagesLogRows(rows int) []byte {
	var buf bytes.Buffer
	start := time.Date(2026, 12, 2, 18, 3, 19, 0, time.UTC)
	for i := range rows {
		stamp := start.Add(time.Duration(i/10000) * time.Second).Format("02/Jan/2006:15:04:05 -0700")
		fmt.Fprintf(&buf, `10.0.%d.%d - - [%s] "GET /api/items/%d HTTP/1.1" 200 %d "-" "Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0"`+"\n",
			i%300/100, i%100, stamp, i*7919%1000, 200+i%800)
	}
	return buf.Bytes()
}

func BenchmarkNginxStages(b *testing.B) {
	log := nginxStagesLog()
	reader := func(b *testing.B) *Reader {
		rd, err := newReader(bufio.NewReaderSize(bytes.NewReader(log), 64<<10), Options{Format: "combined"})
		if err != nil {
			b.Fatal(err)
		}
		return rd
	}
	lines := func(b *testing.B, each func(rd *Reader, line []byte)) {
		rd := reader(b)
		for {
			line, err := rd.readLine()
			if err == io.EOF {
				return
			}
			if err != nil {
				b.Fatal(err)
			}
			each(rd, line)
		}
	}
	s := slot{key: make([]byte, 0, 64)} // as the reader's decoder's
	for _, stage := range []struct {
		name string
		run  func(b *testing.B)
	}{
		{"1-line", func(b *testing.B) { lines(b, func(*Reader, []byte) {}) }},
		{"2-fields", func(b *testing.B) {
			lines(b, func(rd *Reader, line []byte) {
				if col, msg := rd.f.parse(line, rd.vals, false); col > 0 {
					b.Fatal(col, msg)
				}
			})
		}},
		{"3-decode", func(b *testing.B) {
			lines(b, func(rd *Reader, line []byte) {
				if err := rd.decode(1, line, &s, false); err != nil {
					b.Fatal(err)
				}
			})
		}},
		{"4-rows", func(b *testing.B) {
			in, err := Open(bytes.NewReader(log), Options{Format: "combined"})
			if err != nil {
				b.Fatal(err)
			}
			for n := 0; ; n++ {
				_, _, _, _, err := in.Log().NextRow()
				if err == io.EOF {
					if n != nginxStagesRows {
						b.Fatalf("%d rows, not %d", n, nginxStagesRows)
					}
					return
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		}},
	} {
		b.Run("stage="+stage.name, func(b *testing.B) {
			cpu0 := processCPU()
			for range b.N {
				stage.run(b)
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(nginxStagesRows*b.N), "cpu-ns/row")
		})
	}
}

// processCPU is the process's user and system CPU time in ns.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
