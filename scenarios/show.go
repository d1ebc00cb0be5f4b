package scenarios

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/ratelab/ratelab/engine"
)

// YAML writes sc as the scenario file it would be: the fields Load reads, each value written
// so that it reads back exactly (durations to the nanosecond, rates to the last bit), zero
// values left out where Load's default is the same. Load(YAML(sc)) runs to results
// byte-identical to sc's (a test holds it for every built-in). A built-in's embedded trace
// is written inline, under the trace source's data. A lane whose limiters are made by code
// (LaneSpec.Build) has no file form and is an error.
func YAML(sc *engine.Scenario) ([]byte, error) {
	root := mapping()
	add(root, "name", str(sc.Name))
	if sc.Description != "" {
		n := str(sc.Description)
		n.Style = yaml.FoldedStyle
		add(root, "description", n)
	}
	add(root, "seed", plain(strconv.FormatUint(sc.Seed, 10)))
	add(root, "horizon", duration(sc.Horizon))
	if sc.Bins != 0 {
		add(root, "bins", integer(sc.Bins))
	}
	if sc.Trace {
		add(root, "trace", plain("true"))
	}
	if len(sc.Windows) > 0 {
		seq := sequence()
		seq.Style = yaml.FlowStyle
		for _, w := range sc.Windows {
			seq.Content = append(seq.Content, duration(w))
		}
		add(root, "windows", seq)
	}
	sources := sequence()
	for _, src := range sc.Sources {
		sources.Content = append(sources.Content, source(src))
	}
	add(root, "sources", sources)
	add(root, "client", client(sc.Client))
	lanes := sequence()
	for i, lane := range sc.Lanes {
		n, err := laneNode(lane)
		if err != nil {
			return nil, fmt.Errorf("limiters[%d]: %w", i, err)
		}
		lanes.Content = append(lanes.Content, n)
	}
	add(root, "limiters", lanes)
	if ds := sc.Downstream; ds != nil {
		m := mapping()
		if ds.Pool != 0 {
			add(m, "pool", integer(ds.Pool))
		}
		if srv := ds.Server; srv != nil {
			sm := mapping()
			sm.Style = yaml.FlowStyle
			add(sm, "cores", integer(srv.Cores))
			if srv.Discipline != "" {
				add(sm, "discipline", str(string(srv.Discipline)))
			}
			if srv.Network != 0 {
				add(sm, "network", duration(srv.Network))
			}
			if srv.Timeout != 0 {
				add(sm, "timeout", duration(srv.Timeout))
			}
			if srv.TimeoutFrom != "" {
				add(sm, "timeout_from", str(string(srv.TimeoutFrom)))
			}
			add(m, "server", sm)
		}
		phases := sequence()
		for _, p := range ds.Phases {
			pm := mapping()
			pm.Style = yaml.FlowStyle
			add(pm, "from", duration(p.From))
			if p.Cores != 0 {
				add(pm, "cores", integer(p.Cores))
			}
			if p.BlackHole {
				add(pm, "black_hole", plain("true"))
			}
			if p.Errors != 0 {
				add(pm, "errors", plain(strconv.FormatFloat(p.Errors, 'g', -1, 64)))
			}
			add(pm, "service", distribution(p.Service))
			phases.Content = append(phases.Content, pm)
		}
		add(m, "phases", phases)
		add(root, "downstream", m)
	}
	if sc.Fleet != nil {
		m := mapping()
		add(m, "instances", integer(sc.Fleet.Instances))
		add(m, "balancer", str(string(sc.Fleet.Balancer)))
		add(root, "fleet", m)
	}
	if len(sc.Faults) > 0 {
		seq := sequence()
		for _, f := range sc.Faults {
			seq.Content = append(seq.Content, faultNode(f))
		}
		add(root, "faults", seq)
	}
	if path, value, bad := notUTF8(root, ""); bad {
		hint := ""
		if path == "name" {
			hint = " (a file without a name: is named after the file: add a name: line)"
		}
		return nil, fmt.Errorf("%s %q is not UTF-8 text, which a scenario file must be%s", path, value, hint)
	}
	blockWhenLong(root, 0)
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{root}}); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return foldDescription(out.Bytes()), nil
}

// lineWidth is the widest a line of a scenario file YAML writes may be (but for a word wider
// than that): it reads in an 80-column terminal.
const lineWidth = 80

// blockWhenLong writes in block style every flow-style mapping or sequence under the block
// mapping m (at column indent) whose line would be wider than lineWidth, so that
// "fleet: {model: central, latency: {…}, on_failure: fail-open, timeout: 20ms}" becomes one
// line per key. It follows the encoder's layout: a mapping's values 2 columns in, a
// sequence's items "- " 2 columns in and their contents 4.
func blockWhenLong(m *yaml.Node, indent int) {
	if m.Kind != yaml.MappingNode || m.Style&yaml.FlowStyle != 0 {
		return
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		key, value := m.Content[i], m.Content[i+1]
		unflow(value, indent+len(key.Value)+2)
		switch value.Kind {
		case yaml.MappingNode:
			blockWhenLong(value, indent+2)
		case yaml.SequenceNode:
			if value.Style&yaml.FlowStyle != 0 {
				continue
			}
			for _, item := range value.Content {
				unflow(item, indent+4)
				blockWhenLong(item, indent+4)
			}
		}
	}
}

// unflow turns n, a flow-style collection written from column col, into block style when its
// line would be wider than lineWidth.
func unflow(n *yaml.Node, col int) {
	if n.Style&yaml.FlowStyle == 0 || (n.Kind != yaml.MappingNode && n.Kind != yaml.SequenceNode) {
		return
	}
	text, err := yaml.Marshal(n)
	if err != nil || col+len([]rune(strings.TrimSuffix(string(text), "\n"))) <= lineWidth {
		return
	}
	n.Style &^= yaml.FlowStyle
}

// foldDescription wraps the description's folded block, which the encoder writes as one line,
// at spaces before column lineWidth: in a folded block a line break between two lines reads as one
// space, so the text is unchanged. A break is only put at a single space between two words
// (a line that began with a space would be kept as written, break and all).
func foldDescription(text []byte) []byte {
	const head, indent, width = "description: >-\n", "  ", lineWidth
	i := bytes.Index(text, []byte(head))
	if i < 0 {
		return text
	}
	start := i + len(head)
	end := start + bytes.IndexByte(text[start:], '\n')
	line := string(text[start+len(indent) : end])
	var b strings.Builder
	for len(line) > width-len(indent) {
		cut := -1
		for k := width - len(indent); k > 0; k-- {
			if line[k] == ' ' && line[k-1] != ' ' && k+1 < len(line) && line[k+1] != ' ' {
				cut = k
				break
			}
		}
		if cut < 0 {
			break
		}
		b.WriteString(indent + line[:cut] + "\n")
		line = line[cut+1:]
	}
	b.WriteString(indent + line)
	return append(append(append([]byte{}, text[:start]...), b.String()...), text[end:]...)
}

func source(src engine.Source) *yaml.Node {
	m := mapping()
	add(m, "kind", str(string(src.Kind)))
	for _, f := range []struct {
		name string
		v    float64
	}{{"rate", src.Rate}, {"rate_to", src.RateTo}, {"amplitude", src.Amplitude}} {
		if f.v != 0 {
			add(m, f.name, plain(strconv.FormatFloat(f.v, 'g', -1, 64)))
		}
	}
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{"from", src.From}, {"until", src.Until}, {"on", src.On}, {"off", src.Off}, {"period", src.Period}} {
		if f.v != 0 {
			add(m, f.name, duration(f.v))
		}
	}
	if src.Poisson {
		add(m, "poisson", plain("true"))
	}
	if src.Permits != 0 {
		add(m, "permits", integer(src.Permits))
	}
	if src.Key != "" {
		add(m, "key", str(src.Key))
	}
	if src.Class != "" {
		add(m, "class", str(src.Class))
	}
	if p := src.Keys; p != nil {
		km := mapping()
		km.Style = yaml.FlowStyle
		add(km, "kind", str(string(p.Kind)))
		if p.Clients != 0 {
			add(km, "clients", integer(p.Clients))
		}
		if p.Exponent != 0 {
			add(km, "exponent", plain(strconv.FormatFloat(p.Exponent, 'g', -1, 64)))
		}
		if p.Share != 0 {
			add(km, "share", plain(strconv.FormatFloat(p.Share, 'g', -1, 64)))
		}
		if p.Prefix != "" {
			add(km, "prefix", str(p.Prefix))
		}
		if p.Noisy != "" {
			add(km, "noisy", str(p.Noisy))
		}
		add(m, "keys", km)
	}
	if len(src.Bursts) > 0 {
		seq := sequence()
		for _, b := range src.Bursts {
			bm := mapping()
			bm.Style = yaml.FlowStyle
			add(bm, "at", duration(b.At))
			add(bm, "count", integer(b.Count))
			if b.Spread != 0 {
				add(bm, "spread", duration(b.Spread))
			}
			seq.Content = append(seq.Content, bm)
		}
		add(m, "bursts", seq)
	}
	if len(src.Script) > 0 {
		seq := sequence()
		for _, a := range src.Script {
			am := mapping()
			am.Style = yaml.FlowStyle
			add(am, "at", duration(a.At))
			if a.Permits != 0 {
				add(am, "permits", integer(a.Permits))
			}
			if a.Key != "" {
				add(am, "key", str(a.Key))
			}
			seq.Content = append(seq.Content, am)
		}
		add(m, "arrivals", seq)
	}
	if src.TraceFile != "" {
		add(m, "file", str(src.TraceFile))
		for _, f := range [][2]string{{"log_format", src.Log.Format}, {"log_fields", src.Log.Fields}, {"log_key", src.Log.Key}} {
			if f[1] != "" {
				add(m, f[0], str(f[1]))
			}
		}
	} else if src.TraceData != "" {
		n := str(src.TraceData)
		n.Style = yaml.LiteralStyle
		add(m, "data", n)
	}
	return m
}

func client(c engine.Client) *yaml.Node {
	m := mapping()
	m.Style = yaml.FlowStyle
	add(m, "policy", str(string(c.Policy)))
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{"delay", c.Delay}, {"max_delay", c.MaxDelay}} {
		if f.v != 0 {
			add(m, f.name, duration(f.v))
		}
	}
	if c.Jitter {
		add(m, "jitter", plain("true"))
	}
	if c.MaxAttempts != 0 {
		add(m, "max_attempts", integer(c.MaxAttempts))
	}
	if c.QueueSize != 0 {
		add(m, "queue_size", integer(c.QueueSize))
	}
	if c.Timeout != 0 {
		add(m, "timeout", duration(c.Timeout))
	}
	if c.Discipline != "" {
		add(m, "discipline", str(string(c.Discipline)))
	}
	switch {
	case c.RetryQuota == engine.NoRetryQuota:
		add(m, "retry_quota", plain("none"))
	case c.RetryQuota != 0:
		add(m, "retry_quota", integer(c.RetryQuota))
	}
	if c.MaxElapsed != 0 {
		add(m, "max_elapsed", duration(c.MaxElapsed))
	}
	if c.Group != "" {
		add(m, "group", plain(c.Group))
	}
	return m
}

func laneNode(lane engine.LaneSpec) (*yaml.Node, error) {
	if lane.Build != nil {
		return nil, fmt.Errorf("%s: its limiters are made by code (LaneSpec.Build), which a scenario file cannot say", lane.Label())
	}
	spec := str(engine.StackString(lane.Stack))
	if lane.Name == "" && lane.Client == nil && lane.MaxWait == 0 && !lane.Waste && lane.Fleet == nil {
		return spec, nil
	}
	m := mapping()
	add(m, "spec", spec)
	if lane.Name != "" {
		add(m, "name", str(lane.Name))
	}
	if lane.Client != nil {
		add(m, "client", client(*lane.Client))
	}
	if lane.MaxWait != 0 {
		add(m, "max_wait", duration(lane.MaxWait))
	}
	if lane.Waste {
		add(m, "refund", plain("false"))
	}
	if lane.Fleet != nil {
		add(m, "fleet", laneFleetNode(*lane.Fleet))
	}
	return m, nil
}

func distribution(d engine.Distribution) *yaml.Node {
	m := mapping()
	m.Style = yaml.FlowStyle
	add(m, "kind", str(string(d.Kind)))
	mean := "mean"
	if d.Kind == engine.DistLogNormal {
		mean = "median"
	}
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{mean, d.Mean}, {"min", d.Min}, {"max", d.Max}} {
		if f.v != 0 {
			add(m, f.name, duration(f.v))
		}
	}
	if d.Sigma != 0 {
		add(m, "sigma", plain(strconv.FormatFloat(d.Sigma, 'g', -1, 64)))
	}
	return m
}

func mapping() *yaml.Node  { return &yaml.Node{Kind: yaml.MappingNode} }
func sequence() *yaml.Node { return &yaml.Node{Kind: yaml.SequenceNode} }

// str is a string scalar, quoted by the encoder when it would read as something else.
func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

// plain is a scalar written as it is (numbers, booleans, durations).
func plain(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: s} }

func integer(n int) *yaml.Node { return plain(strconv.Itoa(n)) }

// duration is d exactly, as time.ParseDuration reads it, without the zero units
// time.Duration.String adds: 1h0m0s is 1h, 2m30s stays.
func duration(d time.Duration) *yaml.Node {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return plain(s)
}

func add(m *yaml.Node, key string, value *yaml.Node) {
	m.Content = append(m.Content, plain(key), value)
}

// notUTF8 is the path ("limiters[2].name") and value of the first string under n that is not
// UTF-8 text, which yaml refuses to write ("cannot marshal invalid UTF-8 data as !!str"). A
// loaded file's strings are UTF-8 (Load refuses other bytes), but a name can come from
// elsewhere: the file's own name, when it has no name: field.
func notUTF8(n *yaml.Node, path string) (string, string, bool) {
	switch n.Kind {
	case yaml.ScalarNode:
		return path, n.Value, !utf8.ValidString(n.Value)
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key := n.Content[i].Value
			if path != "" {
				key = path + "." + key
			}
			if p, v, bad := notUTF8(n.Content[i+1], key); bad {
				return p, v, true
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if p, v, bad := notUTF8(c, fmt.Sprintf("%s[%d]", path, i)); bad {
				return p, v, true
			}
		}
	}
	return "", "", false
}
