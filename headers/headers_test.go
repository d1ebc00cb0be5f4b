package headers_test

import (
	"testing"
	"time"

	"github.com/dunglas/httpsfv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/headers"
	"github.com/ratelab/ratelab/limiters"
)

type request struct {
	at  time.Duration
	key string
	n   int
}

// decide runs reqs through a stack of spec and returns each answer's fields.
func decide(t *testing.T, spec string, reqs []request) []headers.Fields {
	t.Helper()
	specs, err := engine.ParseStack(spec)
	require.NoError(t, err)
	clock := &fixed{}
	stack, err := engine.NewStack(specs, clock)
	require.NoError(t, err)
	policies := headers.Policies(specs)
	var out []headers.Fields
	for _, q := range reqs {
		clock.now = q.at
		d, stage, _ := stack.Decide(q.at, q.key, q.n)
		a := headers.AnswerOf(stack.Stages(), policies, q.at, q.n, d, stage, q.key, nil)
		out = append(out, a.Fields(policies, headers.AllFields, time.Unix(1_700_000_000, 500)))
	}
	return out
}

type fixed struct{ now time.Duration }

func (f *fixed) Now() time.Duration { return f.now }

func at(d time.Duration, n int) request { return request{at: d, n: n, key: "10.0.0.1"} }

// The package doc's example: a token bucket of 10 at 100/s, 4 permits at once, then 7 more.
func TestTokenBucketFields(t *testing.T) {
	f := decide(t, "token-bucket:capacity=10,rate=100/1s", []request{at(0, 4), at(0, 7), at(15*time.Millisecond, 1)})
	assert.Equal(t, headers.Fields{
		RateLimitPolicy: `"token-bucket";q=100;w=1`, RateLimit: `"token-bucket";r=6;t=1`,
		XRateLimitLimit: "100", XRateLimitRemaining: "6", XRateLimitReset: "1",
	}, f[0])
	// 7 > 6: refused; the 7th permit is due 10ms later, which Retry-After rounds up to 1s.
	assert.Equal(t, "1", f[1].RetryAfter)
	assert.Equal(t, `"token-bucket";r=6;t=1`, f[1].RateLimit)
	assert.Equal(t, `"token-bucket";r=6;t=1`, f[2].RateLimit, "1 back after 15ms (1.5 refilled), 1 taken")
}

// headers.Seconds round up, and Retry-After is never 0.
func TestSecondsRoundUp(t *testing.T) {
	for d, want := range map[time.Duration]int64{0: 0, 1: 1, time.Second: 1, time.Second + 1: 2, 7 * time.Second: 7, -time.Second: 0} {
		assert.Equal(t, want, headers.Seconds(d), "%s", d)
	}
	assert.Equal(t, int64(1), headers.RetryAfterSeconds(0))
	assert.Equal(t, int64(1), headers.RetryAfterSeconds(time.Nanosecond))
	assert.Equal(t, int64(3), headers.RetryAfterSeconds(2*time.Second+1))
}

// A fixed window of 5 per 7s, 5 at 1s and a 6th at 2s: refused until the boundary at 7s,
// 5s later; the window's reset is the same boundary. X-RateLimit-Reset as an epoch is the
// decision's wall time (rounded up) plus those seconds.
func TestFixedWindowResetAndEpoch(t *testing.T) {
	f := decide(t, "fixed-window:limit=5,window=7s", []request{at(time.Second, 5), at(2*time.Second, 1)})
	assert.Equal(t, `"fixed-window";q=5;w=7`, f[1].RateLimitPolicy)
	assert.Equal(t, `"fixed-window";r=0;t=5`, f[1].RateLimit)
	assert.Equal(t, "5", f[1].RetryAfter)
	specs, err := engine.ParseStack("fixed-window:limit=5,window=7s")
	require.NoError(t, err)
	lim, err := specs[0].New(&fixed{})
	require.NoError(t, err)
	lim.AcquireAt(time.Second, 5)
	pol := headers.Policies(specs)
	a := headers.AnswerOf([]limiters.Limiter{lim}, pol, 2*time.Second, 1, limiters.Rejected, 0, "", nil)
	epoch := a.Fields(pol, headers.Style{X: true, ResetEpoch: true}, time.Unix(1_700_000_000, 1))
	assert.Equal(t, "1700000006", epoch.XRateLimitReset, "1,700,000,000.000000001 rounds up to …001, plus 5s")
	assert.Empty(t, epoch.RateLimit, "only the X- fields were asked for")
}

// A stack answers per stage; the refusing stage speaks for the X- fields and Retry-After; a
// bulkhead says concurrent-requests and no t; a keyed stage carries pk.
func TestStackKeyedAndBulkhead(t *testing.T) {
	f := decide(t, "keys(max=100):token-bucket:capacity=2,rate=1/1s+concurrency:max=3+token-bucket:capacity=50,rate=50/1s",
		[]request{{0, "alice", 1}, {0, "alice", 1}, {0, "alice", 1}, {0, "bob", 1}})
	pk := ";pk=:" + "YWxpY2U=" + ":" // base64("alice")
	assert.Equal(t, `"token-bucket";q=2;w=2`+pk+`, "concurrency";q=3;qu="concurrent-requests", "token-bucket-2";q=50;w=1`,
		f[0].RateLimitPolicy)
	assert.Equal(t, `"token-bucket";r=1;t=1`+pk+`, "concurrency";r=2, "token-bucket-2";r=49;t=1`, f[0].RateLimit)
	assert.Equal(t, "1", f[0].XRateLimitRemaining, "the fewest left: alice's bucket")
	// alice's third: her bucket refuses (the bulkhead holds 2, the shared bucket 48).
	assert.Equal(t, `"token-bucket";r=0;t=2`+pk+`, "concurrency";r=1, "token-bucket-2";r=48;t=1`, f[2].RateLimit)
	assert.Equal(t, "2", f[2].XRateLimitLimit)
	assert.Equal(t, "1", f[2].RetryAfter)
	// bob's first: the bulkhead has 1 left, the fewest.
	assert.Equal(t, "3", f[3].XRateLimitLimit)
	assert.Equal(t, "0", f[3].XRateLimitRemaining)
	assert.Empty(t, f[3].XRateLimitReset, "a bulkhead cannot say when")
}

// Every field parses as the structured field the draft defines, for every kind's example
// and stacks: RateLimit-Policy and RateLimit are Lists of Strings with the draft's
// parameters, q and r non-negative Integers, w and t Integers, qu a String, pk a Byte
// Sequence; and RateLimit names the same policies in the same order.
func TestFieldsParseAsStructuredFields(t *testing.T) {
	var specs []string
	for _, k := range limiters.Kinds() {
		specs = append(specs, k.Example, "keys(max=10):"+k.Example)
	}
	specs = append(specs, "token-bucket:capacity=3,rate=1/7s+fixed-window:limit=2,window=1s+concurrency:max=2")
	reqs := []request{at(0, 1), at(0, 2), at(0, 1), at(3*time.Millisecond, 1), at(time.Second, 1), {time.Second, `we"ird\key`, 1}}
	for _, spec := range specs {
		for i, f := range decide(t, spec, reqs) {
			pol, err := httpsfv.UnmarshalList([]string{f.RateLimitPolicy})
			require.NoError(t, err, "%s #%d: RateLimit-Policy %q", spec, i, f.RateLimitPolicy)
			rl, err := httpsfv.UnmarshalList([]string{f.RateLimit})
			require.NoError(t, err, "%s #%d: RateLimit %q", spec, i, f.RateLimit)
			require.Len(t, rl, len(pol), spec)
			for j := range pol {
				p, r := pol[j].(httpsfv.Item), rl[j].(httpsfv.Item)
				assert.Equal(t, p.Value, r.Value, "%s: the same policy name in both fields", spec)
				require.IsType(t, "", p.Value)
				q, ok := p.Params.Get("q")
				require.True(t, ok, "%s: q is required", spec)
				assert.GreaterOrEqual(t, q.(int64), int64(1))
				if w, ok := p.Params.Get("w"); ok {
					assert.GreaterOrEqual(t, w.(int64), int64(1))
				} else {
					qu, ok := p.Params.Get("qu")
					require.True(t, ok, "%s: a policy without a window says what it counts", spec)
					assert.Equal(t, "concurrent-requests", qu)
				}
				rem, ok := r.Params.Get("r")
				require.True(t, ok)
				assert.GreaterOrEqual(t, rem.(int64), int64(0))
				if tv, ok := r.Params.Get("t"); ok {
					assert.GreaterOrEqual(t, tv.(int64), int64(0))
				}
				if pk, ok := p.Params.Get("pk"); ok {
					assert.Equal(t, []byte(reqs[i].key), pk.([]byte))
				}
			}
		}
	}
}
