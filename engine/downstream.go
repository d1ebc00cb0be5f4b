package engine

import (
	"math"
	"math/rand/v2"
)

// downstream is the service behind a lane's limiters as it runs: the requests in service, at
// most Pool of them when the scenario sets a pool, each held for a service time drawn from the
// phase in force when it started. Its random numbers are its own stream of the scenario's
// seed, so a client's jitter draws never shift the service times.
type downstream struct {
	cfg   *Downstream // nil: admitted requests complete at once
	rng   *rand.Rand
	phase int     // cfg.Phases[phase] is in force
	busy  int     // requests in service
	srv   *server // cfg.Server as it runs, nil without one
}

func newDownstream(cfg *Downstream, seed uint64) downstream {
	d := downstream{cfg: cfg, rng: newRand(seed, 0x5e41ce)}
	if cfg != nil && cfg.Server != nil {
		d.srv = newServer(cfg.Server)
		p := cfg.Phases[0]
		d.srv.cores, d.srv.black = cfg.coresIn(p), p.BlackHole
	}
	return d
}

// sync moves to the phase in force at now; a server takes each phase's cores and black hole
// from the instant the phase starts.
func (d *downstream) sync(now int64) {
	phases := d.cfg.Phases
	for d.phase+1 < len(phases) && int64(phases[d.phase+1].From) <= now {
		d.phase++
		if d.srv != nil {
			p := phases[d.phase]
			d.srv.setPhase(int64(p.From), d.cfg.coresIn(p), p.BlackHole)
		}
	}
}

// nextBoundary is when the next phase starts, math.MaxInt64 when none is left.
func (d *downstream) nextBoundary() int64 {
	if d.phase+1 < len(d.cfg.Phases) {
		return int64(d.cfg.Phases[d.phase+1].From)
	}
	return math.MaxInt64
}

// full reports whether a pool is set and every connection of it is busy.
func (d *downstream) full() bool { return d.cfg.Pool > 0 && d.busy >= d.cfg.Pool }

// start puts a request in service at now and returns how long it takes.
func (d *downstream) start(now int64) int64 {
	d.busy++
	return d.serviceTime(now)
}

// done takes a request out of service.
func (d *downstream) done() { d.busy-- }

// serviceTime draws a service time from the phase in force at now. now must not go back.
func (d *downstream) serviceTime(now int64) int64 {
	d.sync(now)
	return drawDuration(d.rng, d.cfg.Phases[d.phase].Service)
}

// drawDuration is one duration of dist from rng, in nanoseconds: a service time, or a store's round
// trip (fleet.go).
func drawDuration(rng *rand.Rand, dist Distribution) int64 {
	switch dist.Kind {
	case DistUniform:
		return int64(dist.Min) + rng.Int64N(int64(dist.Max-dist.Min)+1)
	case DistExponential:
		return clampService(rng.ExpFloat64() * float64(dist.Mean))
	case DistLogNormal:
		return clampService(float64(dist.Mean) * math.Exp(dist.Sigma*rng.NormFloat64()))
	}
	return int64(dist.Mean)
}

// maxService caps a drawn service time at 2^62ns (146 years): a lognormal tail can exceed the
// int64 range, and converting such a float to int64 gives a negative number.
const maxService = int64(1) << 62

func clampService(ns float64) int64 {
	if !(ns < float64(maxService)) { // also NaN
		return maxService
	}
	return max(int64(ns), 0)
}
