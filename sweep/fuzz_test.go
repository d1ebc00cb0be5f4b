package sweep

import (
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzMergeCSV merges two arbitrary shards. It must never panic or emit a row after a
// refusal; a refusal names the shard (a.csv or b.csv) or says it is the merge's own, and is
// one line of valid UTF-8 text (it is printed to a terminal). Seeds: two real shards of a
// synthetic sweep, hostile edits of them (a changed value, a NUL, a shell line, a cell given
// twice), in testdata/fuzz/FuzzMergeCSV; go test runs them, scripts/fuzz.sh fuzzes.
func FuzzMergeCSV(f *testing.F) {
	shard := func(i, k, n int) string {
		b, err := io.ReadAll(newShardGen(i, k, n))
		if err != nil {
			f.Fatal(err)
		}
		return string(b)
	}
	a, b := shard(0, 2, 6), shard(1, 2, 6)
	f.Add(a, b)
	f.Add(a, a)
	f.Add(a, "")
	f.Add(strings.Replace(a, "capacity=3", "capacity=999", 1), b)
	f.Add(strings.Replace(a, ",3,", ",NaN,", 1), b)
	f.Add(strings.Replace(a, "synthetic", "synth\x00etic", 1), b)
	f.Add(a, strings.Replace(b, "token-bucket:capacity=2", "$(rm -rf ~)", 1))
	f.Add(a+"\n"+strings.SplitN(b, "\n", 3)[1], b)
	f.Fuzz(func(t *testing.T, a, b string) {
		refused := false
		err := MergeCSV([]*CSVReader{NewCSVReader(strings.NewReader(a), "a.csv"), NewCSVReader(strings.NewReader(b), "b.csv")},
			func(Row) error {
				if refused {
					t.Fatal("a row emitted after a refusal")
				}
				return nil
			})
		if err == nil {
			return
		}
		refused = true
		msg := err.Error()
		if !strings.Contains(msg, "a.csv") && !strings.Contains(msg, "b.csv") && !strings.HasPrefix(msg, "sweep merge") {
			t.Fatalf("a refusal that names neither shard: %q", msg)
		}
		if !utf8.ValidString(msg) || strings.ContainsAny(msg, "\n\r\x00\x1b") {
			t.Fatalf("a refusal that is not one clean line: %q", msg)
		}
	})
}
