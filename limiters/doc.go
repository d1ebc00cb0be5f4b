// Package limiters holds rate and concurrency limiters behind one interface, driven by an
// injected monotonic clock: ratelab's six, lock-free and allocation-free, the contract they
// share, keyed tables of them and the registry that names them. It imports only the standard
// library, so a Go server can use it as it would golang.org/x/time/rate:
//
//	lim, _ := limiters.NewTokenBucket(20, limiters.PerSecond(100), limiters.NewMonotonicClock())
//	if !lim.TryAcquire(1) {
//		http.Error(w, "slow down", http.StatusTooManyRequests)
//	}
//
// 100/s with capacity 20: a client idle for 200ms or more may send 20 at once, then one every
// 10ms. Every limiter can say what an HTTP server would advertise (PolicyOf, QuotaAt) and,
// where it refuses on a time axis, when a refused request would pass (RetryAfter): package
// headers writes those as header fields and package httplimit puts a spec in front of a
// net/http handler.
//
// ratelab's six:
//
//	limiter            rate model                         largest burst          state
//	TokenBucket        average rate, bursts after idle    capacity               one int64 (GCRA)
//	LeakyBucket        strictly even pacing               1                      one int64 (GCRA)
//	SlidingWindow      limit per rolling window           limit                  slots uint64s
//	FixedWindow        limit per aligned window           2·limit at a boundary  one uint64
//	WarmUpTokenBucket  token bucket ramping 1/3 → 1       capacity/3 → capacity  one int64 + birth
//	Concurrency        max held at once (bulkhead)        no time axis           one int32
//
// and the adaptive concurrency limits (AdaptiveLimiter, kinds aimd, vegas, gradient and
// gradient2): a bulkhead whose limit follows Netflix concurrency-limits' rules from the
// latency and outcome of the work it admitted (Feedback).
//
// Beside them, package limiters/peers holds the models of the products people run (NGINX's
// limit_req, Guava, Sentinel, resilience4j, Flash5, the two-counter estimate) and the real
// x/time/rate and uber libraries driven at virtual time; it registers them (Register) when it
// is imported, as image formats register with package image, so that ParseSpec reads
// "nginx:rate=10r/s" wherever it is linked in.
//
// One kind, one place: each kind's file holds its algorithm, its spec type (TokenBucketSpec, …:
// fields, parsing, formatting, validation, bound, natural window, nominal rate, initial
// permits), its explanation sentence and its registry entry (KindInfo: family, summary,
// example, State shape, and each field's accepted range beside Validate: KindInfo.Ranges,
// from which docs/LIMITS.md is generated; its colour and glyph are package present's, outside
// the library). The registry (Kinds, Lookup) is what the CLI, the
// TUI, the charts and the golden catalogue read. Adding a kind is its file, one line (in
// kind.go's list for this package, in its own package's init through Register elsewhere),
// and its tests: TestRegistryIsComplete names whatever the entry lacks. What a kind can do
// beyond the core it declares by implementing small interfaces that the workbench asks for:
// Fresh (a keyed table may forget it), Gridded (its window boundaries are drawn), Splittable
// (a fleet may divide it among instances), Reusable (a keyed table may reset it for a new key).
//
// The contract has two levels: the core every limiter implements (Limiter: decide n permits
// at time t, say what it is) and optional capabilities, each a small interface of its own
// (RetryAfter, Reserver, Releaser, Refunder, Feedback), discovered by CapabilitiesOf and
// demanded by Require.
//
// Wait(ctx, l, clock, n) blocks until a Reserver grants n permits, as x/time/rate's WaitN;
// TokenBucket and LeakyBucket have it as a method.
//
// Every decision is one atomic read and one CAS (the sliding window reads its slots), takes
// no lock and allocates nothing. Each method that depends on time has an explicit-time form
// (AcquireAt, TryAcquireAt, AvailableAt, RetryAfterAt) used by the simulator and by tests;
// the plain forms read the limiter's Clock. In production pass NewMonotonicClock(); in the
// simulator a *virtualclock.Clock.
//
// Terms, used the same way in code, CLI, TUI and charts:
//
//   - permit: one unit of admission; a request asks for n ≥ 1.
//   - rate: permits per window, written "100/1s".
//   - emission interval T: window / permits, rounded up to a whole nanosecond (100/1s → 10ms).
//   - capacity: the largest burst a token bucket admits at once after idle.
//   - tolerance τ: how far the GCRA schedule may run ahead of now; capacity·T.
//   - window: the span a window limiter counts over; a fixed window's are aligned to the clock's
//     origin, a sliding window's roll.
//   - slot: one of the sliding window's buckets, window/slots long.
//   - generation: the slot-index a bucket's count belongs to; older generations are ignored.
//   - cold factor: 3; a cold warm-up bucket's interval is 3T.
//   - warm-up period: the limiter age over which the interval falls from 3T to T.
//   - in flight: permits held and not yet released (concurrency limiter).
package limiters
