// Package limiters holds rate and concurrency limiters behind one interface, driven by an
// injected monotonic clock: ratelab's six, lock-free and allocation-free, and ten peers that
// decide as the products people run (NGINX's limit_req, Guava, x/time/rate and uber
// themselves, Sentinel, resilience4j, Flash5, the two-counter estimate). A keyed table
// (KeyedLimiter) holds one of any kind per client key. Every limiter can say what an HTTP
// server would advertise (PolicyOf, QuotaAt) and, where it refuses on a time axis, when a
// refused request would pass (RetryAfter): package headers writes those as header fields and
// package httplimit puts a spec in front of a net/http handler.
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
// Beside them the registry holds peers, each in its own file: models of other products
// (Flash5Fixed) and real libraries driven at virtual time — XTimeRate is golang.org/x/time/rate
// itself (float64 tokens, a sync.Mutex per call: AllowN, ReserveN and CancelAt at a fixed epoch
// plus the lane's time) and Uber is go.uber.org/ratelimit itself (Take on a lock-free virtual
// clock). They decide and wait exactly as the library does, allocate nothing and pass the race
// detector; where they differ from ratelab's kinds, their doc comments say, with numbers.
//
// One kind, one place: each kind's file holds its algorithm, its spec type (TokenBucketSpec, …:
// fields, parsing, formatting, validation, bound, natural window, nominal rate, initial
// permits), its explanation sentence and its registry entry (KindInfo: family, summary,
// example, State shape, colour, glyph). The registry (Kinds, Lookup) is what the CLI, the
// TUI, the charts and the golden catalogue read; adding a kind is its file, one line in
// kind.go's list, and its tests — TestRegistryIsComplete names whatever it lacks.
//
// The contract has two levels: the core every limiter implements (Limiter: decide n permits
// at time t, say what it is) and optional capabilities, each a small interface of its own
// (RetryAfter, Reserver, Releaser, Refunder, Feedback), discovered by CapabilitiesOf and
// demanded by Require.
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
