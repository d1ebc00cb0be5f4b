package engine

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ratelab/ratelab/limiters"
)

// Fleet is the scenario's service run as Instances instances behind one balancer: every
// request is routed to one live instance, and each lane with a LaneSpec.Fleet decides it there
// by its coordination model. A lane without one is a single process: the baseline the fleet is
// measured against. 3 instances of token-bucket:capacity=10,rate=10/1s, local, round-robin,
// 100 requests at once: each instance admits 10, the fleet 30 against the limit of 10.
type Fleet struct {
	Instances int
	Balancer  Balancer
	// Store, when set, builds the limiters of every central lane's shared store instead of
	// in-process ones of the lane's spec (StoreFactory): `ratelab run --redis` keeps them in
	// a real Redis. The simulation around them (instances, balancer, latency, faults, the
	// failure policy) is the same either way.
	Store StoreFactory
}

// StoreFactory makes one limiter of a central lane's shared store, of spec on clock (the
// lane's virtual clock; decisions come at its times), in place of spec.New(clock). It is
// called wherever the in-process store would make a fresh limiter, and what it returns must
// be fresh (a full bucket, an empty window): once per central lane; under ClockCaller once
// per window of the callers' clocks; and for a keyed stage (keys(…):spec, whose table, bound
// and eviction stay in process) each time a key enters the table, spec being the inner one.
// A central lane it serves must have one stage. Lanes run in parallel, so it must be safe for
// concurrent use. An error is for a spec it cannot serve, and ends the run (within a keyed
// table, which cannot fail, a panic): a store it cannot reach should instead give a limiter
// whose decisions fail, which implements StoreFailer.
type StoreFactory func(slot StoreSlot, spec limiters.Spec, clock limiters.Clock) (limiters.Limiter, error)

// StoreSlot says which limiter of which store a StoreFactory makes.
type StoreSlot struct {
	Lane   int    // the lane's index in Scenario.Lanes
	Window int64  // under ClockCaller, the window's index, ⌊caller's time / natural window⌋; else 0
	Key    string // a keyed stage's client key; "" for a stage that is not keyed
}

// StoreFailer is a store limiter that can fail to decide, as a store across a network does.
// After each decision the lane asks StoreErr; an error means the decision returned was not the
// store's, and the lane's failure policy (LaneFleet.OnFailure) decides instead, as in an
// outage: counted in FleetResult.StoreFailures, with Timeout as its latency.
type StoreFailer interface {
	// StoreErr is why the last AcquireAt was not decided by the store, or nil; reading it
	// clears it.
	StoreErr() error
}

// MaxInstances is the most instances a fleet may have.
const MaxInstances = 1024

// Balancer names how requests are routed to the live instances.
type Balancer string

// The balancers.
const (
	BalanceRoundRobin Balancer = "round-robin" // the next live instance in turn, whatever the key
	BalanceRandom     Balancer = "random"      // a live instance drawn from the scenario's seed
	BalanceHash       Balancer = "hash"        // FNV-1a of the key modulo the live instances: a join or leave moves most keys
	BalanceSticky     Balancer = "sticky"      // a key stays on the instance it first went to (chosen round-robin) while that one lives
)

// Balancers lists every balancer, in the order documentation shows them.
func Balancers() []Balancer {
	return []Balancer{BalanceRoundRobin, BalanceRandom, BalanceHash, BalanceSticky}
}

// Coordination names how a lane's instances share its limit.
type Coordination string

// The coordination models.
const (
	// CoordLocal: each instance has its own limiter of the lane's spec, the full limit: N
	// instances admit up to N × the limit.
	CoordLocal Coordination = "local"
	// CoordSplit: each instance has the spec divided by N (limiters.SplitSpec): the fleet admits the
	// limit when traffic is spread evenly, and refuses a key that one instance gets while the
	// others idle.
	CoordSplit Coordination = "split"
	// CoordCentral: one shared store decides every request atomically; each decision waits a
	// round trip (Latency), and one that takes longer than Timeout (or meets an outage) is
	// decided by the failure policy instead.
	CoordCentral Coordination = "central"
	// CoordAsync: gubernator's GLOBAL behaviour. Each instance decides locally; a non-owner
	// queues every hit and sends the sum to the owner Sync after its first queued hit; the
	// owner applies them (taking at most what it has left: DRAIN_OVER_LIMIT) and, Sync after
	// the first change it has not yet broadcast, sends what it has left to every other instance,
	// whose limiter then holds exactly that. Messages take Latency one way.
	CoordAsync Coordination = "async"
)

// Coordinations lists every model, in the order documentation shows them.
func Coordinations() []Coordination {
	return []Coordination{CoordLocal, CoordSplit, CoordCentral, CoordAsync}
}

// StoreClock is whose clock a central store decides by.
type StoreClock string

// The store clocks.
const (
	// ClockStore: the store's own (Redis TIME): every instance is judged on one clock, and an
	// instance's clock offset changes nothing.
	ClockStore StoreClock = "store"
	// ClockCaller: each instance sends its own time and names the window by it, as a client
	// that INCRs "key:{now / window}" does: the store keeps one limiter per window of the
	// callers' clocks, so an instance ahead by δ opens the next window δ early while the others
	// still fill the current one.
	ClockCaller StoreClock = "caller"
)

// LaneFleet is how one lane's instances coordinate.
type LaneFleet struct {
	Model Coordination
	// Latency is the store's round trip for central, and each sync message's one-way delay
	// for async. A zero Kind is no latency.
	Latency Distribution
	// Sync is async's GlobalSyncWait: a non-owner sends its queued hits Sync after the first,
	// and the owner broadcasts Sync after the first change since its last broadcast.
	Sync time.Duration
	// Owner is the instance that owns the limit under async (0 when unset).
	Owner int
	// Clock is whose clock a central store decides by ("" is ClockStore).
	Clock StoreClock
	// OnFailure is a central lane's policy when the store cannot decide within Timeout: an
	// outage, or a round trip longer than Timeout. FailLocal decides by a limiter of the
	// lane's spec on each instance.
	OnFailure limiters.FailureMode
	Timeout   time.Duration
}

// FaultKind names one fault of the timeline.
type FaultKind string

// The faults.
const (
	FaultOutage  FaultKind = "outage"  // the store is unreachable From…Until (for Instances only, when listed: a partition)
	FaultLatency FaultKind = "latency" // Add is added to every store round trip and sync message From…Until
	FaultClock   FaultKind = "clock"   // Instance's clock reads Offset ahead of true time, all run long
	FaultLeave   FaultKind = "leave"   // Instance stops taking requests At
	FaultJoin    FaultKind = "join"    // Instance starts taking requests At, with a fresh limiter (absent before, if it never left)
)

// Fault is one event of the scenario's fault timeline (Scenario.Faults).
//
// Each kind reads only its own fields (FaultKind.Fields); Validate refuses a fault with
// another kind's field set (an outage with an Instance, a leave with an Until), and a scenario
// file one that names such a field at all, at its line:col. The timeline is refused when it
// says two things at once:
//   - an instance has at most one clock offset (two clock faults for instance 1 are refused,
//     where the last one silently won);
//   - each instance's joins and leaves alternate in time, at most one per instant: an
//     instance leaves, joins, leaves …, or joins (absent until then), leaves, joins …; a
//     second leave with no join between is refused, naming both;
//   - instances (outage) and Instance (clock, leave, join) name instances 0 to N−1 of the
//     fleet's N.
//
// A fault wholly at or past the horizon (an outage or latency from the horizon on, a leave
// or join at it or later) would never happen: ValidateFaultTimes refuses it, and a scenario
// file is checked with it against its own horizon. Validate does not check it, so that a
// horizon shortened afterwards (run fleet --horizon 3s, whose outage starts at 4s) runs the
// part of the timeline it reaches.
type Fault struct {
	Kind        FaultKind
	From, Until time.Duration // outage, latency: the half-open period [From, Until)
	Add         time.Duration // latency
	Instances   []int         // outage: the instances cut off from the store; empty: all of them
	Instance    int           // clock, leave, join
	Offset      time.Duration // clock: how far ahead the instance's clock reads
	At          time.Duration // leave, join
}

// Fields are the Fault fields a kind reads, as a scenario file names them: an outage from,
// until and instances; a latency from, until and add; a clock instance and offset; a leave or
// a join instance and at. nil for an unknown kind.
func (k FaultKind) Fields() []string {
	switch k {
	case FaultOutage:
		return []string{"from", "until", "instances"}
	case FaultLatency:
		return []string{"from", "until", "add"}
	case FaultClock:
		return []string{"instance", "offset"}
	case FaultLeave, FaultJoin:
		return []string{"instance", "at"}
	}
	return nil
}

// setFields are the fields of ft that hold a value other than their zero, by file name.
func (ft Fault) setFields() []string {
	var set []string
	for _, f := range []struct {
		name string
		set  bool
	}{{"from", ft.From != 0}, {"until", ft.Until != 0}, {"add", ft.Add != 0}, {"instances", len(ft.Instances) > 0},
		{"instance", ft.Instance != 0}, {"offset", ft.Offset != 0}, {"at", ft.At != 0}} {
		if f.set {
			set = append(set, f.name)
		}
	}
	return set
}

// ForeignFieldReason is why a fault of kind k cannot have the field name, with what to write
// instead where there is something: "not a field of a leave fault (its fields: instance, at);
// to leave and come back, add a join: {kind: join, instance: N, at: …}".
func (k FaultKind) ForeignFieldReason(name string) string {
	article := "a"
	if k == FaultOutage {
		article = "an"
	}
	reason := fmt.Sprintf("not a field of %s %s fault (its fields: %s)", article, k, strings.Join(k.Fields(), ", "))
	switch {
	case k == FaultOutage && name == "instance":
		reason += "; a partition lists the instances cut off: instances: [N]"
	case (k == FaultLeave || k == FaultJoin) && (name == "from" || name == "until"):
		reason += "; to leave and come back, give a leave and a join: {kind: leave, instance: N, at: …} and {kind: join, instance: N, at: …}"
	case k == FaultLatency && name == "instances":
		reason += "; added latency applies to every instance's round trips"
	}
	return reason
}

// ValidateFaultTimes refuses a fault that starts at or after the horizon, naming its from or
// at: it would never happen (see Fault).
func (sc *Scenario) ValidateFaultTimes() error {
	for i, ft := range sc.Faults {
		field, start := fmt.Sprintf("faults[%d].at", i), ft.At
		switch ft.Kind {
		case FaultOutage, FaultLatency:
			field, start = fmt.Sprintf("faults[%d].from", i), ft.From
		case FaultClock:
			continue
		}
		if start >= sc.Horizon {
			return fieldErr(field, "%v is at or past the horizon (%v): this %s would never happen; move it before %v or remove it", start, sc.Horizon, ft.Kind, sc.Horizon)
		}
	}
	return nil
}

// validateTimeline refuses what the timeline says twice (see Fault): a second clock offset
// for an instance, and joins and leaves of one instance that do not alternate in time.
func (sc *Scenario) validateTimeline() error {
	type change struct {
		at    time.Duration
		kind  FaultKind
		index int
	}
	clock := map[int]int{}
	changes := make([][]change, sc.Fleet.Instances)
	for i, ft := range sc.Faults {
		switch ft.Kind {
		case FaultClock:
			if j, twice := clock[ft.Instance]; twice {
				return fieldErr(fmt.Sprintf("faults[%d].instance", i), "instance %d already has a clock offset (faults[%d], %v): give each instance one", ft.Instance, j, sc.Faults[j].Offset)
			}
			clock[ft.Instance] = i
		case FaultLeave, FaultJoin:
			changes[ft.Instance] = append(changes[ft.Instance], change{ft.At, ft.Kind, i})
		}
	}
	for instance, cs := range changes {
		slices.SortStableFunc(cs, func(a, b change) int { return cmp.Compare(a.at, b.at) })
		for k := 1; k < len(cs); k++ {
			prev, c := cs[k-1], cs[k]
			field := fmt.Sprintf("faults[%d]", c.index)
			if c.at == prev.at {
				return fieldErr(field+".at", "instance %d already %ss at %v (faults[%d]): one join or leave per instance per instant", instance, prev.kind, c.at, prev.index)
			}
			if c.kind == prev.kind {
				past := map[FaultKind]string{FaultLeave: "left", FaultJoin: "joined"}[c.kind]
				other := map[FaultKind]FaultKind{FaultLeave: FaultJoin, FaultJoin: FaultLeave}[c.kind]
				return fieldErr(field+".kind", "instance %d %ss at %v but already %s at %v (faults[%d]) with no %s between: an instance's joins and leaves alternate", instance, c.kind, c.at, past, prev.at, prev.index, other)
			}
		}
	}
	return nil
}

// validateFleet checks the fleet, the faults and each lane's coordination, naming fields.
func (sc *Scenario) validateFleet() error {
	if sc.Fleet == nil {
		if len(sc.Faults) > 0 {
			return fieldErr("faults", "a fault timeline needs a fleet: block")
		}
		for i, lane := range sc.Lanes {
			if lane.Fleet != nil {
				return fieldErr(fmt.Sprintf("limiters[%d].fleet", i), "a lane's coordination needs the scenario's fleet: block")
			}
		}
		return nil
	}
	f := sc.Fleet
	if f.Instances < 1 || f.Instances > MaxInstances {
		return fieldErr("fleet.instances", "must be between 1 and %d, got %d", MaxInstances, f.Instances)
	}
	if !slices.Contains(Balancers(), f.Balancer) {
		return fieldErr("fleet.balancer", "unknown balancer %q (round-robin, random, hash, sticky)", f.Balancer)
	}
	instance := func(field string, i int) error {
		if i < 0 || i >= f.Instances {
			return fieldErr(field, "no instance %d: instances are numbered 0 to %d", i, f.Instances-1)
		}
		return nil
	}
	for i, ft := range sc.Faults {
		field := fmt.Sprintf("faults[%d]", i)
		if own := ft.Kind.Fields(); own != nil {
			for _, name := range ft.setFields() {
				if !slices.Contains(own, name) {
					return fieldErr(field+"."+name, "%s", ft.Kind.ForeignFieldReason(name))
				}
			}
		}
		switch ft.Kind {
		case FaultOutage, FaultLatency:
			if ft.From < 0 {
				return fieldErr(field+".from", "must not be negative, got %v", ft.From)
			}
			if ft.Until <= ft.From {
				return fieldErr(field+".until", "must be after from=%v, got %v", ft.From, ft.Until)
			}
			if err := inRange(field+".until", ft.Until); err != nil {
				return err
			}
			if ft.Kind == FaultLatency {
				if ft.Add <= 0 {
					return fieldErr(field+".add", "must be positive, got %v", ft.Add)
				}
				if err := inRange(field+".add", ft.Add); err != nil {
					return err
				}
			}
			for j, k := range ft.Instances {
				if err := instance(fmt.Sprintf("%s.instances[%d]", field, j), k); err != nil {
					return err
				}
			}
		case FaultClock:
			if err := instance(field+".instance", ft.Instance); err != nil {
				return err
			}
			if ft.Offset < 0 {
				return fieldErr(field+".offset", "must not be negative (an instance behind is the others ahead), got %v", ft.Offset)
			}
			if err := inRange(field+".offset", ft.Offset); err != nil {
				return err
			}
		case FaultLeave, FaultJoin:
			if err := instance(field+".instance", ft.Instance); err != nil {
				return err
			}
			if ft.At < 0 {
				return fieldErr(field+".at", "must not be negative, got %v", ft.At)
			}
			if err := inRange(field+".at", ft.At); err != nil {
				return err
			}
		default:
			return fieldErr(field+".kind", "unknown fault %q (outage, latency, clock, leave, join)", ft.Kind)
		}
	}
	if err := sc.validateTimeline(); err != nil {
		return err
	}
	for i, lane := range sc.Lanes {
		if lane.Fleet == nil {
			continue
		}
		if err := lane.validateFleet(fmt.Sprintf("limiters[%d]", i), f); err != nil {
			return err
		}
	}
	for i, lane := range sc.Lanes {
		if lane.Fleet != nil && lane.Fleet.Model == CoordAsync {
			for j, ft := range sc.Faults {
				if (ft.Kind == FaultLeave || ft.Kind == FaultJoin) && ft.Instance == lane.Fleet.Owner {
					return fieldErr(fmt.Sprintf("faults[%d].instance", j), "instance %d owns limiters[%d]'s async limit and cannot %s", ft.Instance, i, ft.Kind)
				}
			}
		}
	}
	return nil
}

func (l LaneSpec) validateFleet(field string, f *Fleet) error {
	c := l.Fleet
	field += ".fleet"
	if !slices.Contains(Coordinations(), c.Model) {
		return fieldErr(field+".model", "unknown coordination %q (local, split, central, async)", c.Model)
	}
	if l.MaxWait > 0 {
		return fieldErr(field, "a fleet lane decides at once: max_wait is not supported")
	}
	for j, spec := range l.Stack {
		inner := spec
		if ks, ok := spec.(limiters.KeyedSpec); ok {
			inner = ks.Spec
			if c.Model == CoordAsync {
				return fieldErr(field, "stage %d: async syncs one limit: a keyed stage is not supported", j+1)
			}
		}
		if inner.NaturalWindow() <= 0 {
			return fieldErr(field, "stage %d: %s has no time axis: a fleet lane's stages must be rate limits", j+1, spec)
		}
		if c.Model == CoordSplit && l.Build == nil {
			if _, err := limiters.SplitSpec(spec, f.Instances); err != nil {
				return fieldErr(field+".model", "stage %d: %v", j+1, err)
			}
		}
	}
	if c.Model == CoordAsync && len(l.Stack) != 1 {
		return fieldErr(field, "async syncs one limit: the stack must have one stage, got %d", len(l.Stack))
	}
	if c.Latency.Kind != "" {
		if err := c.Latency.validate(field + ".latency"); err != nil {
			return err
		}
	}
	switch c.Model {
	case CoordCentral:
		switch c.OnFailure {
		case limiters.FailOpen, limiters.FailClosed, limiters.FailLocal:
		default:
			return fieldErr(field+".on_failure", "a central store needs a failure policy: fail-open, fail-closed or local")
		}
		if c.Timeout <= 0 {
			return fieldErr(field+".timeout", "must be positive, got %v", c.Timeout)
		}
		if err := inRange(field+".timeout", c.Timeout); err != nil {
			return err
		}
		if c.Clock != "" && c.Clock != ClockStore && c.Clock != ClockCaller {
			return fieldErr(field+".clock", "unknown clock %q (store, caller)", c.Clock)
		}
	case CoordAsync:
		if c.Sync <= 0 {
			return fieldErr(field+".sync", "must be positive, got %v", c.Sync)
		}
		if err := inRange(field+".sync", c.Sync); err != nil {
			return err
		}
		if c.Owner < 0 || c.Owner >= f.Instances {
			return fieldErr(field+".owner", "no instance %d: instances are numbered 0 to %d", c.Owner, f.Instances-1)
		}
	}
	if c.Model != CoordCentral && (c.OnFailure != 0 || c.Timeout != 0 || c.Clock != "") {
		return fieldErr(field, "on_failure, timeout and clock are a central store's; %s has none", c.Model)
	}
	if c.Model != CoordAsync && (c.Sync != 0 || c.Owner != 0) {
		return fieldErr(field, "sync and owner are async's; %s has none", c.Model)
	}
	if (c.Model == CoordLocal || c.Model == CoordSplit) && c.Latency.Kind != "" {
		return fieldErr(field+".latency", "%s has no store to wait for", c.Model)
	}
	return nil
}
