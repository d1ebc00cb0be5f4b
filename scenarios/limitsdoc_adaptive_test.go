package scenarios

import "github.com/ratelab/ratelab/limiters"

// adaptiveRanges are the limiter table's rows for the adaptive kinds (aimd, vegas, gradient,
// gradient2): what each Validate accepts, with specs at and past the edges.
func adaptiveRanges() []limiterRange {
	const (
		limits   = "the limit is a count of permits held, in 32 bits, and starts inside [min, max]"
		window   = "positive durations of at least 100ms, or omitted (every sample updates the limit)"
		whyWin   = "Netflix's WindowedLimit refuses windows under 100ms"
		size     = "at least 10 (default 10); read only with window"
		whySize  = "Netflix's WindowedLimit refuses fewer than 10 samples a window"
		smooth   = "a number in (0, 1]"
		whySmth  = "the weight of the new estimate in a convex combination: past 1 the limit would overshoot"
		tol      = "a number, at least 1"
		whyTol   = "Netflix's builders refuse a tolerance below 1 (it would shrink on latencies at the minimum)"
		probe    = "1 to 2^63−1 samples (an int)"
		whyProbe = "a count of samples"
		seed     = "1 to 2^63−1 (default 1)"
		whySeed  = "the probe jitter's PCG seed: a run's probes fall on the same samples every time"
	)
	row := func(k limiters.Kind, field, accepted, why string, valid, invalid []string) limiterRange {
		return limiterRange{kind: k, field: field, accepted: accepted, why: why, valid: valid, invalid: invalid}
	}
	a, v, g, g2 := limiters.KindAIMD, limiters.KindVegas, limiters.KindGradient, limiters.KindGradient2
	return []limiterRange{
		row(a, "initial", "between min and max (default 20)", limits,
			[]string{"aimd:initial=1,min=1,max=1", "aimd:initial=200,min=20,max=200"}, []string{"aimd:initial=201,min=20,max=200", "aimd:initial=19,min=20,max=200"}),
		row(a, "min", "1 to max (default 20)", limits,
			[]string{"aimd:initial=1,min=1,max=200", "aimd:initial=200,min=200,max=200"}, []string{"aimd:initial=20,min=0,max=200", "aimd:initial=20,min=201,max=200"}),
		row(a, "max", "1 to 2147483647 (default 200)", limits,
			[]string{"aimd:initial=1,min=1,max=1", "aimd:initial=20,min=20,max=2147483647"}, []string{"aimd:initial=20,min=20,max=2147483648"}),
		row(a, "backoff", "a number in [0.5, 1) (default 0.9)", "Netflix's AIMDLimit.Builder refuses others",
			[]string{"aimd:backoff=0.5", "aimd:backoff=0.99"}, []string{"aimd:backoff=1", "aimd:backoff=0.49"}),
		row(a, "timeout", "a positive duration (default 5s)", "an answer slower than this counts as a drop",
			[]string{"aimd:timeout=1ns", "aimd:timeout=1h"}, []string{"aimd:timeout=0s", "aimd:timeout=-1s"}),
		row(a, "window", window, whyWin, []string{"aimd:window=100ms", "aimd:window=1m"}, []string{"aimd:window=99ms"}),
		row(a, "window_size", size, whySize, []string{"aimd:window=1s,window_size=10", "aimd:window=1s,window_size=1000"}, []string{"aimd:window=1s,window_size=9"}),

		row(v, "initial", "between 1 and max (default 20)", limits,
			[]string{"vegas:initial=1,max=1", "vegas:initial=1000,max=1000"}, []string{"vegas:initial=1001,max=1000", "vegas:initial=0"}),
		row(v, "max", "1 to 2147483647 (default 1000)", limits,
			[]string{"vegas:initial=1,max=1", "vegas:initial=20,max=2147483647"}, []string{"vegas:initial=20,max=2147483648", "vegas:initial=20,max=0"}),
		row(v, "smoothing", smooth+" (default 1)", whySmth, []string{"vegas:smoothing=1", "vegas:smoothing=0.01"}, []string{"vegas:smoothing=0", "vegas:smoothing=1.5"}),
		row(v, "probe", probe+" (default 30)", whyProbe, []string{"vegas:probe=1", "vegas:probe=1000"}, []string{"vegas:probe=0"}),
		row(v, "seed", seed, whySeed, []string{"vegas:seed=1", "vegas:seed=99"}, []string{"vegas:seed=0"}),
		row(v, "window", window, whyWin, []string{"vegas:window=100ms"}, []string{"vegas:window=10ms"}),
		row(v, "window_size", size, whySize, []string{"vegas:window=1s,window_size=10"}, []string{"vegas:window=1s,window_size=2"}),

		row(g, "initial", "between min and max (default 50)", limits,
			[]string{"gradient:initial=1,min=1,max=4", "gradient:initial=1000,min=1,max=1000"}, []string{"gradient:initial=1001,min=1,max=1000"}),
		row(g, "min", "1 to max (default 1)", limits,
			[]string{"gradient:initial=50,min=1,max=1000", "gradient:initial=50,min=50,max=1000"}, []string{"gradient:initial=50,min=0,max=1000", "gradient:initial=50,min=51,max=1000"}),
		row(g, "max", "4 to 2147483647 (default 1000)", "the limit never falls below the queue size, max(4, √limit): a max below 4 could not hold",
			[]string{"gradient:initial=4,min=1,max=4", "gradient:initial=50,min=1,max=2147483647"}, []string{"gradient:initial=3,min=1,max=3", "gradient:initial=50,min=1,max=2147483648"}),
		row(g, "smoothing", smooth+" (default 0.2)", whySmth, []string{"gradient:smoothing=1"}, []string{"gradient:smoothing=0"}),
		row(g, "tolerance", tol+" (default 2)", whyTol, []string{"gradient:tolerance=1"}, []string{"gradient:tolerance=0.99"}),
		row(g, "backoff", "a number in [0.5, 1] (default 0.9)", "Netflix's GradientLimit.Builder refuses others",
			[]string{"gradient:backoff=0.5", "gradient:backoff=1"}, []string{"gradient:backoff=0.4", "gradient:backoff=1.1"}),
		row(g, "probe", probe+" (default 1000)", whyProbe, []string{"gradient:probe=1"}, []string{"gradient:probe=0"}),
		row(g, "seed", seed, whySeed, []string{"gradient:seed=1"}, []string{"gradient:seed=0"}),
		row(g, "window", window, whyWin, []string{"gradient:window=100ms"}, []string{"gradient:window=1ms"}),
		row(g, "window_size", size, whySize, []string{"gradient:window=1s,window_size=10"}, []string{"gradient:window=1s,window_size=1"}),

		row(g2, "initial", "between min and max (default 20)", limits,
			[]string{"gradient2:initial=1,min=1,max=1", "gradient2:initial=200,min=20,max=200"}, []string{"gradient2:initial=19,min=20,max=200"}),
		row(g2, "min", "1 to max (default 20)", limits,
			[]string{"gradient2:initial=20,min=1,max=200", "gradient2:initial=200,min=200,max=200"}, []string{"gradient2:initial=20,min=0,max=200", "gradient2:min=30,max=20"}),
		row(g2, "max", "1 to 2147483647 (default 200)", limits,
			[]string{"gradient2:initial=1,min=1,max=1", "gradient2:initial=20,min=20,max=2147483647"}, []string{"gradient2:initial=20,min=20,max=2147483648"}),
		row(g2, "smoothing", smooth+" (default 0.2)", whySmth, []string{"gradient2:smoothing=1"}, []string{"gradient2:smoothing=2"}),
		row(g2, "tolerance", tol+" (default 1.5)", whyTol, []string{"gradient2:tolerance=1"}, []string{"gradient2:tolerance=0.5"}),
		row(g2, "queue", "1 to 2^63−1 (default 4)", "the growth allowed per update, in permits", []string{"gradient2:queue=1"}, []string{"gradient2:queue=0"}),
		row(g2, "long_window", "1 to 2^63−1 samples (default 600)", "the exponential average's weight is 2/(long_window+1)",
			[]string{"gradient2:long_window=1"}, []string{"gradient2:long_window=0"}),
		row(g2, "window", window, whyWin, []string{"gradient2:window=100ms"}, []string{"gradient2:window=99ms"}),
		row(g2, "window_size", size, whySize, []string{"gradient2:window=1s,window_size=10"}, []string{"gradient2:window=1s,window_size=9"}),
	}
}

// envoyRanges are the limiter table's rows for envoy-gradient: Envoy's proto validation, with
// specs at and past the edges.
func envoyRanges() []limiterRange {
	const (
		percent = "a percent in [0, 100]"
		whyPct  = "Envoy's type.v3.Percent"
		limits  = "the limit is a count of permits held, in 32 bits; Envoy's proto refuses 0"
	)
	k := limiters.KindEnvoyGradient
	row := func(field, accepted, why string, valid, invalid []string) limiterRange {
		return limiterRange{kind: k, field: field, accepted: accepted, why: why, valid: valid, invalid: invalid}
	}
	return []limiterRange{
		row("update", "a positive duration, at most 2^62 ns (default 100ms)", "concurrency_update_interval: Envoy requires it positive",
			[]string{"envoy-gradient:update=1ns", "envoy-gradient:update=1h"}, []string{"envoy-gradient:update=0s"}),
		row("interval", "1ms to 2^61 ns (default 1m)", "Envoy's validation: gte 1ms; a window's end is now + interval + jitter",
			[]string{"envoy-gradient:interval=1ms", "envoy-gradient:interval=1h"}, []string{"envoy-gradient:interval=999us"}),
		row("requests", "1 to 1048576 (default 50)", "request_count: Envoy's proto refuses 0; a window's samples are kept",
			[]string{"envoy-gradient:requests=1", "envoy-gradient:requests=1048576"}, []string{"envoy-gradient:requests=0", "envoy-gradient:requests=1048577"}),
		row("jitter", percent+" (default 15)", whyPct, []string{"envoy-gradient:jitter=0", "envoy-gradient:jitter=100"}, []string{"envoy-gradient:jitter=101", "envoy-gradient:jitter=-1"}),
		row("min", "1 to max (default 3)", limits,
			[]string{"envoy-gradient:min=1", "envoy-gradient:min=1000"}, []string{"envoy-gradient:min=0", "envoy-gradient:min=1001"}),
		row("max", "1 to 2147483647, at least min (default 1000)", limits,
			[]string{"envoy-gradient:min=1,max=1", "envoy-gradient:max=2147483647"}, []string{"envoy-gradient:max=2147483648", "envoy-gradient:max=2"}),
		row("buffer", percent+" (default 25)", whyPct, []string{"envoy-gradient:buffer=0", "envoy-gradient:buffer=100"}, []string{"envoy-gradient:buffer=100.5"}),
		row("percentile", percent+" (default 50)", whyPct, []string{"envoy-gradient:percentile=0", "envoy-gradient:percentile=99.9"}, []string{"envoy-gradient:percentile=200"}),
		row("seed", "1 to 2^63−1 (default 1)", "the jitter's PCG seed: a run's minRTT windows open at the same times every time",
			[]string{"envoy-gradient:seed=1"}, []string{"envoy-gradient:seed=0"}),
	}
}
