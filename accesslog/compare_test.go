package accesslog

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The logged verdict: nginx's $limit_req_status where the format has it (PASSED and DELAYED
// admitted, REJECTED refused, a dry run as the limiter decided, "-" unlogged); else the
// statuses named by RefusedStatus; else unlogged.
func TestLoggedVerdict(t *testing.T) {
	log := "k1 1700000000.000 0.000 200 PASSED\n" +
		"k1 1700000000.001 0.000 200 DELAYED\n" +
		"k1 1700000000.002 0.000 503 REJECTED\n" +
		"k1 1700000000.003 0.000 200 REJECTED_DRY_RUN\n" +
		"k1 1700000000.004 0.000 200 DELAYED_DRY_RUN\n" +
		"k1 1700000000.005 0.000 200 -\n"
	in, err := Open(strings.NewReader(log), Options{Format: "nginx:$remote_addr $msec $request_time $status $limit_req_status", RefusedStatus: "200"})
	require.NoError(t, err)
	var got []string
	for range 6 {
		rec, err := in.Log().Next()
		require.NoError(t, err)
		got = append(got, rec.Logged.String())
	}
	// RefusedStatus does not override what nginx logged.
	require.Equal(t, []string{"admitted", "admitted", "refused", "refused", "admitted", "unlogged"}, got)

	verdicts := func(opt Options) []Verdict {
		in, err := Open(strings.NewReader(haproxyRaw), opt)
		require.NoError(t, err)
		var v []Verdict
		for range 2 {
			rec, err := in.Log().Next()
			require.NoError(t, err)
			v = append(v, rec.Logged)
		}
		return v
	}
	require.Equal(t, []Verdict{Unlogged, Unlogged}, verdicts(Options{}))
	require.Equal(t, []Verdict{Admitted, Refused}, verdicts(Options{RefusedStatus: "429"}))
	require.Equal(t, []Verdict{Admitted, Refused}, verdicts(Options{RefusedStatus: " 503, 429"}))
	require.Equal(t, []Verdict{Admitted, Admitted}, verdicts(Options{RefusedStatus: "503"}))

	for _, bad := range []string{"abc", "42", "429,", "600"} {
		require.ErrorContains(t, Options{RefusedStatus: bad}.Check(), "--refused-status "+bad+": ")
	}
	_, err = Open(strings.NewReader("t_ns\n0\n"), Options{RefusedStatus: "429"})
	require.ErrorContains(t, err, "--refused-status apply to access logs")
}

// Compare has the model decide every request, the unlogged too, and counts agreement over
// the logged ones: a confusion matrix and the first disagreements, by line.
func TestCompareCountsAgreement(t *testing.T) {
	log := "a 1700000000.000 0.000 PASSED\n" +
		"a 1700000000.010 0.000 PASSED\n" +
		"a 1700000000.020 0.000 REJECTED\n" +
		"b 1700000000.030 0.000 -\n" +
		"a 1700000000.040 0.000 REJECTED\n" +
		"b 1700000000.050 0.000 PASSED\n"
	in, err := Open(strings.NewReader(log), Options{Format: "nginx:$remote_addr $msec $request_time $limit_req_status"})
	require.NoError(t, err)
	var seen []string
	// A model that admits 2 per key: agrees on all of a's, refuses b's second (which nginx
	// passed); b's first is unlogged but still counts toward b's 2.
	count := map[string]int{}
	cmp, err := Compare(in.Log(), func(rec *Record) bool {
		seen = append(seen, string(rec.Key)+"@"+rec.At.String())
		count[string(rec.Key)]++
		return count[string(rec.Key)] <= 1 || string(rec.Key) == "a" && count["a"] <= 2
	})
	require.NoError(t, err)
	require.Equal(t, []string{"a@0s", "a@10ms", "a@20ms", "b@30ms", "a@40ms", "b@50ms"}, seen)
	require.Equal(t, int64(6), cmp.Requests)
	require.Equal(t, int64(1), cmp.Unlogged)
	require.Equal(t, [2][2]int64{{2, 1}, {0, 2}}, cmp.Matrix)
	require.Equal(t, int64(4), cmp.Agreed())
	require.Equal(t, []Disagreement{{Line: 6, At: 50 * time.Millisecond, Key: "b", Logged: Admitted}}, cmp.Disagreements)
	require.Equal(t, "agreed on 4 of 5 logged decisions (80.0%): production admitted 3 (model refused 1 of them), refused 2 (model admitted 0); 1 logged no decision (decided by the model, not compared)", cmp.String())
}
