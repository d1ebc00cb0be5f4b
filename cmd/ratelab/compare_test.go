package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// replay --compare decides an nginx log's requests with each --limiter and counts where it
// agrees with the $limit_req_status nginx logged: the nginx kind at the zone's settings
// agrees on all but the one line written to disagree (a PASSED where 3 requests in 2ms
// leave no room), which it names by line; a log that records no decision is refused with
// what to log.
func TestReplayCompare(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "access.log")
	require.NoError(t, os.WriteFile(log, []byte(`10.0.0.1 1700000000.000 PASSED
10.0.0.1 1700000000.001 PASSED
10.0.0.1 1700000000.002 PASSED
10.0.0.1 1700000000.003 REJECTED
10.0.0.2 1700000000.004 PASSED
10.0.0.1 1700000000.200 PASSED
10.0.0.1 1700000000.201 PASSED
10.0.0.1 1700000000.202 PASSED
`), 0o644))
	format := "nginx:$remote_addr $msec $limit_req_status"
	out, _, err := ratelab(t, "replay", "--in", log, "--log-format", format, "--compare",
		"--limiter", "keys(max=100,evict=nginx):nginx:rate=10r/s,burst=2,delay=nodelay",
		"--limiter", "nginx:rate=10r/s,burst=2,delay=nodelay")
	require.NoError(t, err)
	parts := strings.Split(out, "\nnginx:rate=10r/s")
	require.Len(t, parts, 2, out)
	keyed, global := parts[0], parts[1]
	assert.Contains(t, keyed, "agreed on 7 of 8 logged decisions (87.5%): production admitted 7 (model refused 1 of them), refused 1 (model admitted 0)")
	assert.Contains(t, keyed, "line 8 at 202ms, key 10.0.0.1: production admitted, the model refused")
	assert.Contains(t, global, "model refused", "one zone for all: 10.0.0.2's request at 4ms finds it full")
	assert.Contains(t, global, "line 5 at 4ms, key 10.0.0.2: production admitted, the model refused")

	plain := filepath.Join(dir, "plain.log")
	require.NoError(t, os.WriteFile(plain, []byte("10.0.0.1 1700000000.000\n10.0.0.1 1700000000.001\n"), 0o644))
	_, _, err = ratelab(t, "replay", "--in", plain, "--log-format", "nginx:$remote_addr $msec", "--compare", "--limiter", "nginx:rate=10r/s")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no request's decision is logged")

	_, _, err = ratelab(t, "replay", "--in", log, "--log-format", format, "--compare", "--out", filepath.Join(dir, "x.csv"), "--limiter", "nginx:rate=10r/s")
	require.Error(t, err)
}
