//go:build unix

package redislimit

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/internal/redistest"
	"github.com/ratelab/ratelab/limiters"
)

// doubleGCRALua is the GCRA script written the obvious way, every time one Lua number: a
// deliberately broken variant. Above 2^53 ns (104 days) a double holds only multiples of
// 2, above 2^60 ns (36 years; the Unix epoch's ns are past it since 2006) multiples of 256,
// and near 2^62 multiples of 1024.
const doubleGCRALua = `
local now = tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]) or ARGV[1])
if tat < now then tat = now end
local back, room = tat - now, tonumber(ARGV[3])
if back > room then
  local w = back - room
  return {0, math.floor(w / 1000000000), w % 1000000000, 0, 0}
end
redis.call('SET', KEYS[1], string.format('%d', tat + tonumber(ARGV[2])))
return {1, 0, 0, 0, 0}
`

// TestRetryAtRetryAfterIsAdmitted: a client refused by a token bucket of 3/1s (T =
// 333,333,334ns, not a whole µs) that comes back exactly when RetryAfter said is admitted,
// 200 times over, at times from 0 to the Unix epoch's ns (1.75·10^18) and the last time ratelab
// accepts (2^62 ns). The same client against the one-double script is refused at some of them
// once times pass 2^53: the exact pairs are what make the difference.
func TestRetryAtRetryAfterIsAdmitted(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv, 1)
	ctx := context.Background()
	spec := limiters.TokenBucketSpec{Capacity: 3, Rate: limiters.PerSecond(3)}
	// refusedOnTime runs the retrying client from start and counts the retries refused.
	refusedOnTime := func(l *Limiter, start time.Duration) int {
		require.NoError(t, l.Reset(ctx))
		now, refused := start+7, 0 // an odd ns: no time below is a round number
		for range 200 {
			r, err := l.AcquireAt(ctx, now, 1)
			require.NoError(t, err)
			for r.Decision == limiters.Admitted { // drain the bucket
				r, err = l.AcquireAt(ctx, now, 1)
				require.NoError(t, err)
			}
			require.Positive(t, r.RetryAfter)
			now += r.RetryAfter
			if r, err = l.AcquireAt(ctx, now, 1); err != nil || r.Decision != limiters.Admitted {
				require.NoError(t, err)
				refused++
			}
		}
		return refused
	}
	starts := []time.Duration{0, 1 << 53, 1_751_712_345_678_901_234, 1<<62 - time.Hour}
	for _, start := range starts {
		l, err := New(c, "retry", spec, Options{Clock: CallerClock})
		require.NoError(t, err)
		require.Zero(t, refusedOnTime(l, start), "start %dns: a retry at RetryAfter passes", start)
	}

	brokenTotal := 0
	for _, start := range starts {
		l, err := New(c, "retry-broken", spec, Options{Clock: CallerClock})
		require.NoError(t, err)
		l.script = newScript(doubleGCRALua)
		l.prepare()
		broken := refusedOnTime(l, start)
		if start == 0 {
			require.Zero(t, broken, "below 2^53 doubles are exact: the broken script is right there")
		}
		t.Logf("one-double script from %dns: %d of 200 on-time retries refused", start, broken)
		brokenTotal += broken
	}
	require.Positive(t, brokenTotal, "the one-double script must be caught refusing on-time retries")
}
