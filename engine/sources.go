package engine

import (
	"fmt"
	"io"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"strings"
	"time"
	"unsafe"

	"github.com/ratelab/ratelab/accesslog"
	"github.com/ratelab/ratelab/trace"
)

// arrival is one request offered by a source.
type arrival struct {
	at      int64
	permits int
	key     string
}

// stream yields a source's arrivals in time order; ok is false when it has no more.
type stream interface {
	next() (a arrival, ok bool, err error)
	close() error
}

// newStream builds the arrival process of src for one lane. Every lane builds its own from
// the same seed, so every lane is offered the identical arrivals.
func newStream(src Source, index int, seed uint64, horizon time.Duration) (stream, error) {
	s, err := newArrivals(src, index, seed, horizon)
	if err != nil || src.Keys == nil {
		return s, err
	}
	return &populated{stream: s, keys: newKeyPicker(*src.Keys, index, seed)}, nil
}

// newArrivals is src's arrival process, with the key the source gives.
func newArrivals(src Source, index int, seed uint64, horizon time.Duration) (stream, error) {
	until := int64(horizon)
	if src.Until > 0 && int64(src.Until) < until {
		until = int64(src.Until)
	}
	base := timed{from: int64(src.From), until: until, permits: max(src.Permits, 1), key: src.Key}
	rng := newRand(seed, 0x5eed0000+uint64(index))
	switch src.Kind {
	case SourceConstant:
		return &flatStream{flatState: flatState{timed: base, rate: src.Rate}}, nil
	case SourcePoisson:
		return newFlatPoisson(base, src.Rate, seed, index), nil
	case SourceRamp:
		span := float64(until-base.from) / 1e9
		return &rateStream{timed: base, curve: ramp{r0: src.Rate, slope: (src.RateTo - src.Rate) / span}, rng: pick(src.Poisson, rng)}, nil
	case SourceSine:
		return &rateStream{timed: base, curve: sine{mean: src.Rate, amplitude: src.Amplitude, omega: 2 * math.Pi / src.Period.Seconds()}, rng: pick(src.Poisson, rng)}, nil
	case SourceOnOff:
		if src.Poisson {
			s := newFlatPoisson(base, src.Rate, seed, index)
			s.on, s.off = int64(src.On), int64(src.Off)
			return s, nil
		}
		return &flatStream{flatState: flatState{timed: base, rate: src.Rate, on: int64(src.On), off: int64(src.Off)}}, nil
	case SourceBursts:
		return &burstStream{timed: base, bursts: src.Bursts}, nil
	case SourceScript:
		return &scriptStream{timed: base, script: src.Script}, nil
	case SourceTrace:
		var in io.ReadCloser = io.NopCloser(strings.NewReader(src.TraceData))
		var text io.Reader = in
		name := "built-in trace"
		if src.TraceFile != "" {
			f, err := os.Open(src.TraceFile)
			if err != nil {
				return nil, fmt.Errorf("sources[%d].file: %w", index, err)
			}
			in, name = f, src.TraceFile
			// An access log is read as its rows, as the CSV trace it stands for reads
			// (trace.Rows), without writing that text; a CSV trace as itself.
			opened, err := accesslog.Open(f, src.Log)
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			if log := opened.Log(); log != nil {
				return &traceStream{timed: base, in: f, reader: trace.NewRows(log), name: name}, nil
			}
			text = opened
		}
		r, err := trace.NewReader(text)
		if err != nil {
			in.Close()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return &traceStream{timed: base, in: in, reader: r, name: name}, nil
	}
	return nil, fmt.Errorf("sources[%d]: unknown kind %q", index, src.Kind)
}

func pick(poisson bool, rng *rand.Rand) *rand.Rand {
	if poisson {
		return rng
	}
	return nil
}

// timed holds what every source shares: its active period and the request it offers.
type timed struct {
	from, until int64
	permits     int
	key         string
}

func (timed) close() error { return nil }

// curve is a rate λ(x) in requests per second, x seconds after the source's start, with its
// integral Λ(x) = ∫₀ˣ λ and the inverse of Λ: the time by which target requests are due.
type curve interface {
	inverse(target, guess float64) float64
}

// ramp is λ(x) = r0 + slope·x. Λ(x) = r0·x + slope·x²/2, inverted in closed form.
type ramp struct{ r0, slope float64 }

func (r ramp) inverse(target, _ float64) float64 {
	if target == 0 {
		return 0 // also for a ramp from 0, where the formula below is 0/0
	}
	if r.slope == 0 {
		return target / r.r0
	}
	disc := r.r0*r.r0 + 2*r.slope*target
	if disc < 0 {
		return math.Inf(1) // a falling ramp that has run dry
	}
	return 2 * target / (r.r0 + math.Sqrt(disc)) // stable form of (−r0 + √disc) / slope
}

// sine is λ(x) = mean + amplitude·sin(ωx), amplitude ≤ mean. Λ(x) = mean·x + (amplitude/ω)(1 − cos ωx),
// inverted by Newton's method from the previous arrival, safeguarded by bisection.
type sine struct{ mean, amplitude, omega float64 }

func (s sine) integral(x float64) float64 {
	return s.mean*x + s.amplitude/s.omega*(1-math.Cos(s.omega*x))
}

func (s sine) inverse(target, guess float64) float64 {
	lo, hi := guess, guess+1/s.mean
	for s.integral(hi) < target {
		lo, hi = hi, hi+2*(hi-guess)
	}
	x := hi
	for i := 0; i < 60; i++ {
		f := s.integral(x) - target
		if math.Abs(f) < 1e-9 {
			break
		}
		if f > 0 {
			hi = x
		} else {
			lo = x
		}
		rate := s.mean + s.amplitude*math.Sin(s.omega*x)
		next := x - f/rate
		if rate <= 0 || next <= lo || next >= hi {
			next = (lo + hi) / 2
		}
		x = next
	}
	return x
}

// rateStream turns a rate curve into arrivals. Evenly spaced (rng == nil): the k-th arrival is
// at Λ⁻¹(k), so the count by time x is ⌊Λ(x)⌋+1 with no drift. Poisson: at Λ⁻¹(E₁+…+E_k) with
// Eᵢ exponential(1), the time-change construction of an inhomogeneous Poisson process.
// With on > 0 the curve runs only during the on phases: arrivals are generated in
// "on-time" and stretched over the on/off cycle.
type rateStream struct {
	_ [cacheLine]byte // target and last are written at every arrival: lines of their own (lines.go)
	timed
	curve   curve
	rng     *rand.Rand
	on, off int64
	target  float64 // Λ of the next arrival
	last    float64 // x of the previous arrival, Newton's starting point
	_       [cacheLine]byte
}

func (s *rateStream) next() (arrival, bool, error) {
	if s.rng != nil {
		s.target += s.rng.ExpFloat64()
	}
	x := s.curve.inverse(s.target, s.last)
	if s.rng == nil {
		s.target++
	}
	// Past MaxTime (a slow rate's next arrival centuries away) is past every horizon; the
	// test also keeps the conversion to int64 below from overflowing.
	if !(x*1e9 < float64(MaxTime)) { // also NaN
		return arrival{}, false, nil
	}
	s.last = x
	// Round, not truncate: 2.01s is 2.0099999999999998 in floating point, and truncating
	// it would put an evenly spaced arrival 1ns early.
	offset := int64(math.Round(x * 1e9))
	if s.on > 0 {
		offset = stretch(offset, s.on, s.off)
	}
	at := addSat(s.from, offset)
	if at >= s.until {
		return arrival{}, false, nil
	}
	return arrival{at: at, permits: s.permits, key: s.key}, true, nil
}

// flatStream is a rateStream of a flat curve (constant, poisson, on-off), with the same
// arithmetic, so the same arrivals to the ns: the k-th at x = S/rate seconds, S = k − 1
// evenly spaced, S = E₁+…+E_k Poisson. The lane calls it without an interface (Lane.Step,
// and Lane.flatArrivals, which reads the buffer itself: nextAt is too large to inline, and even
// an inlined helper returning (at, ok) measured 195 instructions per event against 189).
//
// It draws its arrivals flatBatch at a time (fill) into a buffer that nextAt hands out: the
// same arrivals in the same order (the generator is the stream's own and draws nothing else),
// but drawn in a loop that keeps its state in registers and calls nothing (Go saves no
// register across a call, so a draw between the lane's calls reloaded everything around it).
//
// It holds its generator's state itself, and is padded to a multiple of 128 bytes, a size
// class whose objects start on a cache line: every lane writes its own stream's state at every
// arrival, and lanes on other cores must not share those lines (cores_test.go).
type flatStream struct {
	flatState
	_ [(128 - unsafe.Sizeof(flatState{})%128) % 128]byte
}

// flatBatch is how many arrivals a flatStream draws at once.
const flatBatch = 32

type flatState struct {
	timed
	rate    float64
	poisson bool // else evenly spaced
	on, off int64
	target  float64 // S of the next arrival to draw
	rng     expRand
	// buf[pos:n] is the arrivals drawn and not handed out yet; ended: the last fill met the
	// source's end (until, or the end of time) and drew no further.
	pos, n int
	ended  bool
	buf    [flatBatch]int64
}

// newFlatPoisson is the Poisson flatStream of source index: rateStream's generator (newRand),
// seeded alike, so its exponentials are the same.
func newFlatPoisson(base timed, rate float64, seed uint64, index int) *flatStream {
	return &flatStream{flatState: flatState{timed: base, rate: rate, poisson: true, rng: newExpRand(seed, 0x5eed0000+uint64(index))}}
}

func (s *flatStream) next() (arrival, bool, error) {
	at, ok := s.nextAt()
	if !ok {
		return arrival{}, false, nil
	}
	return arrival{at: at, permits: s.permits, key: s.key}, true, nil
}

// nextAt is the next arrival's time; ok is false when there is none before until.
func (s *flatStream) nextAt() (at int64, ok bool) {
	if s.pos == s.n {
		if s.ended {
			return 0, false
		}
		if s.fill(); s.n == 0 {
			return 0, false
		}
	}
	at = s.buf[s.pos]
	s.pos++
	return at, true
}

// fill draws the next flatBatch arrivals into buf, or those left before the source's end.
// The Poisson variate is expRand.exp, written out: exp is too large for the compiler to
// inline.
func (s *flatStream) fill() {
	target, n := s.target, 0
	for ; n < flatBatch; n++ {
		if s.poisson {
			u := s.rng.uint64()
			if j, i := uint32(u), uint8(u>>32); j < expK[i] {
				target += float64(j) * float64(expW[i])
			} else {
				target += s.rng.expSlow(u)
			}
		}
		x := target / s.rate
		if !s.poisson {
			target++
		}
		if !(x*1e9 < float64(MaxTime)) { // also NaN; see rateStream.next
			s.ended = true
			break
		}
		offset := roundNonNegative(x * 1e9)
		if s.on > 0 {
			offset = stretch(offset, s.on, s.off)
		}
		at := addSat(s.from, offset)
		if at >= s.until {
			s.ended = true
			break
		}
		s.buf[n] = at
	}
	s.target, s.pos, s.n = target, 0, n
}

// roundNonNegative is int64(math.Round(v)) for 0 ≤ v < 2^63, bit for bit, in a third of the
// instructions: math.Trunc is one SSE4.1 instruction on amd64 where math.Round is a dozen of
// bit twiddling, and v − Trunc(v) is exact (the fraction of a double needs no more bits than
// the double has), so comparing it with ½ rounds half away from zero exactly as Round does.
func roundNonNegative(v float64) int64 {
	t := math.Trunc(v)
	r := int64(t)
	if v-t >= 0.5 { // (compiled to SETAE and an add, no branch: half the arrivals take it, at random)
		r++
	}
	return r
}

// stretch maps on-time to time over the on/off cycle: offset/on whole cycles of on+off,
// then the rest. Saturates at math.MaxInt64 (past every horizon).
func stretch(offset, on, off int64) int64 {
	cycles, rest := offset/on, offset%on
	period := on + off // both below MaxTime: no overflow
	if cycles > (math.MaxInt64-rest)/period {
		return math.MaxInt64
	}
	return cycles*period + rest
}

// addSat is a + b for a, b ≥ 0, saturating at math.MaxInt64 (past every horizon) instead
// of wrapping into the past.
func addSat(a, b int64) int64 {
	if b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}

type burstStream struct {
	timed
	bursts  []Burst
	burst   int   // index of the first burst not yet exhausted
	emitted []int // requests of each burst already emitted
}

// time of burst j's i-th request: Spread·i/Count after the burst's start, computed in 128
// bits (Spread·i overflows int64 for a long spread and a large count; the quotient is
// below Spread).
func (s *burstStream) at(j, i int) int64 {
	b := s.bursts[j]
	hi, lo := bits.Mul64(uint64(b.Spread), uint64(i))
	q, _ := bits.Div64(hi, lo, uint64(b.Count)) // hi < Count because i < Count
	return addSat(addSat(s.from, int64(b.At)), int64(q))
}

// next merges the bursts: a spread burst may still be going when the next one starts, and
// the arrivals must still come out in time order (ties: the earlier burst first).
func (s *burstStream) next() (arrival, bool, error) {
	if s.emitted == nil {
		s.emitted = make([]int, len(s.bursts))
	}
	for s.burst < len(s.bursts) && s.emitted[s.burst] >= s.bursts[s.burst].Count {
		s.burst++
	}
	if s.burst >= len(s.bursts) {
		return arrival{}, false, nil
	}
	best, bestAt := s.burst, s.at(s.burst, s.emitted[s.burst])
	for j := s.burst + 1; j < len(s.bursts) && addSat(s.from, int64(s.bursts[j].At)) < bestAt; j++ {
		if s.emitted[j] >= s.bursts[j].Count {
			continue
		}
		if at := s.at(j, s.emitted[j]); at < bestAt {
			best, bestAt = j, at
		}
	}
	s.emitted[best]++
	if bestAt >= s.until {
		return arrival{}, false, nil
	}
	return arrival{at: bestAt, permits: s.permits, key: s.key}, true, nil
}

type scriptStream struct {
	timed
	script []Arrival
	i      int
}

func (s *scriptStream) next() (arrival, bool, error) {
	if s.i >= len(s.script) {
		return arrival{}, false, nil
	}
	a := s.script[s.i]
	s.i++
	at := addSat(s.from, int64(a.At))
	if at >= s.until {
		return arrival{}, false, nil
	}
	permits, key := s.permits, s.key
	if a.Permits > 0 {
		permits = a.Permits
	}
	if a.Key != "" {
		key = a.Key
	}
	return arrival{at: at, permits: permits, key: key}, true, nil
}

type traceStream struct {
	timed
	in     io.ReadCloser
	reader interface{ Next() (trace.Row, error) } // a *trace.Reader, or a log's *trace.Rows
	name   string
}

func (s *traceStream) next() (arrival, bool, error) {
	row, err := s.reader.Next()
	if err != nil {
		if err == io.EOF {
			return arrival{}, false, nil
		}
		return arrival{}, false, fmt.Errorf("%s: %w", s.name, err)
	}
	at := addSat(s.from, int64(row.At))
	if at >= s.until {
		return arrival{}, false, nil
	}
	return arrival{at: at, permits: row.Permits, key: row.Key}, true, nil
}

func (s *traceStream) close() error {
	if s.in == nil {
		return nil
	}
	err := s.in.Close()
	s.in = nil
	return err
}
