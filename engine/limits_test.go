package engine

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const maxDuration = time.Duration(math.MaxInt64)

// Every time and duration a scenario names is below 2^62ns (146 years), and a request asks
// for at most MaxPermits: validation refuses the rest up front, naming the field, so that no
// overflow reaches the clock, the random draws or the counters.
func TestValidateRefusesValuesPastTheRange(t *testing.T) {
	backoff := Client{Policy: PolicyBackoff, Delay: ms, Jitter: true, MaxAttempts: 3}
	queue := Client{Policy: PolicyQueue, QueueSize: 3, Timeout: ms}
	for _, tc := range []struct {
		field, reason string
		mod           func(sc *Scenario)
	}{
		{"horizon", "must be less than 2^62ns (about 146 years), got 1281023h53m38.427387904s", func(sc *Scenario) { sc.Horizon = MaxTime }},
		{"horizon", "2^62ns", func(sc *Scenario) { sc.Horizon = maxDuration }},
		{"sources[0].from", "2^62ns", func(sc *Scenario) { sc.Sources[0].From = MaxTime }},
		{"sources[0].until", "2^62ns", func(sc *Scenario) { sc.Sources[0].Until = maxDuration }},
		{"sources[0].permits", "at most 2147483647", func(sc *Scenario) { sc.Sources[0].Permits = math.MaxInt64 }},
		{"sources[0].permits", "at most 2147483647", func(sc *Scenario) { sc.Sources[0].Permits = MaxPermits + 1 }},
		{"sources[0].on", "2^62ns", func(sc *Scenario) { sc.Sources[0] = Source{Kind: SourceOnOff, Rate: 1, On: maxDuration, Off: sec} }},
		{"sources[0].off", "2^62ns", func(sc *Scenario) { sc.Sources[0] = Source{Kind: SourceOnOff, Rate: 1, On: sec, Off: maxDuration} }},
		{"sources[0].period", "2^62ns", func(sc *Scenario) {
			sc.Sources[0] = Source{Kind: SourceSine, Rate: 1, Amplitude: 1, Period: maxDuration}
		}},
		{"sources[0].arrivals[0].at", "2^62ns", func(sc *Scenario) { sc.Sources[0] = scriptFrom(0, maxDuration-5) }},
		{"sources[0].arrivals[1].at", "from (1281023h53m38.427387903s) + at (1s) is past 2^62ns", func(sc *Scenario) {
			sc.Sources[0] = scriptFrom(MaxTime-1, 0, sec)
		}},
		{"sources[0].from", "2^62ns", func(sc *Scenario) { sc.Sources[0] = scriptFrom(2_000_000*time.Hour, 1_000_000*time.Hour) }},
		{"sources[0].arrivals[1].at", "from (1000000h0m0s) + at (1000000h0m0s) is past 2^62ns", func(sc *Scenario) {
			sc.Sources[0] = scriptFrom(1_000_000*time.Hour, 0, 1_000_000*time.Hour)
		}},
		{"sources[0].arrivals[0].permits", "at most 2147483647", func(sc *Scenario) {
			sc.Sources[0] = Source{Kind: SourceScript, Script: []Arrival{{At: 5, Permits: math.MaxInt64}}}
		}},
		{"sources[0].bursts[0].at", "2^62ns", func(sc *Scenario) {
			sc.Sources[0] = Source{Kind: SourceBursts, Bursts: []Burst{{At: maxDuration, Count: 1}}}
		}},
		{"sources[0].bursts[0].at", "from (", func(sc *Scenario) {
			sc.Sources[0] = Source{Kind: SourceBursts, From: MaxTime / 2, Bursts: []Burst{{At: MaxTime / 2, Count: 1}}}
		}},
		{"sources[0].bursts[0].spread", "2^62ns", func(sc *Scenario) {
			sc.Sources[0] = Source{Kind: SourceBursts, Bursts: []Burst{{Count: 2, Spread: maxDuration}}}
		}},
		{"client.delay", "2^62ns", func(sc *Scenario) { sc.Client = backoff; sc.Client.Delay = maxDuration }},
		{"client.max_delay", "2^62ns", func(sc *Scenario) { sc.Client = backoff; sc.Client.MaxDelay = MaxTime }},
		{"client.timeout", "2^62ns", func(sc *Scenario) { sc.Client = queue; sc.Client.Timeout = maxDuration }},
		{"limiters[0].client.delay", "2^62ns", func(sc *Scenario) {
			c := Client{Policy: PolicyRetry, Delay: maxDuration, MaxAttempts: 2}
			sc.Lanes[0].Client = &c
		}},
		{"downstream.phases[1].from", "2^62ns", func(sc *Scenario) {
			sc.Downstream.Phases = append(sc.Downstream.Phases, Phase{From: maxDuration, Service: sc.Downstream.Phases[0].Service})
		}},
		{"downstream.phases[0].service.max", "2^62ns", func(sc *Scenario) {
			sc.Downstream.Phases[0].Service = Distribution{Kind: DistUniform, Min: 0, Max: maxDuration}
		}},
		{"downstream.phases[0].service.min", "2^62ns", func(sc *Scenario) {
			sc.Downstream.Phases[0].Service = Distribution{Kind: DistUniform, Min: MaxTime, Max: maxDuration}
		}},
		{"downstream.phases[0].service.mean", "2^62ns", func(sc *Scenario) {
			sc.Downstream.Phases[0].Service = Distribution{Kind: DistExponential, Mean: maxDuration}
		}},
		{"downstream.phases[0].service.mean", "2^62ns", func(sc *Scenario) {
			sc.Downstream.Phases[0].Service = Distribution{Kind: DistConstant, Mean: MaxTime}
		}},
		{"downstream.phases[0].service.median", "2^62ns", func(sc *Scenario) {
			sc.Downstream.Phases[0].Service = Distribution{Kind: DistLogNormal, Mean: maxDuration, Sigma: 1}
		}},
		{"windows[0]", "2^62ns", func(sc *Scenario) { sc.Windows = []time.Duration{maxDuration} }},
	} {
		sc := validScenario(t)
		require.NoError(t, sc.Validate())
		tc.mod(sc)
		err := sc.Validate()
		var fe *FieldError
		if assert.True(t, errors.As(err, &fe), "%s: want a FieldError, got %v", tc.field, err) {
			assert.Equal(t, tc.field, fe.Field, "%v", err)
			assert.Contains(t, fe.Reason, tc.reason, "%s", tc.field)
		}
		_, runErr := runErr(sc)
		assert.Equal(t, err, runErr, "Run validates first")
	}
}

// scriptFrom is a script source starting at from, with arrivals at the given offsets.
func scriptFrom(from time.Duration, at ...time.Duration) Source {
	s := Source{Kind: SourceScript, From: from}
	for _, a := range at {
		s.Script = append(s.Script, Arrival{At: a})
	}
	return s
}
