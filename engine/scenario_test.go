package engine

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/limiters"
)

func validScenario(t *testing.T) *Scenario {
	return &Scenario{Horizon: 10 * sec, Client: Client{Policy: PolicyDrop}, Lanes: stacks(t, "token-bucket:capacity=3,rate=100/1s"),
		Sources:    []Source{{Kind: SourceConstant, Rate: 10}},
		Downstream: &Downstream{Pool: 5, Phases: []Phase{{Service: Distribution{Kind: DistConstant, Mean: ms}}}}}
}

func TestValidateNamesTheField(t *testing.T) {
	retry := Client{Policy: PolicyRetry, Delay: ms, MaxAttempts: 3}
	queue := Client{Policy: PolicyQueue, QueueSize: 3, Timeout: ms}
	for _, tc := range []struct {
		field string
		mod   func(sc *Scenario)
	}{
		{"horizon", func(sc *Scenario) { sc.Horizon = 0 }},
		{"bins", func(sc *Scenario) { sc.Bins = -1 }},
		{"bins", func(sc *Scenario) { sc.Bins = 100_001 }},
		{"sources", func(sc *Scenario) { sc.Sources = nil }},
		{"sources[0].kind", func(sc *Scenario) { sc.Sources[0].Kind = "wave" }},
		{"sources[0].rate", func(sc *Scenario) { sc.Sources[0].Rate = -1 }},
		{"sources[0].rate", func(sc *Scenario) { sc.Sources[0].Rate = 0 }},
		{"sources[0].rate", func(sc *Scenario) { sc.Sources[0].Rate = math.NaN() }},
		{"sources[0].rate", func(sc *Scenario) { sc.Sources[0].Rate = math.Inf(1) }},
		{"sources[0].rate", func(sc *Scenario) { sc.Sources[0].Kind = SourcePoisson; sc.Sources[0].Rate = 2e9 }},
		{"sources[0].permits", func(sc *Scenario) { sc.Sources[0].Permits = -2 }},
		{"sources[0].from", func(sc *Scenario) { sc.Sources[0].From = -sec }},
		{"sources[0].until", func(sc *Scenario) { sc.Sources[0].Until = -sec }},
		{"sources[0].until", func(sc *Scenario) { sc.Sources[0].From, sc.Sources[0].Until = 2*sec, sec }},
		{"sources[0].on", func(sc *Scenario) { sc.Sources[0] = Source{Kind: SourceOnOff, Rate: 1, Off: sec} }},
		{"sources[0].off", func(sc *Scenario) { sc.Sources[0] = Source{Kind: SourceOnOff, Rate: 1, On: sec, Off: -sec} }},
		{"sources[0].rate", func(sc *Scenario) { sc.Sources[0] = Source{Kind: SourceRamp, Rate: -1, RateTo: 5} }},
		{"sources[0].rate_to", func(sc *Scenario) { sc.Sources[0] = Source{Kind: SourceRamp, Rate: 1, RateTo: -5} }},
		{"sources[0].rate_to", func(sc *Scenario) { sc.Sources[0] = Source{Kind: SourceRamp} }},
		{"sources[0].amplitude", func(sc *Scenario) { sc.Sources[0] = Source{Kind: SourceSine, Rate: 1, Amplitude: 2, Period: sec} }},
		{"sources[0].amplitude", func(sc *Scenario) { sc.Sources[0] = Source{Kind: SourceSine, Rate: 1, Amplitude: -1, Period: sec} }},
		{"sources[0].period", func(sc *Scenario) { sc.Sources[0] = Source{Kind: SourceSine, Rate: 1, Amplitude: 1} }},
		{"sources[0].bursts", func(sc *Scenario) { sc.Sources[0] = Source{Kind: SourceBursts} }},
		{"sources[0].bursts[1].at", func(sc *Scenario) {
			sc.Sources[0] = Source{Kind: SourceBursts, Bursts: []Burst{{At: sec, Count: 1}, {At: -1, Count: 1}}}
		}},
		{"sources[0].bursts[1].at", func(sc *Scenario) {
			sc.Sources[0] = Source{Kind: SourceBursts, Bursts: []Burst{{At: sec, Count: 1}, {At: 0, Count: 1}}}
		}},
		{"sources[0].bursts[0].count", func(sc *Scenario) { sc.Sources[0] = Source{Kind: SourceBursts, Bursts: []Burst{{Count: 0}}} }},
		{"sources[0].bursts[0].spread", func(sc *Scenario) {
			sc.Sources[0] = Source{Kind: SourceBursts, Bursts: []Burst{{Count: 1, Spread: -1}}}
		}},
		{"sources[0].arrivals", func(sc *Scenario) { sc.Sources[0] = Source{Kind: SourceScript} }},
		{"sources[0].arrivals[1].at", func(sc *Scenario) { sc.Sources[0] = Source{Kind: SourceScript, Script: []Arrival{{At: 5}, {At: 4}}} }},
		{"sources[0].arrivals[0].at", func(sc *Scenario) { sc.Sources[0] = Source{Kind: SourceScript, Script: []Arrival{{At: -5}}} }},
		{"sources[0].arrivals[0].permits", func(sc *Scenario) {
			sc.Sources[0] = Source{Kind: SourceScript, Script: []Arrival{{At: 5, Permits: -1}}}
		}},
		{"sources[0].file", func(sc *Scenario) { sc.Sources[0] = Source{Kind: SourceTrace} }},
		{"sources[1].rate", func(sc *Scenario) { sc.Sources = append(sc.Sources, Source{Kind: SourcePoisson}) }},
		{"client.policy", func(sc *Scenario) { sc.Client.Policy = "pray" }},
		{"client.max_attempts", func(sc *Scenario) { sc.Client = retry; sc.Client.MaxAttempts = 0 }},
		{"client.delay", func(sc *Scenario) { sc.Client = retry; sc.Client.Delay = 0 }},
		{"client.max_delay", func(sc *Scenario) { sc.Client = retry; sc.Client.Policy = PolicyBackoff; sc.Client.MaxDelay = -1 }},
		{"client.queue_size", func(sc *Scenario) { sc.Client = queue; sc.Client.QueueSize = 0 }},
		{"client.timeout", func(sc *Scenario) { sc.Client = queue; sc.Client.Timeout = 0 }},
		{"limiters", func(sc *Scenario) { sc.Lanes = nil }},
		{"limiters[1]", func(sc *Scenario) { sc.Lanes = append(sc.Lanes, LaneSpec{}) }},
		{"limiters[0]", func(sc *Scenario) { sc.Lanes[0].Stack[0] = limiters.TokenBucketSpec{Rate: limiters.PerSecond(100)} }},
		{"limiters[0].client.delay", func(sc *Scenario) { c := retry; c.Delay = -1; sc.Lanes[0].Client = &c }},
		{"downstream.pool", func(sc *Scenario) { sc.Downstream.Pool = -1 }},
		{"downstream.service", func(sc *Scenario) { sc.Downstream.Phases = nil }},
		{"downstream.phases[0].from", func(sc *Scenario) { sc.Downstream.Phases[0].From = sec }},
		{"downstream.phases[1].from", func(sc *Scenario) {
			sc.Downstream.Phases = append(sc.Downstream.Phases, Phase{From: 0, Service: sc.Downstream.Phases[0].Service})
		}},
		{"downstream.phases[0].service.kind", func(sc *Scenario) { sc.Downstream.Phases[0].Service.Kind = "gamma" }},
		{"downstream.phases[0].service.mean", func(sc *Scenario) { sc.Downstream.Phases[0].Service.Mean = -1 }},
		{"downstream.phases[0].service.min", func(sc *Scenario) {
			sc.Downstream.Phases[0].Service = Distribution{Kind: DistUniform, Min: -1, Max: 5}
		}},
		{"downstream.phases[0].service.max", func(sc *Scenario) {
			sc.Downstream.Phases[0].Service = Distribution{Kind: DistUniform, Min: 5, Max: 4}
		}},
		{"downstream.phases[0].service.sigma", func(sc *Scenario) {
			sc.Downstream.Phases[0].Service = Distribution{Kind: DistLogNormal, Mean: ms, Sigma: 0}
		}},
		{"downstream.phases[0].service.median", func(sc *Scenario) {
			sc.Downstream.Phases[0].Service = Distribution{Kind: DistLogNormal, Mean: 0, Sigma: 1}
		}},
		{"windows[1]", func(sc *Scenario) { sc.Windows = []time.Duration{sec, 0} }},
	} {
		sc := validScenario(t)
		require.NoError(t, sc.Validate())
		tc.mod(sc)
		err := sc.Validate()
		var fe *FieldError
		if assert.True(t, errors.As(err, &fe), "%s: want a FieldError, got %v", tc.field, err) {
			assert.Equal(t, tc.field, fe.Field, "%v", err)
			assert.NotEmpty(t, fe.Reason)
			assert.Equal(t, fe.Field+": "+fe.Reason, err.Error())
		}
		_, runErr := runErr(sc)
		assert.Equal(t, err, runErr, "Run validates first")
	}
}
