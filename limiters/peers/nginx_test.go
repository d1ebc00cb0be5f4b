package peers

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ratelab/ratelab/limiters"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ngxReference is one key of ngx_http_limit_req_module in nginx's own terms and C types:
// ngx_uint_t excess and rate, ngx_msec_t last and now, the lookup that accounts a request and
// the delay the handler computes from it.
type ngxReference struct {
	rate, burst, delay uint64 // rate = r·1000/scale; burst, delay ·1000; nodelay: NGX_MAX_INT_T_VALUE/1000·1000
	node               bool
	excess             uint64
	last               uint64
}

func newNgxReference(requests, scale, burst, delay int64, nodelay bool) *ngxReference {
	r := &ngxReference{rate: uint64(requests * 1000 / scale), burst: uint64(burst * 1000), delay: uint64(delay * 1000)}
	if nodelay {
		r.delay = uint64((int64(^uint64(0)>>1) / 1000) * 1000)
	}
	return r
}

// request is one request at ngx_current_msec now: 503, or 200 after delay ms.
func (r *ngxReference) request(now uint64) (status int, delay uint64) {
	if !r.node { // a new node: excess 0, last now, and *ep = 0 passes
		r.node, r.excess, r.last = true, 0, now
		return 200, 0
	}
	ms := int64(now - r.last)
	if ms < -60000 {
		ms = 1
	} else if ms < 0 {
		ms = 0
	}
	excess := int64(r.excess - r.rate*uint64(ms)/1000 + 1000)
	if excess < 0 {
		excess = 0
	}
	if uint64(excess) > r.burst {
		return 503, 0
	}
	r.excess = uint64(excess)
	if ms != 0 {
		r.last = now
	}
	if uint64(excess) <= r.delay {
		return 200, 0
	}
	return 200, (uint64(excess) - r.delay) * 1000 / r.rate
}

// group is n requests in the same ms, all or nothing, by a caller who waits at most maxWait:
// the model's contract for a request of n permits.
func (r *ngxReference) group(now uint64, n int, maxWait time.Duration) (ok bool, wait time.Duration) {
	saved := *r
	var delay uint64
	for range n {
		status, d := r.request(now)
		if status != 200 {
			*r = saved
			return false, 0
		}
		delay = d
	}
	if wait = time.Duration(delay) * time.Millisecond; wait > maxWait {
		*r = saved
		return false, wait
	}
	return true, wait
}

var nginxCases = []struct {
	spec                          string
	requests, scale, burst, delay int64
	nodelay                       bool
}{
	{"nginx:rate=10r/s,burst=5,delay=2", 10, 1, 5, 2, false},
	{"nginx:rate=10r/s,burst=5,delay=nodelay", 10, 1, 5, 0, true},
	{"nginx:rate=10r/s,burst=5", 10, 1, 5, 0, false},
	{"nginx:rate=10r/s", 10, 1, 0, 0, false},
	{"nginx:rate=1r/m,burst=3", 1, 60, 3, 0, false},
	{"nginx:rate=7r/m,burst=2,delay=1", 7, 60, 2, 1, false},
	{"nginx:rate=2000r/s,burst=20,delay=3", 2000, 1, 20, 3, false},
	{"nginx:rate=3r/s,burst=4,delay=9", 3, 1, 4, 9, false},
}

// The model decides as nginx's lookup and delay on random traffic — bursts in one ms,
// requests a ms apart, idles, late readings (a few beyond 60s), requests of several permits —
// and holds each request exactly nginx's delay; callers that cannot wait (AcquireAt, or a
// maximum wait below nginx's delay) are refused and take nothing.
func TestNginxMatchesNginxsLookup(t *testing.T) {
	for _, tc := range nginxCases {
		t.Run(tc.spec, func(t *testing.T) {
			spec, err := limiters.ParseSpec(tc.spec)
			require.NoError(t, err)
			assert.Equal(t, tc.spec, spec.String())
			l, err := spec.New(zeroClock{})
			require.NoError(t, err)
			ng := l.(*Nginx)
			ref := newNgxReference(tc.requests, tc.scale, tc.burst, tc.delay, tc.nodelay)
			callerWait := spec.(limiters.Waiting).CallerWait()
			interval := time.Duration(1e12 / int64(ref.rate)) // 1000/R s
			rng := rand.New(rand.NewPCG(7, uint64(tc.requests)))
			const origin = 1_000_000_000 // ngx_current_msec is not 0 at the run's start
			now := time.Duration(0)
			counts := map[string]int{}
			for i := range scaled(100_000) {
				switch k := rng.IntN(100); {
				case k < 40: // same ms
				case k < 70:
					now += time.Duration(rng.Int64N(int64(interval)))
				case k < 85:
					now += time.Duration(rng.Int64N(int64(3 * time.Millisecond)))
				case k < 98:
					now += time.Duration(rng.Int64N(int64(10 * interval)))
				default:
					now += time.Duration(rng.Int64N(int64(100 * time.Second)))
				}
				at := now
				if rng.IntN(50) == 0 { // a late reading, sometimes more than 60s late
					at = max(now-time.Duration(rng.Int64N(int64(70*time.Second))), 0)
				}
				n := 1
				if rng.IntN(10) == 0 {
					n = 1 + rng.IntN(ng.MaxPermits())
				}
				maxWait := callerWait
				switch rng.IntN(4) {
				case 0:
					maxWait = 0
				case 1:
					maxWait = time.Duration(rng.Int64N(int64(callerWait) + 1))
				}
				wantOK, wantWait := ref.group(uint64(at/time.Millisecond)+origin, n, maxWait)
				var got limiters.Reservation
				if maxWait == 0 && rng.IntN(2) == 0 {
					got = limiters.Reservation{Decision: l.AcquireAt(at, n)}
					wantWait = 0
				} else {
					got = ng.ReserveAt(at, n, maxWait)
				}
				require.Equal(t, wantOK, got.Decision == limiters.Admitted, "request %d at %s for %d (max wait %s)", i, at, n, maxWait)
				if wantOK {
					require.Equal(t, wantWait, got.Wait, "request %d at %s", i, at)
					switch {
					case got.Wait > 0:
						counts["held"]++
					default:
						counts["at once"]++
					}
				} else {
					counts["refused"]++
				}
				require.Equal(t, int64(ref.excess), ng.node.excess, "request %d: excess", i)
			}
			t.Logf("%s: %v", tc.spec, counts)
			assert.Greater(t, counts["at once"], scaled(1000))
			assert.Greater(t, counts["refused"], scaled(1000))
			if callerWait > 0 {
				assert.Greater(t, counts["held"], scaled(1000))
			}
		})
	}
}

// The documented examples, exactly: at 10r/s, burst=5, delay=2, ten requests at once: three
// pass, three are held 100, 200 and 300ms, four get 503; with nodelay six pass, and after an
// idle exactly burst + 1 again; without a burst one per 100ms.
func TestNginxDocumentedExamples(t *testing.T) {
	holds := func(spec string, at time.Duration, n int) (waits []time.Duration, refused int) {
		l := must(limiters.Parse(spec, zeroClock{})).(*Nginx)
		for range n {
			if r := l.ReserveAt(at, 1, limiters.MaxWaitForever); r.Decision == limiters.Admitted {
				waits = append(waits, r.Wait)
			} else {
				refused++
			}
		}
		return waits, refused
	}
	ms := time.Millisecond
	waits, refused := holds("nginx:rate=10r/s,burst=5,delay=2", 0, 10)
	assert.Equal(t, []time.Duration{0, 0, 0, 100 * ms, 200 * ms, 300 * ms}, waits)
	assert.Equal(t, 4, refused)
	spec := must(limiters.ParseSpec("nginx:rate=10r/s,burst=5,delay=2"))
	assert.Equal(t, 300*ms, spec.(limiters.Waiting).CallerWait(), "the longest nginx holds: (5 − 2)·100ms")
	assert.Equal(t, 3, spec.InitialPermits())

	nd := must(NewNginx(NginxSpec{Rate: limiters.PerSecond(10), Burst: 5, NoDelay: true}, zeroClock{}))
	assert.Equal(t, 6, drain(nd, 0), "burst + 1 at once")
	assert.Equal(t, 1, drain(nd, 100*ms), "one more per 100ms")
	assert.Equal(t, 0, drain(nd, 199*ms))
	assert.Equal(t, 6, drain(nd, 10*time.Second), "after an idle that drains everything, burst + 1 again")
	assert.Zero(t, nd.Spec().CallerWait(), "nodelay never holds")
	assert.Equal(t, "nginx:rate=10r/s,burst=5,delay=nodelay", nd.String())

	plain := must(limiters.Parse("nginx:rate=10r/s", zeroClock{}))
	var at []time.Duration
	for t := time.Duration(0); t < time.Second; t += 10 * ms {
		if plain.AcquireAt(t, 1) == limiters.Admitted {
			at = append(at, t)
		}
	}
	assert.Equal(t, []time.Duration{0, 100 * ms, 200 * ms, 300 * ms, 400 * ms, 500 * ms, 600 * ms, 700 * ms, 800 * ms, 900 * ms}, at)

	// 1r/m is R = 16 milli-requests per second: one request every 62.5s, not 60s.
	slow := must(NewNginx(NginxSpec{Rate: limiters.Rate{Permits: 1, Window: time.Minute}}, zeroClock{}))
	assert.Equal(t, int64(16), slow.Spec().MilliRate())
	rate, _ := slow.Spec().NominalRate()
	assert.Equal(t, limiters.Rate{Permits: 2, Window: 125 * time.Second}, rate)
	require.Equal(t, limiters.Admitted, slow.AcquireAt(0, 1))
	assert.Equal(t, limiters.Rejected, slow.AcquireAt(60*time.Second, 1), "60s drains 960 of 1000")
	assert.Equal(t, limiters.Rejected, slow.AcquireAt(62499*ms, 1))
	assert.Equal(t, limiters.Admitted, slow.AcquireAt(62500*ms, 1), "⌊16·62500/1000⌋ = 1000")

	// Above 1000r/s a hold below 1ms truncates to 0: the request passes at once.
	fast := must(limiters.Parse("nginx:rate=2000r/s,burst=20,delay=3", zeroClock{})).(*Nginx)
	var fastWaits []time.Duration
	for range 8 {
		fastWaits = append(fastWaits, fast.ReserveAt(0, 1, time.Second).Wait)
	}
	assert.Equal(t, []time.Duration{0, 0, 0, 0, 0, ms, ms, 2 * ms}, fastWaits)
}

// Validation names the field; modes nginx does not have are not fields.
func TestNginxValidate(t *testing.T) {
	for text, field := range map[string]string{
		"nginx:rate=10/s":                   "rate",
		"nginx:rate=10r/h":                  "rate",
		"nginx:rate=0r/s":                   "rate",
		"nginx:rate=10r/s,burst=0":          "burst",
		"nginx:rate=10r/s,delay=fast":       "delay",
		"nginx:rate=10r/s,mode=wait":        "mode",
		"nginx:rate=10r/s,timeout=1s":       "timeout",
		"nginx:burst=5":                     "rate",
		"nginx:rate=10r/s,burst=5,nodelay=": "nodelay",
	} {
		_, err := limiters.ParseSpec(text)
		var se *limiters.SpecError
		if assert.ErrorAs(t, err, &se, text) {
			assert.Equal(t, field, se.Field, text)
		}
	}
	for _, tc := range []struct {
		spec  NginxSpec
		field string
	}{
		{NginxSpec{Rate: limiters.Rate{Permits: 10, Window: time.Hour}}, "rate"},
		{NginxSpec{Rate: limiters.PerSecond(2_000_000)}, "rate"},
		{NginxSpec{Rate: limiters.PerSecond(10), Burst: -1}, "burst"},
		{NginxSpec{Rate: limiters.PerSecond(10), Burst: 2_000_000}, "burst"},
		{NginxSpec{Rate: limiters.PerSecond(10), Delay: -1}, "delay"},
		{NginxSpec{Rate: limiters.PerSecond(10), Burst: 3, Delay: 1, NoDelay: true}, "delay"},
	} {
		err := tc.spec.Validate()
		var ce *limiters.ConfigError
		if assert.ErrorAs(t, err, &ce, "%+v", tc.spec) {
			assert.Equal(t, tc.field, ce.Field)
			assert.Equal(t, KindNginx, ce.Kind)
		}
		_, newErr := NewNginx(tc.spec, zeroClock{})
		assert.Equal(t, err, newErr)
	}
	_, err := NewNginx(NginxSpec{Rate: limiters.PerSecond(10)}, nil)
	assert.ErrorContains(t, err, "clock")
	for _, text := range []string{"nginx:rate=30r/m", "nginx:rate=10r/s,burst=5", "nginx:rate=10r/s,burst=5,delay=2",
		"nginx:rate=10r/s,burst=5,delay=nodelay", "nginx:rate=10r/s,delay=3"} {
		s, err := limiters.ParseSpec(text)
		require.NoError(t, err, text)
		assert.Equal(t, text, s.String())
	}
}

// A stack that refuses further on undoes nginx's accounting exactly at its instant; later,
// nothing comes back (nginx keeps counting a held request whose client left).
func TestNginxRefundAndCancel(t *testing.T) {
	l := must(limiters.Parse("nginx:rate=10r/s,burst=5,delay=2", zeroClock{})).(*Nginx)
	for range 3 {
		require.Equal(t, limiters.Admitted, l.AcquireAt(0, 1))
	}
	before := l.node
	r := l.ReserveAt(5*time.Millisecond, 1, time.Second)
	require.Equal(t, 95*time.Millisecond, r.Wait, "excess 3 less the 5ms drained, past delay 2: (2950 − 2000)·1000/10000")
	l.CancelAt(5*time.Millisecond, r)
	assert.Equal(t, before, l.node, "undone exactly")
	l.CancelAt(5*time.Millisecond, r)
	assert.Equal(t, before, l.node, "only once")

	r = l.ReserveAt(5*time.Millisecond, 2, time.Second)
	after := l.node
	l.CancelAt(50*time.Millisecond, r)
	assert.Equal(t, after, l.node, "later: nothing comes back")
	l.RefundAt(5*time.Millisecond, 1)
	assert.Equal(t, after, l.node, "not the latest accounting's size")
	l.RefundAt(5*time.Millisecond, 2)
	assert.Equal(t, before, l.node)

	fresh := must(limiters.Parse("nginx:rate=10r/s,burst=5,delay=nodelay", zeroClock{}))
	require.Equal(t, limiters.Admitted, fresh.AcquireAt(time.Second, 1))
	fresh.(limiters.Refunder).RefundAt(time.Second, 1)
	assert.Equal(t, 6, fresh.AvailableAt(time.Second), "a key nginx has not seen again")
}

// The state is nginx's: the excess a request would be accounted at, of the burst, and when
// the next request passes at once; the sentence says it in nginx's terms.
func TestNginxSnapshotAndExplain(t *testing.T) {
	l := must(limiters.Parse("nginx:rate=10r/s,burst=5,delay=2", zeroClock{})).(*Nginx)
	st := l.Snapshot(0)
	assert.Equal(t, limiters.ShapeLevel, st.Shape())
	assert.Equal(t, 0.0, st.Level)
	assert.Equal(t, 5.0, st.LevelMax)
	assert.Equal(t, 3, st.Available)
	assert.Equal(t, time.Duration(0), st.NextFree)
	assert.Equal(t, "nginx accounts it at excess 0 (burst 5): within the delay, it passes at once", st.Explain(1, limiters.Admitted))
	for range 3 {
		l.AcquireAt(0, 1)
	}
	st = l.Snapshot(20 * time.Millisecond)
	assert.Equal(t, 2.8, st.Level, "excess 2 drained by 20ms·10r/s, plus this request's 1")
	assert.Equal(t, 0, st.Available)
	assert.Equal(t, 100*time.Millisecond, st.NextFree, "excess 2 drains to 1 by 100ms")
	assert.Equal(t, "nginx accounts it at excess 2.8 (burst 5): past the delay, nginx would hold it; a caller that cannot wait is refused (one passes at once in 80ms)",
		st.Explain(1, limiters.Rejected))
	assert.Equal(t, "nginx accounts it at excess 2.8 (burst 5): past the delay, nginx holds it until the excess has drained to the delay",
		st.Explain(1, limiters.Admitted))
	assert.Equal(t, "nginx accounts it at excess 5.8 (burst 5): over the burst, 503, and excess and last stay as they were",
		st.Explain(4, limiters.Rejected))
	assert.Equal(t, 1, l.AvailableAt(100*time.Millisecond))
	assert.Equal(t, 3, l.AvailableAt(300*time.Millisecond))
}

// AdmissionBound holds on random traffic, counting each request when nginx lets it go on
// (its arrival plus nginx's hold), and with nodelay the adversary reaches it exactly.
func TestNginxAdmissionBound(t *testing.T) {
	for _, tc := range nginxCases {
		spec := must(limiters.ParseSpec(tc.spec)).(NginxSpec)
		l := must(NewNginx(spec, zeroClock{}))
		rng := rand.New(rand.NewPCG(3, uint64(tc.requests)))
		interval := time.Duration(1e12 / spec.MilliRate())
		var released []time.Duration
		now := time.Duration(0)
		for range 30_000 {
			switch rng.IntN(3) {
			case 0:
			case 1:
				now += time.Duration(rng.Int64N(int64(interval)))
			default:
				now += time.Duration(rng.Int64N(int64(3 * interval)))
			}
			if r := l.ReserveAt(now, 1, limiters.MaxWaitForever); r.Decision == limiters.Admitted {
				released = append(released, now+r.Wait)
			}
		}
		slices.Sort(released)
		for _, L := range []time.Duration{time.Nanosecond, time.Millisecond, 10 * time.Millisecond, interval, 3 * interval, time.Second, time.Minute} {
			bound, _ := limiters.AdmissionBound(spec, L)
			worst, j := 0, 0
			for i := range released {
				for released[i]-released[j] >= L {
					j++
				}
				worst = max(worst, i-j+1)
			}
			assert.LessOrEqual(t, int64(worst), bound, "%s over %s", tc.spec, L)
		}
	}
	// nodelay: burst + 1 just before a ms boundary, then one per 100ms as the excess drains,
	// the last 1ns before the interval ends: 1 + 5 + 10 = 16.
	spec := NginxSpec{Rate: limiters.PerSecond(10), Burst: 5, NoDelay: true}
	bound, _ := spec.AdmissionBound(time.Second)
	assert.Equal(t, int64(16), bound)
	l := must(NewNginx(spec, zeroClock{}))
	start := time.Second - time.Nanosecond
	got := drain(l, start)
	for k := 1; k < 10; k++ {
		got += drain(l, start+time.Duration(k)*100*time.Millisecond)
	}
	got += drain(l, start+time.Second-time.Nanosecond)
	assert.Equal(t, 16, got)
	delayed := NginxSpec{Rate: limiters.PerSecond(10), Burst: 5, Delay: 2}
	b, _ := delayed.AdmissionBound(time.Second)
	assert.Equal(t, int64(18), b)
}

// drain takes single permits at t until the limiter refuses and says how many.
func drain(l limiters.Limiter, t time.Duration) int {
	n := 0
	for n <= 1000 && l.AcquireAt(t, 1) == limiters.Admitted {
		n++
	}
	return n
}

// ReserveAt allocates nothing, on the held and the refused side.
func TestNginxReserveAllocatesNothing(t *testing.T) {
	l := must(NewNginx(NginxSpec{Rate: limiters.PerSecond(100), Burst: 20, Delay: 5}, zeroClock{}))
	now := time.Duration(0)
	assert.Zero(t, testing.AllocsPerRun(200, func() { now += time.Millisecond; l.ReserveAt(now, 1, time.Second) }))
	assert.Zero(t, testing.AllocsPerRun(200, func() { l.ReserveAt(now, 1, 0) }))
	assert.Zero(t, testing.AllocsPerRun(200, func() { l.Snapshot(now) }))
}

// BenchmarkNginxReserveAt is the simulator's path for an nginx stage that holds requests:
// 1000r/s, burst=1000, delay=500, one request per 900µs: past the first 500, held.
func BenchmarkNginxReserveAt(b *testing.B) {
	l := must(NewNginx(NginxSpec{Rate: limiters.PerSecond(1000), Burst: 1000, Delay: 500}, zeroClock{}))
	now, held := benchStart, int64(0)
	b.ReportAllocs()
	for range b.N {
		now += 900 * time.Microsecond
		if r := l.ReserveAt(now, 1, time.Second); r.Wait > 0 {
			held++
		}
	}
	b.ReportMetric(float64(held)/float64(b.N), "held/op")
}
