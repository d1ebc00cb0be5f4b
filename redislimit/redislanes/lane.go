package redislanes

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/internal/wording"
	"github.com/ratelab/ratelab/limiters"
)

// Prefix marks a stage of a replay's lane that runs against the real Redis:
// "redis/token-bucket:capacity=3,rate=100/1s", or one stage of a stack,
// "redis/token-bucket:capacity=3,rate=100/1s+concurrency:max=20".
const Prefix = "redis/"

// Lane is one lane of a replay (a --limiter): its stages' specs, and which of them run in
// Redis.
type Lane struct {
	Text   string // as given
	Specs  []limiters.Spec
	Remote []bool // Remote[k]: stage k is a redis/ stage
}

// HasRemote is whether any stage of the lane runs in Redis.
func (l Lane) HasRemote() bool {
	for _, r := range l.Remote {
		if r {
			return true
		}
	}
	return false
}

// ParseLane reads a lane: a stack (engine.ParseStack's words) whose stages may carry the
// redis/ prefix. A redis/ stage must be of a kind Redis can hold (limiters.Stored), and a
// keys(…) stage cannot share a lane with one.
func ParseLane(text string) (Lane, error) {
	lane := Lane{Text: text}
	parts, empty := wording.SplitList(text, "+", "stage")
	if empty != "" || len(parts) == 0 {
		_, err := engine.ParseStack(text) // the same words as every other --limiter
		return lane, err
	}
	for _, part := range parts {
		rest, remote := strings.CutPrefix(part, Prefix)
		if limiters.IsKeyedSpec(rest) {
			// keys(max=…,evict=…):SPEC, one limiter per row key, as run's lanes take it.
			if remote {
				return lane, fmt.Errorf("%s: a keys(…) stage cannot run in Redis (its table of keys is in-process)", part)
			}
			spec, err := limiters.ParseKeyedSpec(rest)
			if err != nil {
				return lane, err
			}
			lane.Specs = append(lane.Specs, spec)
			lane.Remote = append(lane.Remote, false)
			continue
		}
		spec, err := limiters.ParseSpec(rest)
		if err != nil {
			return lane, err
		}
		if _, stored := spec.(limiters.Stored); remote && !stored {
			return lane, fmt.Errorf("%s: kind %s cannot run in Redis (%s can)", part, spec.Kind(), limiters.StoredKinds())
		}
		lane.Specs = append(lane.Specs, spec)
		lane.Remote = append(lane.Remote, remote)
	}
	if lane.HasRemote() && slices.ContainsFunc(lane.Specs, func(s limiters.Spec) bool { _, keyed := s.(limiters.KeyedSpec); return keyed }) {
		return lane, fmt.Errorf("%s: a keys(…) stage and a redis/ stage cannot share a lane (the redis/ stages are built one limiter each); give each its own --limiter", text)
	}
	return lane, nil
}

// Name is the lane's column header: its stages, a redis/ stage with its prefix.
func (l Lane) Name() string {
	parts := make([]string, len(l.Specs))
	for k, s := range l.Specs {
		parts[k] = s.String()
		if l.Remote[k] {
			parts[k] = Prefix + parts[k]
		}
	}
	return strings.Join(parts, "+")
}
