package httplimit

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/headers"
	"github.com/ratelab/ratelab/limiters"
)

type arrival struct {
	at  time.Duration
	key string
}

// schedule is 300 requests from 3 clients, gaps of 0 to 150ms (seeded).
func schedule(seed uint64) []arrival {
	rng := rand.New(rand.NewPCG(seed, 0))
	var out []arrival
	var at time.Duration
	for range 300 {
		if rng.IntN(3) > 0 {
			at += time.Duration(rng.Int64N(int64(150 * time.Millisecond)))
		}
		out = append(out, arrival{at, fmt.Sprintf("client-%d", rng.IntN(3))})
	}
	return out
}

// replayed is what ratelab's replay (the simulator's open-loop lane) decides for the
// schedule: 1 admitted, 0 refused, per request.
func replayed(t *testing.T, spec string, arrivals []arrival) []bool {
	t.Helper()
	var trace bytes.Buffer
	trace.WriteString("t_ns,permits,key\n")
	for _, a := range arrivals {
		fmt.Fprintf(&trace, "%d,1,%s\n", a.at, a.key)
	}
	specs, err := engine.ParseStack(spec)
	require.NoError(t, err)
	var out bytes.Buffer
	_, err = engine.Replay(&trace, &out, [][]limiters.Spec{specs})
	require.NoError(t, err)
	rows, err := csv.NewReader(&out).ReadAll()
	require.NoError(t, err)
	var admitted []bool
	for _, row := range rows[1:] {
		admitted = append(admitted, row[2] == "1")
	}
	require.Len(t, admitted, len(arrivals))
	return admitted
}

// simulatedFields are the header fields the simulated lane's stack says for each request:
// its own stack, on its own virtual clock, read by package headers.
func simulatedFields(t *testing.T, spec string, arrivals []arrival) []headers.Fields {
	t.Helper()
	specs, err := engine.ParseStack(spec)
	require.NoError(t, err)
	clock := &virtual{}
	stack, err := engine.NewStack(specs, clock)
	require.NoError(t, err)
	policies := headers.Policies(specs)
	stack.SetWaits(specs, 0) // a stage whose callers wait (NGINX's delay) reserves, as in the simulator
	var out []headers.Fields
	for _, a := range arrivals {
		clock.set(a.at)
		d, stage, _ := stack.Decide(a.at, a.key, 1)
		// The answer is read while the admitted request holds its permits (a bulkhead's), as
		// a server sends its headers before the handler's work ends.
		ans := headers.AnswerOf(stack.Stages(), policies, a.at, 1, d, stage, a.key, nil)
		out = append(out, ans.Fields(policies, headers.AllFields, time.Unix(0, 0)))
		if d == limiters.Admitted {
			stack.BindHeld(a.key)
			stack.Complete(a.at, 1, 0, true)
		}
	}
	return out
}

type virtual struct{ now atomic.Int64 }

func (v *virtual) Now() time.Duration   { return time.Duration(v.now.Load()) }
func (v *virtual) set(at time.Duration) { v.now.Store(int64(at)) }

var roundTripSpecs = []string{
	"token-bucket:capacity=5,rate=10/1s",
	"keys(max=100):token-bucket:capacity=3,rate=2/1s+fixed-window:limit=12,window=1s",
	"sliding-window:limit=8,window=2s,slots=4",
	"keys(max=1000,evict=nginx):nginx:rate=5r/s,burst=3",
	"keys(max=2,evict=lru):leaky-bucket:rate=4/1s",
	"fixed-window:limit=6,window=1s+concurrency:max=2",
	"x-time-rate:rate=5/1s,burst=4",
	"guava-bursty:rate=4/1s",
}

// A real net/http server on loopback running the middleware on a virtual clock, sent the
// same 300 requests at the same instants, makes the decisions ratelab's replay makes and
// sends the headers the simulated stack says, request for request, for each spec; every
// refusal is a 429 with an RFC 9457 problem body.
func TestRoundTrip(t *testing.T) {
	arrivals := schedule(7)
	for _, spec := range roundTripSpecs {
		t.Run(spec, func(t *testing.T) {
			want := replayed(t, spec, arrivals)
			wantFields := simulatedFields(t, spec, arrivals)
			clock := &virtual{}
			waits := 0
			mw, err := New(spec, Options{Now: clock.Now, Key: HeaderKey("X-Client"), Wall: func() time.Time { return time.Unix(0, 0) },
				Sleep: func(context.Context, time.Duration) error { waits++; return nil }}) // virtual time: a wait takes none
			require.NoError(t, err)
			srv := httptest.NewServer(mw.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.WriteString(w, "ok\n")
			})))
			t.Cleanup(srv.Close)
			admitted := 0
			for i, a := range arrivals {
				clock.set(a.at)
				req, err := http.NewRequest(http.MethodGet, srv.URL+"/api", nil)
				require.NoError(t, err)
				req.Header.Set("X-Client", a.key)
				resp, err := srv.Client().Do(req)
				require.NoError(t, err)
				body, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				resp.Body.Close()
				got := resp.StatusCode == http.StatusOK
				require.Equal(t, want[i], got, "request %d (%s at %s): the server answered %d, replay %v", i+1, a.key, a.at, resp.StatusCode, want[i])
				if got {
					admitted++
				} else {
					require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
					require.Equal(t, "application/problem+json", resp.Header.Get("Content-Type"))
					var p struct {
						Type   string `json:"type"`
						Status int    `json:"status"`
						Detail string `json:"detail"`
					}
					require.NoError(t, json.Unmarshal(body, &p), "%s", body)
					assert.Equal(t, QuotaExceeded, p.Type)
					assert.Equal(t, 429, p.Status)
				}
				w := wantFields[i]
				for name, value := range map[string]string{
					"RateLimit-Policy": w.RateLimitPolicy, "RateLimit": w.RateLimit, "X-RateLimit-Limit": w.XRateLimitLimit,
					"X-RateLimit-Remaining": w.XRateLimitRemaining, "X-RateLimit-Reset": w.XRateLimitReset, "Retry-After": w.RetryAfter,
				} {
					require.Equal(t, value, resp.Header.Get(name), "request %d (%s at %s): %s", i+1, a.key, a.at, name)
				}
			}
			t.Logf("%s: %d of %d admitted (%d after a wait), same decisions and headers as the simulation", spec, admitted, len(arrivals), waits)
			assert.Greater(t, admitted, 0)
			assert.Less(t, admitted, len(arrivals), "the schedule must make the limit refuse")
		})
	}
}

// A short wall-clock run: a real go-retryablehttp client (its default backoff honours
// Retry-After on a 429) makes 8 calls in a row against a fixed window of 3 per second on the
// real monotonic clock. Every call succeeds in the end; the server refused exactly one
// attempt per window it overflowed, each with Retry-After: 1, and the server's decisions are
// the ones ratelab's replay makes at the instants the server read (its clock is the real
// one, so this compares the decision logic, with no tolerance needed).
func TestWallClockWithRetryablehttp(t *testing.T) {
	const spec = "fixed-window:limit=3,window=1s"
	clock := limiters.NewMonotonicClock()
	var mu sync.Mutex
	var seen []arrival
	var refusals []string
	mw, err := New(spec, Options{Now: clock.Now, Key: func(*http.Request) string { return "c" },
		OnDecision: func(_ *http.Request, now time.Duration, _ Result) {
			mu.Lock()
			seen = append(seen, arrival{now, "c"})
			mu.Unlock()
		}})
	require.NoError(t, err)
	srv := httptest.NewServer(mw.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})))
	t.Cleanup(srv.Close)
	var statuses []int
	client := retryablehttp.NewClient()
	client.Logger = nil
	client.RetryMax = 3
	client.HTTPClient = srv.Client()
	client.ResponseLogHook = func(_ retryablehttp.Logger, resp *http.Response) {
		statuses = append(statuses, resp.StatusCode)
		if resp.StatusCode == http.StatusTooManyRequests {
			refusals = append(refusals, resp.Header.Get("Retry-After"))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	for i := range 8 {
		req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		require.NoError(t, err)
		resp, err := client.Do(req)
		require.NoError(t, err, "call %d", i+1)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "call %d", i+1)
	}
	elapsed := time.Since(start)
	require.NotEmpty(t, refusals, "8 calls against 3 per second must meet a refusal")
	for _, ra := range refusals {
		assert.Equal(t, "1", ra, "a fixed window of 1s never asks for more than 1s")
	}
	// Every refusal is the first call over its window's limit, and the client waited for the
	// next window: 8 calls take at least 2 windows past the first.
	assert.GreaterOrEqual(t, elapsed, time.Second, "the client waited out at least one Retry-After")
	want := replayed(t, spec, seen)
	var got []bool
	for _, s := range statuses {
		got = append(got, s == http.StatusOK)
	}
	require.Equal(t, want, got, "the server's decisions at the instants it read are replay's")
	t.Logf("8 calls, %d attempts, %d refused (Retry-After %v), %s", len(statuses), len(refusals), refusals, elapsed.Round(time.Millisecond))
}

// Shaping: with MaxWait a request over the limit waits for its permits instead of being
// refused, for the time the stack says; a request whose context ends during the wait is
// answered 503. Token bucket of 1 at 10/s, MaxWait 250ms, 4 requests at 0: waits 0, 100ms,
// 200ms, then a refusal.
func TestShaping(t *testing.T) {
	clock := &virtual{}
	var slept []time.Duration
	failNext := false
	mw, err := New("token-bucket:capacity=1,rate=10/1s", Options{Now: clock.Now, MaxWait: 250 * time.Millisecond,
		Sleep: func(ctx context.Context, d time.Duration) error {
			slept = append(slept, d)
			if failNext {
				return context.Canceled
			}
			return nil
		}})
	require.NoError(t, err)
	h := mw.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	var codes []int
	for range 4 {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		codes = append(codes, rec.Code)
	}
	assert.Equal(t, []int{200, 200, 200, 429}, codes)
	assert.Equal(t, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, slept)
	clock.set(time.Second)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil)) // the bucket's debt has cleared: no wait
	assert.Equal(t, 200, rec.Code)
	failNext = true
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code, "the request ended during its wait")
	assert.Contains(t, rec.Body.String(), "context canceled")

	_, err = New("fixed-window:limit=1,window=1s", Options{MaxWait: time.Second})
	require.Error(t, err, "a fixed window cannot reserve")
	assert.Contains(t, err.Error(), "reserve")
}

// Real goroutines under -race: 8 callers × 100 requests through one middleware on the real
// clock. A token bucket of 50 that refills once an hour admits exactly 50 whatever the
// interleaving; a bulkhead of 2 in front of a handler that takes a while never has more than
// 2 handlers running, and every request is answered 200 or 429. (Together in one stack, the
// bulkhead's refusals refund the bucket, so how many of its 50 are spent when the 800 requests
// run out depends on the interleaving: the two claims are tested apart.)
func TestConcurrentCallers(t *testing.T) {
	hammer := func(h http.Handler) (ok, refused int64) {
		var nOK, nRefused atomic.Int64
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range 100 {
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
					switch rec.Code {
					case 200:
						nOK.Add(1)
					case 429:
						nRefused.Add(1)
					}
				}
			})
		}
		wg.Wait()
		return nOK.Load(), nRefused.Load()
	}
	bucket, err := New("token-bucket:capacity=50,rate=1/1h", Options{})
	require.NoError(t, err)
	ok, refused := hammer(bucket.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})))
	assert.Equal(t, int64(50), ok)
	assert.Equal(t, int64(750), refused)

	bulkhead, err := New("concurrency:max=2", Options{})
	require.NoError(t, err)
	var running, most atomic.Int64
	ok, refused = hammer(bulkhead.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := running.Add(1)
		for {
			m := most.Load()
			if n <= m || most.CompareAndSwap(m, n) {
				break
			}
		}
		time.Sleep(50 * time.Microsecond)
		running.Add(-1)
	})))
	assert.LessOrEqual(t, most.Load(), int64(2))
	assert.Equal(t, int64(800), ok+refused)
	assert.Positive(t, ok)
}

// Keys: the remote address without its port; a header, falling back to the address; the
// address trusted proxies recorded in X-Forwarded-For, never one the client wrote.
func TestKeys(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "192.0.2.7:51234"
	assert.Equal(t, "192.0.2.7", RemoteAddrKey(r))
	assert.Equal(t, "192.0.2.7", HeaderKey("X-Api-Key")(r))
	r.Header.Set("X-Api-Key", "k1")
	assert.Equal(t, "k1", HeaderKey("X-Api-Key")(r))
	r.Header.Add("X-Forwarded-For", "6.6.6.6, 203.0.113.9")
	r.Header.Add("X-Forwarded-For", "10.0.0.2")
	assert.Equal(t, "10.0.0.2", ForwardedForKey(1)(r))
	assert.Equal(t, "203.0.113.9", ForwardedForKey(2)(r))
	assert.Equal(t, "192.0.2.7", ForwardedForKey(4)(r), "fewer hops than trusted proxies: the peer")
}

// Bad specs are refused with the parser's reason, keyed and stacked ones read as the CLI
// reads them.
func TestNewRefusesBadSpecs(t *testing.T) {
	for spec, want := range map[string]string{
		"token-bucket:capacity=0,rate=1/1s":  "capacity",
		"keys(max=10):tokn-bucket:rate=1/1s": "token-bucket",
		"":                                   "empty",
		"token-bucket:capacity=1,rate=1/1s+": "stack",
	} {
		_, err := New(spec, Options{})
		require.Error(t, err, spec)
		assert.Contains(t, err.Error(), want, spec)
	}
	_, err := New("token-bucket:capacity=1,rate=1/1s", Options{MaxWait: -1})
	require.Error(t, err)
	mw, err := New("keys(max=5):token-bucket:capacity=1,rate=1/1s", Options{})
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(mw.String(), "keys(max=5,evict=lru):"), mw.String())
	assert.False(t, errors.Is(err, context.Canceled))
}
