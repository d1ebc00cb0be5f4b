package failsafego

import (
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/failsafe-go/failsafe-go/adaptivelimiter"

	"github.com/ratelab/ratelab/limiters"
)

// event is one step of a schedule: an arrival (done < 0) or the completion of arrival done.
type event struct {
	at   time.Duration
	done int // the arrival this completes, -1 for an arrival
}

// outcome is what one drive saw after each event: admitted or not, and the limit and in flight.
type outcome struct {
	admitted        bool
	limit, inFlight int
}

// schedule is a random workload: arrivals at rate per second in bursts of 1–burst at one
// instant, answered by a server whose time grows with what is in flight (base · (1 + in
// flight / knee)) and slows by slow× between a third and two thirds of the run; a share of
// drop fail (Drop), a share of back are given back at once (Release without feedback, as a
// later stage's refusal).
type schedule struct {
	seed                 uint64
	span                 time.Duration
	rate                 float64
	burst                int
	base                 time.Duration
	knee                 float64
	slow                 float64
	drop, back           float64
	spec                 AdaptiveSpec
	latencies            []time.Duration // filled as arrivals are admitted, by arrival
	ok, givenBack        []bool
	arrivals             []time.Duration
	limitChanges, admits int
}

// run drives the schedule through step (admit reports the decision of an arrival; complete
// finishes arrival i) in event order, and returns what it saw after each event. The workload
// depends on the decisions (a refused arrival never completes), and the latencies on the
// in-flight count reported, so two drives that ever differ soon diverge.
func (s *schedule) run(admit func(at time.Duration) bool, giveBack func(at time.Duration), complete func(at time.Duration, i int, latency time.Duration, ok bool), state func() (int, int)) []outcome {
	rng := rand.New(rand.NewPCG(s.seed, 99))
	var arrivals []time.Duration
	for t := time.Duration(0); t < s.span; {
		t += time.Duration(rng.ExpFloat64() / s.rate * float64(time.Second))
		for range 1 + rng.IntN(s.burst) {
			arrivals = append(arrivals, t)
		}
	}
	s.arrivals = arrivals
	s.latencies = make([]time.Duration, len(arrivals))
	s.ok = make([]bool, len(arrivals))
	s.givenBack = make([]bool, len(arrivals))
	var pending []event // completions, kept sorted by time then arrival
	var out []outcome
	next := 0
	for next < len(arrivals) || len(pending) > 0 {
		var e event
		if len(pending) > 0 && (next == len(arrivals) || pending[0].at <= arrivals[next]) {
			e, pending = pending[0], pending[1:]
		} else {
			e = event{at: arrivals[next], done: -1}
			next++
		}
		o := outcome{}
		if e.done >= 0 {
			i := e.done
			complete(e.at, i, s.latencies[i], s.ok[i])
		} else {
			i := next - 1
			o.admitted = admit(e.at)
			if o.admitted {
				s.admits++
				if rng.Float64() < s.back {
					s.givenBack[i] = true
					giveBack(e.at)
				} else {
					_, inFlight := state()
					slow := 1.0
					if e.at > s.span/3 && e.at < 2*s.span/3 {
						slow = s.slow
					}
					lat := time.Duration(float64(s.base) * slow * (1 + float64(inFlight)/s.knee) * (0.5 + rng.Float64()))
					s.latencies[i] = max(lat, time.Microsecond)
					s.ok[i] = rng.Float64() >= s.drop
					c := event{at: e.at + s.latencies[i], done: i}
					k, _ := slices.BinarySearchFunc(pending, c, func(a, b event) int {
						if a.at != b.at {
							return int(a.at - b.at)
						}
						return a.done - b.done
					})
					pending = slices.Insert(pending, k, c)
				}
			}
		}
		o.limit, o.inFlight = state()
		if len(out) > 0 && out[len(out)-1].limit != o.limit {
			s.limitChanges++
		}
		out = append(out, o)
	}
	return out
}

func schedules() []schedule {
	fast := AdaptiveSpec{Initial: 20, Min: 1, Max: 200, Factor: 5, RecentMin: 100 * time.Millisecond, RecentMax: time.Second,
		Samples: 10, Quantile: 0.9, Baseline: 10, Correlation: 20}
	var out []schedule
	for seed := range uint64(6) {
		spec := fast
		if seed%3 == 2 {
			spec = DefaultAdaptiveSpec
		}
		if seed == 4 {
			spec.Stabilization = 2 * time.Second
		}
		out = append(out, schedule{seed: seed, span: 60 * time.Second, rate: 300 + 100*float64(seed), burst: 1 + int(seed%3)*3,
			base: 20 * time.Millisecond, knee: 10, slow: 4, drop: 0.05, back: 0.05, spec: spec})
	}
	return out
}

// driveKind runs schedule s through the kind a.
func driveKind(a *Adaptive, s *schedule) []outcome {
	return s.run(
		func(at time.Duration) bool { return a.AcquireAt(at, 1) == limiters.Admitted },
		func(time.Duration) { a.Release(1) },
		func(at time.Duration, _ int, lat time.Duration, ok bool) {
			a.ObserveAt(at, 1, lat, ok)
			a.Release(1)
		},
		func() (int, int) { return a.Limit(), a.InFlight() })
}

// driveLibrary runs schedule s through the library's public API alone, in a synctest bubble
// whose fake clock time.Now() reads: time passes by time.Sleep.
func driveLibrary(t *testing.T, s *schedule) (want []outcome) {
	synctest.Test(t, func(t *testing.T) {
		lib := s.spec.Builder().Build()
		start := time.Now()
		if !start.Equal(virtualEpoch) {
			t.Fatalf("the bubble starts at %s, not at virtualEpoch %s", start, virtualEpoch)
		}
		sleepTo := func(at time.Duration) {
			if d := time.Until(start.Add(at)); d > 0 {
				time.Sleep(d)
			}
		}
		// sameInstant keeps, per acquisition time, the permits admitted then, in order: the
		// kind hears a completion as "started at now − latency" and takes the oldest permit
		// acquired then, so this drive hands the library that permit too.
		sameInstant := map[time.Duration][]adaptivelimiter.Permit{}
		var last adaptivelimiter.Permit
		var lastAt time.Duration
		want = s.run(
			func(at time.Duration) bool {
				sleepTo(at)
				p, ok := lib.TryAcquirePermit()
				if ok {
					last, lastAt = p, at
					sameInstant[at] = append(sameInstant[at], p)
				}
				return ok
			},
			func(time.Duration) {
				q := sameInstant[lastAt]
				sameInstant[lastAt] = q[:len(q)-1]
				last.Drop()
			},
			func(at time.Duration, i int, _ time.Duration, ok bool) {
				sleepTo(at)
				began := s.arrivals[i]
				q := sameInstant[began]
				p := q[0]
				sameInstant[began] = q[1:]
				if ok {
					p.Record()
				} else {
					p.Drop()
				}
			},
			func() (int, int) { return lib.Limit(), lib.Inflight() })
	})
	return want
}

// firstDifference is the index of the first event two drives saw differently, -1 if none.
func firstDifference(got, want []outcome) int {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return i
		}
	}
	if len(got) != len(want) {
		return min(len(got), len(want))
	}
	return -1
}

// TestMatchesTheLibraryOnItsOwnClock drives the kind (the library at virtual time through
// the fields it sets) and the library through its public API alone, in a synctest bubble,
// over the same random schedules: every decision, limit and in-flight count must agree.
func TestMatchesTheLibraryOnItsOwnClock(t *testing.T) {
	for _, s := range schedules() {
		a, err := NewAdaptive(s.spec, nil)
		if err != nil {
			t.Fatal(err)
		}
		kindSched, libSched := s, s
		got := driveKind(a, &kindSched)
		want := driveLibrary(t, &libSched)
		if i := firstDifference(got, want); i >= 0 {
			t.Fatalf("seed %d: event %d of %d/%d: the kind saw %+v, the library on its own clock %+v", s.seed, i, len(got), len(want), at(got, i), at(want, i))
		}
		if kindSched.limitChanges < 10 || kindSched.admits == len(kindSched.arrivals) {
			t.Errorf("seed %d: the schedule exercised too little: %d limit changes, %d of %d admitted", s.seed, kindSched.limitChanges, kindSched.admits, len(kindSched.arrivals))
		}
		t.Logf("seed %d (%s): %d events, %d of %d admitted, %d limit changes, the same", s.seed, s.spec, len(got), kindSched.admits, len(kindSched.arrivals), kindSched.limitChanges)
	}
}

func at(o []outcome, i int) outcome {
	if i < len(o) {
		return o[i]
	}
	return outcome{}
}

// TestTheClockFieldsMatter: the comparison above can fail. A kind that leaves the library's
// first window end at the wall clock's now (years after virtual time 0) never closes a window,
// and one whose permits keep the wall clock's start records wall-clock nanoseconds: both part
// from the library on its own clock within the first windows.
func TestTheClockFieldsMatter(t *testing.T) {
	s := schedules()[0]
	libSched := s
	want := driveLibrary(t, &libSched)

	wall, err := NewAdaptive(s.spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	wall.lib = s.spec.Builder().Build() // nextUpdateTime left at the wall clock
	sched := s
	if i := firstDifference(driveKind(wall, &sched), want); i < 0 {
		t.Error("a library whose first window ends at the wall clock's now drove the same as on its own clock")
	} else {
		t.Logf("the wall clock's window end: apart at event %d", i)
	}

	late, err := NewAdaptive(s.spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	sched = s
	got := sched.run(
		func(at time.Duration) bool { return late.AcquireAt(at, 1) == limiters.Admitted },
		func(time.Duration) { late.Release(1) },
		func(at time.Duration, _ int, lat time.Duration, ok bool) {
			late.ObserveAt(at, 1, lat+time.Millisecond, ok) // every sample 1ms long
			late.Release(1)
		},
		func() (int, int) { return late.Limit(), late.InFlight() })
	if i := firstDifference(got, want); i < 0 {
		t.Error("samples 1ms longer drove the same as the library on its own clock")
	} else {
		t.Logf("samples 1ms long: apart at event %d", i)
	}
}

// TestWorkedExample is the doc comment's run: 8 callers that ask again when answered, a
// server answering in 50ms and in 100ms from 30s, the library's defaults.
func TestWorkedExample(t *testing.T) {
	a, err := NewAdaptive(DefaultAdaptiveSpec, nil)
	if err != nil {
		t.Fatal(err)
	}
	type change struct {
		at          time.Duration
		from, limit int
	}
	var changes []change
	next := make([]time.Duration, 8)
	last := a.Limit()
	for now := time.Duration(0); now < 60*time.Second; now += time.Millisecond {
		for i := range next {
			if next[i] != now {
				continue
			}
			lat := 50 * time.Millisecond
			if now >= 30*time.Second {
				lat = 100 * time.Millisecond
			}
			if now > 0 {
				a.ObserveAt(now, 1, lat, true)
				a.Release(1)
			}
			if d := a.AcquireAt(now, 1); d != limiters.Admitted {
				t.Fatalf("%s: caller %d refused (%v) at limit %d, %d in flight", now, i, d, a.Limit(), a.InFlight())
			}
			next[i] = now + lat
		}
		if l := a.Limit(); l != last {
			changes = append(changes, change{now, last, l})
			last = l
		}
	}
	want := map[time.Duration]change{
		350 * time.Millisecond:   {350 * time.Millisecond, 20, 21},
		1400 * time.Millisecond:  {1400 * time.Millisecond, 21, 22},
		20300 * time.Millisecond: {20300 * time.Millisecond, 39, 40},
		33 * time.Second:         {33 * time.Second, 40, 39},
		38500 * time.Millisecond: {38500 * time.Millisecond, 35, 34},
		47300 * time.Millisecond: {47300 * time.Millisecond, 34, 35},
		52800 * time.Millisecond: {52800 * time.Millisecond, 39, 40},
	}
	seen := 0
	for i, c := range changes {
		if w, ok := want[c.at]; ok {
			seen++
			if c != w {
				t.Errorf("at %s the limit went %d → %d, want %d → %d", c.at, c.from, c.limit, w.from, w.limit)
			}
		}
		if i > 0 && c.at < 30*time.Second && c.at-changes[i-1].at != 1050*time.Millisecond {
			t.Errorf("window %d closed %s after the one before, want 1.05s", i, c.at-changes[i-1].at)
		}
		if d := c.limit - c.from; d != 1 && d != -1 {
			t.Errorf("at %s the limit moved by %d, want ±1 (log10 of a limit below 100)", c.at, d)
		}
	}
	if seen != len(want) || len(changes) != 32 {
		t.Errorf("%d limit changes, %d of the %d expected ones: %v", len(changes), seen, len(want), changes)
	}
}
