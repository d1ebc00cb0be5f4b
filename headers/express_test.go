package headers_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/headers"
	"github.com/ratelab/ratelab/limiters"
)

// expressDriver installs the pinned express-rate-limit (testdata/express, npm ci) into a cache
// directory keyed by its lock file, and returns the directory holding driver.js and its
// node_modules. Without node and npm the test skips, except in CI, where it fails.
func expressDriver(t *testing.T) (dir, node string) {
	t.Helper()
	node, errNode := exec.LookPath("node")
	npm, errNpm := exec.LookPath("npm")
	if errNode != nil || errNpm != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node and npm are not installed: .ci/run installs Debian's nodejs and npm")
		}
		t.Skip("node or npm not installed")
	}
	lock, err := os.ReadFile("testdata/express/package-lock.json")
	require.NoError(t, err)
	sum := sha256.Sum256(lock)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir = filepath.Join(cache, "ratelab", "express-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "express-rate-limit", "package.json")); err != nil {
		tmp, err := os.MkdirTemp(filepath.Dir(dir), "express-install-")
		if err != nil {
			require.NoError(t, os.MkdirAll(filepath.Dir(dir), 0o755))
			tmp, err = os.MkdirTemp(filepath.Dir(dir), "express-install-")
		}
		require.NoError(t, err)
		defer os.RemoveAll(tmp)
		for _, f := range []string{"package.json", "package-lock.json"} {
			b, err := os.ReadFile(filepath.Join("testdata/express", f))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(tmp, f), b, 0o644))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "ci", "--legacy-peer-deps", "--no-audit", "--no-fund", "--ignore-scripts")
		cmd.Dir = tmp
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "npm ci: %s", out)
		_ = os.RemoveAll(dir)
		if err := os.Rename(tmp, dir); err != nil && !os.IsExist(err) {
			require.DirExists(t, dir, "installing express-rate-limit: %v", err)
		}
	}
	driver, err := os.ReadFile("testdata/express/driver.js")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "driver.js"), driver, 0o644))
	return dir, node
}

type expressRequest struct {
	TMs int64  `json:"t_ms"`
	Key string `json:"key"`
}

type expressAnswer struct {
	Draft   string            `json:"draft"`
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
}

// expressSchedule is requests from 4 clients over 6 windows of w, each client's first
// request in a window at the window's start (where express-rate-limit's MemoryStore, which
// starts a client's window at its first hit, and ratelab's aligned fixed window agree), the
// rest at whole milliseconds inside it.
func expressSchedule(w time.Duration, seed uint64) []expressRequest {
	rng := rand.New(rand.NewPCG(seed, 0))
	var reqs []expressRequest
	wms := w.Milliseconds()
	for k := range int64(6) {
		for c := range 4 {
			if rng.IntN(5) == 0 {
				continue // this client skips the window
			}
			key := "client-" + strconv.Itoa(c)
			reqs = append(reqs, expressRequest{k * wms, key})
			for range rng.IntN(6) {
				reqs = append(reqs, expressRequest{k*wms + 1 + rng.Int64N(wms-1), key})
			}
		}
	}
	slices.SortStableFunc(reqs, func(a, b expressRequest) int { return int(a.TMs - b.TMs) })
	return reqs
}

// What express-rate-limit 7.5.1 (npm, its real middleware and MemoryStore, on a virtual
// Date.now) sends for a limit of 3 per 10s, and what package headers says for ratelab's
// keyed fixed window of the same limit, agree field by field on 6 windows of 4 clients:
// the status, RateLimit-Policy's q and w, RateLimit's r and t (draft-8, parsed as structured
// fields from both), a partition key in both, X-RateLimit-Limit, -Remaining and -Reset (an
// epoch), and Retry-After. The policy names differ by design (express: its identifier;
// ratelab: the kind), and so do the partition keys' contents (a hash of the key; the key);
// express leaves pk off RateLimit, where the draft defines it too.
func TestHeadersAgreeWithExpressRateLimit(t *testing.T) {
	dir, node := expressDriver(t)
	const limit, window = 3, 10 * time.Second
	reqs := expressSchedule(window, 3)
	input, err := json.Marshal(map[string]any{"limit": limit, "windowMs": window.Milliseconds(), "drafts": []string{"draft-8"}, "requests": reqs})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "driver.js")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(input)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "node driver.js: %s", stderr.String())
	var theirs []expressAnswer
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var a expressAnswer
		require.NoError(t, json.Unmarshal(sc.Bytes(), &a), "%s", sc.Text())
		theirs = append(theirs, a)
	}
	require.Len(t, theirs, len(reqs))

	specs, err := engine.ParseStack("keys(max=100):fixed-window:limit=3,window=10s")
	require.NoError(t, err)
	clock := &fixed{}
	stack, err := engine.NewStack(specs, clock)
	require.NoError(t, err)
	policies := headers.Policies(specs)
	refused := 0
	for i, q := range reqs {
		at := time.Duration(q.TMs) * time.Millisecond
		clock.now = at
		d, stage, _ := stack.Decide(at, q.Key, 1)
		ours := headers.AnswerOf(stack.Stages(), policies, at, 1, d, stage, q.Key, nil).
			Fields(policies, headers.Style{Draft: true, X: true, RetryAfter: true, ResetEpoch: true}, time.Unix(0, int64(at)))
		th := theirs[i]
		where := "request " + strconv.Itoa(i+1) + " (" + q.Key + " at " + limiters.FormatDuration(at) + ")"
		wantStatus := 200
		if d != limiters.Admitted {
			wantStatus = 429
			refused++
		}
		require.Equal(t, th.Status, wantStatus, "%s: the decision", where)
		assert.Equal(t, th.Headers["x-ratelimit-limit"], ours.XRateLimitLimit, where)
		assert.Equal(t, th.Headers["x-ratelimit-remaining"], ours.XRateLimitRemaining, where)
		assert.Equal(t, th.Headers["x-ratelimit-reset"], ours.XRateLimitReset, where)
		assert.Equal(t, th.Headers["retry-after"], ours.RetryAfter, where)
		for j, field := range [][2]string{{th.Headers["ratelimit-policy"], ours.RateLimitPolicy}, {th.Headers["ratelimit"], ours.RateLimit}} {
			a, err := httpsfv.UnmarshalList([]string{field[0]})
			require.NoError(t, err, "%s: express's %q", where, field[0])
			b, err := httpsfv.UnmarshalList([]string{field[1]})
			require.NoError(t, err, "%s: ours %q", where, field[1])
			require.Len(t, a, 1)
			require.Len(t, b, 1)
			pa, pb := a[0].(httpsfv.Item).Params, b[0].(httpsfv.Item).Params
			assert.Equal(t, paramNames(pa), paramNames(pb), "%s: the same parameters (pk aside) in %q and %q", where, field[0], field[1])
			if j == 0 { // RateLimit-Policy: both partition by key
				_, oka := pa.Get("pk")
				_, okb := pb.Get("pk")
				assert.True(t, oka && okb, "%s: a partition key in %q and %q", where, field[0], field[1])
			}
			for _, name := range []string{"q", "w", "r", "t"} {
				va, oka := pa.Get(name)
				vb, okb := pb.Get(name)
				assert.Equal(t, oka, okb, "%s: %s in %q and %q", where, name, field[0], field[1])
				assert.Equal(t, va, vb, "%s: %s in %q and %q", where, name, field[0], field[1])
			}
		}
	}
	assert.Greater(t, refused, 5, "the schedule must make both refuse")
	t.Logf("%d requests, %d refused: every field agrees with express-rate-limit 7.5.1", len(reqs), refused)
}

// paramNames are p's parameter names but pk, sorted: the draft defines pk on both fields;
// express-rate-limit sends it on RateLimit-Policy only, ratelab on both.
func paramNames(p *httpsfv.Params) []string {
	names := slices.DeleteFunc(slices.Clone(p.Names()), func(n string) bool { return n == "pk" })
	slices.Sort(names)
	return names
}
