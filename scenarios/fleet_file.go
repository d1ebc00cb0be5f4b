package scenarios

import (
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// fleet decodes the scenario's fleet: block:
//
//	fleet:
//	  instances: 3
//	  balancer: round-robin   # random, hash, sticky
func (d *decoder) fleet(n *yaml.Node, path string, f *engine.Fleet) error {
	var balancer string
	err := d.mapping(n, path, map[string]fieldFunc{
		"instances": d.integer(&f.Instances),
		"balancer":  d.str(&balancer),
	})
	f.Balancer = engine.Balancer(balancer)
	if err == nil && balancer == "" {
		f.Balancer = engine.BalanceRoundRobin
	}
	return err
}

// laneFleet decodes a lane's fleet: block:
//
//	fleet: {model: central, latency: {kind: constant, mean: 2ms}, timeout: 50ms, on_failure: fail-open}
//	fleet: {model: async, sync: 100ms, owner: 0, latency: {kind: constant, mean: 1ms}}
func (d *decoder) laneFleet(n *yaml.Node, path string, c *engine.LaneFleet) error {
	var model, clock, failure string
	var failureNode *yaml.Node
	err := d.mapping(n, path, map[string]fieldFunc{
		"model":      d.str(&model),
		"latency":    func(n *yaml.Node, path string) error { return d.distribution(n, path, &c.Latency) },
		"sync":       d.duration(&c.Sync),
		"owner":      d.integer(&c.Owner),
		"clock":      d.str(&clock),
		"on_failure": func(n *yaml.Node, path string) error { failureNode = n; return d.str(&failure)(n, path) },
		"timeout":    d.duration(&c.Timeout),
	})
	if err != nil {
		return err
	}
	if model == "" {
		return d.fail(n, path+".model", "missing (local, split, central, async)")
	}
	c.Model, c.Clock = engine.Coordination(model), engine.StoreClock(clock)
	if failure != "" {
		m, err := limiters.ParseFailureMode(failure)
		if err != nil {
			return d.fail(failureNode, path+".on_failure", "%v", err)
		}
		c.OnFailure = m
	}
	return nil
}

// fault decodes one fault of the faults: timeline:
//
//   - {kind: outage, from: 2s, until: 4s}            # instances: [1] for a partition
//   - {kind: latency, from: 2s, until: 4s, add: 80ms}
//   - {kind: clock, instance: 1, offset: 300ms}
//   - {kind: leave, instance: 2, at: 5s}
//   - {kind: join, instance: 2, at: 7s}
func (d *decoder) fault(n *yaml.Node, path string, f *engine.Fault) error {
	var kind string
	err := d.mapping(n, path, map[string]fieldFunc{
		"kind":     d.str(&kind),
		"from":     d.duration(&f.From),
		"until":    d.duration(&f.Until),
		"add":      d.duration(&f.Add),
		"instance": d.integer(&f.Instance),
		"offset":   d.duration(&f.Offset),
		"at":       d.duration(&f.At),
		"instances": func(n *yaml.Node, path string) error {
			return d.sequence(n, path, func(n *yaml.Node, path string) error {
				var i int
				if err := d.integer(&i)(n, path); err != nil {
					return err
				}
				f.Instances = append(f.Instances, i)
				return nil
			})
		},
	})
	if err != nil {
		return err
	}
	if kind == "" {
		return d.fail(n, path+".kind", "missing (outage, latency, clock, leave, join)")
	}
	f.Kind = engine.FaultKind(kind)
	// A field of another kind is refused where it is written, even at its zero value
	// ({kind: leave, from: 1s, until: 2s} was a permanent leave at 0s).
	if own := f.Kind.Fields(); own != nil {
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i]
			if key.Value != "kind" && !slices.Contains(own, key.Value) {
				return d.fail(key, path+"."+key.Value, "%s", f.Kind.ForeignFieldReason(key.Value))
			}
		}
	}
	return nil
}

// laneFleetNode writes a lane's fleet: block as laneFleet reads it.
func laneFleetNode(c engine.LaneFleet) *yaml.Node {
	m := mapping()
	m.Style = yaml.FlowStyle
	add(m, "model", str(string(c.Model)))
	if c.Latency.Kind != "" {
		add(m, "latency", distribution(c.Latency))
	}
	if c.Sync != 0 {
		add(m, "sync", duration(c.Sync))
	}
	if c.Owner != 0 {
		add(m, "owner", integer(c.Owner))
	}
	if c.Clock != "" {
		add(m, "clock", str(string(c.Clock)))
	}
	if c.OnFailure != 0 {
		add(m, "on_failure", str(c.OnFailure.String()))
	}
	if c.Timeout != 0 {
		add(m, "timeout", duration(c.Timeout))
	}
	return m
}

// faultNode writes one fault as fault reads it, with only its kind's fields.
func faultNode(f engine.Fault) *yaml.Node {
	m := mapping()
	m.Style = yaml.FlowStyle
	add(m, "kind", str(string(f.Kind)))
	switch f.Kind {
	case engine.FaultOutage, engine.FaultLatency:
		add(m, "from", duration(f.From))
		add(m, "until", duration(f.Until))
		if f.Add != 0 {
			add(m, "add", duration(f.Add))
		}
		if len(f.Instances) > 0 {
			seq := sequence()
			seq.Style = yaml.FlowStyle
			for _, i := range f.Instances {
				seq.Content = append(seq.Content, integer(i))
			}
			add(m, "instances", seq)
		}
	case engine.FaultClock:
		add(m, "instance", integer(f.Instance))
		add(m, "offset", duration(f.Offset))
	default:
		add(m, "instance", integer(f.Instance))
		add(m, "at", duration(f.At))
	}
	return m
}
