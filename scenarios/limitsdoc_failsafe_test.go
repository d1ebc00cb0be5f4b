package scenarios

import "github.com/ratelab/ratelab/limiters/failsafego"

// failsafeRanges are the limiter table's rows for failsafe-adaptive: what its Validate
// accepts, which is what failsafe-go's builder takes without panicking, with specs at and
// past the edges.
func failsafeRanges() []limiterRange {
	const (
		limits  = "the library's WithLimits panics on limits out of order; the limit is a count of permits, in 32 bits"
		builder = "failsafe-go's builder panics on others"
		span    = "a span of virtual time, at most 2^62 ns"
	)
	k := failsafego.KindFailsafeAdaptive
	row := func(field, accepted, why string, valid, invalid []string) limiterRange {
		return limiterRange{kind: k, field: field, accepted: accepted, why: why, valid: valid, invalid: invalid}
	}
	return []limiterRange{
		row("initial", "between min and max (default 20)", limits,
			[]string{"failsafe-adaptive:initial=1,min=1,max=1", "failsafe-adaptive:initial=200"}, []string{"failsafe-adaptive:initial=201", "failsafe-adaptive:initial=5,min=6"}),
		row("min", "1 to max (default 1)", limits,
			[]string{"failsafe-adaptive:min=1", "failsafe-adaptive:initial=200,min=200,max=200"}, []string{"failsafe-adaptive:min=0", "failsafe-adaptive:initial=20,min=21,max=20"}),
		row("max", "1 to 2147483647 (default 200)", limits,
			[]string{"failsafe-adaptive:initial=1,min=1,max=1", "failsafe-adaptive:max=2147483647"}, []string{"failsafe-adaptive:max=2147483648"}),
		row("factor", "a number from 1 to 1e6 (default 5)", builder+" (WithMaxLimitFactor below 1); the cap is factor × in flight, a float",
			[]string{"failsafe-adaptive:factor=1", "failsafe-adaptive:factor=1000000"}, []string{"failsafe-adaptive:factor=0.99", "failsafe-adaptive:factor=1000001"}),
		row("recent_min", "a positive duration, at most recent_max (default 1s)", builder+" (WithRecentWindow with min above max)",
			[]string{"failsafe-adaptive:recent_min=1ns", "failsafe-adaptive:recent_min=30s"}, []string{"failsafe-adaptive:recent_min=31s", "failsafe-adaptive:recent_min=0s"}),
		row("recent_max", "at least recent_min, "+span+" (default 30s)", "a window's end is now + at most recent_max: the sum must not overflow",
			[]string{"failsafe-adaptive:recent_max=1s", "failsafe-adaptive:recent_max=4611686018427387904ns"}, []string{"failsafe-adaptive:recent_max=999ms", "failsafe-adaptive:recent_max=4611686018427387905ns"}),
		row("samples", "1 to 2^63−1 (default 50)", "executions a window needs before it moves the limit",
			[]string{"failsafe-adaptive:samples=1"}, []string{"failsafe-adaptive:samples=0"}),
		row("quantile", "a number in (0, 1) (default 0.9)", builder+" (WithRecentQuantile)",
			[]string{"failsafe-adaptive:quantile=0.01", "failsafe-adaptive:quantile=0.99"}, []string{"failsafe-adaptive:quantile=0", "failsafe-adaptive:quantile=1"}),
		row("baseline", "1 to 2^63−1 windows (default 10)", "the baseline's moving-average weight is 2/(baseline+1)",
			[]string{"failsafe-adaptive:baseline=1"}, []string{"failsafe-adaptive:baseline=0"}),
		row("correlation", "at least 2 windows (default 50)", "a correlation needs two pairs",
			[]string{"failsafe-adaptive:correlation=2"}, []string{"failsafe-adaptive:correlation=1"}),
		row("stabilization", "a positive duration, "+span+", or omitted (off)", "the span the most in flight is remembered over, added to times",
			[]string{"failsafe-adaptive:stabilization=1ns", "failsafe-adaptive:stabilization=1h"}, []string{"failsafe-adaptive:stabilization=0s", "failsafe-adaptive:stabilization=4611686018427387905ns"}),
	}
}
