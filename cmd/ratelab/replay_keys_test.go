package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// replay takes keys(…) stages as run does: each row is decided by its key's own limiter. Two
// clients, a and b, 3 requests each at 0-5ns against a bucket of 2 per key: each key gets
// 2, so the keyed lane admits 4 where the global bucket of 2 admits 2; evict=nginx and a
// stack of a keyed stage and a global one parse too.
func TestReplayTakesKeyedStages(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keyed.csv")
	require.NoError(t, os.WriteFile(path, []byte("t_ns,permits,key\n0,1,a\n1,1,b\n2,1,a\n3,1,b\n4,1,a\n5,1,b\n"), 0o644))
	out, stderr, err := ratelab(t, "replay", "--in", path,
		"--limiter", "keys(max=100,evict=lru):token-bucket:capacity=2,rate=1/1s",
		"--limiter", "token-bucket:capacity=2,rate=1/1s",
		"--limiter", "keys(max=100,evict=nginx):nginx:rate=1r/s,burst=1,delay=nodelay",
		"--limiter", "keys(max=100):token-bucket:capacity=2,rate=1/1s+token-bucket:capacity=3,rate=1/1s")
	require.NoError(t, err)
	assert.Equal(t, `t_ns,permits,"keys(max=100,evict=lru):token-bucket:capacity=2,rate=1/1s","token-bucket:capacity=2,rate=1/1s","keys(max=100,evict=nginx):nginx:rate=1r/s,burst=1,delay=nodelay","keys(max=100,evict=lru):token-bucket:capacity=2,rate=1/1s+token-bucket:capacity=3,rate=1/1s"
0,1,1,1,1,1
1,1,1,1,1,1
2,1,1,0,1,1
3,1,1,0,1,0
4,1,0,0,0,0
5,1,0,0,0,0
`, out)
	assert.Contains(t, stderr, "admitted 4 (66.7%)")

	// A keyed stage over a trace without keys would be a global limit: refused, saying why.
	_, _, err = run2(t, "t_ns,permits\n0,1\n", "replay", "--in", "-", "--limiter", "keys(max=10):token-bucket:capacity=1,rate=1/1s")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "standard input: line 1: the header has no key column, and keys(max=10,evict=lru):token-bucket:capacity=1,rate=1/1s decides by each row's key")
	// A keys(…) stage is in-process: not in Redis, and not in a lane with a redis/ stage.
	for _, c := range []struct{ spec, want string }{
		{"redis/keys(max=10):token-bucket:capacity=1,rate=1/1s", "a keys(…) stage cannot run in Redis"},
		{"keys(max=10):token-bucket:capacity=1,rate=1/1s+redis/token-bucket:capacity=9,rate=1/1s", "a keys(…) stage and a redis/ stage cannot share a lane"},
		{"keys(max=0):token-bucket:capacity=1,rate=1/1s", "max"},
	} {
		_, _, err = ratelab(t, "replay", "--in", path, "--redis", "127.0.0.1:1", "--limiter", c.spec)
		require.Error(t, err, c.spec)
		assert.Contains(t, err.Error(), c.want)
		assert.True(t, isUsage(err), c.spec)
	}
}

// run2 runs ratelab with stdin.
func run2(t *testing.T, stdin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), err
}
