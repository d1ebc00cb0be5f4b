package fit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/trace"
)

// Per-client fitting answers the question most real limits are set on: what rate and burst
// per client key (nginx's limit_req_zone $binary_remote_addr, an API key), and whom does it
// hurt. Each client's own burstiness curve σₖ(ρ) is computed exactly as the global one is
// (curve.go: the least token-bucket capacity at rate ρ that admits every request of that
// client), in one pass for every client and every rate of a grid; at each rate the
// recommended capacity is the ClientsPPM quantile of σₖ over clients (each client counted
// once, whatever its traffic), so a bucket of that capacity admits that share of clients
// entirely. The rate is the knee of that quantile curve, as for the global fit, unless one is
// asked for. The answer is a keyed spec, replayed over the whole trace through ratelab's own
// keyed table, naming the clients it refuses and how much of their traffic.
//
// Memory is two words per client per rate (24 rates and 100,000 clients: 38 MB), bounded by
// MaxKeys, and the trace's columns, 16 bytes a row and 12 more while the curves are
// computed (table.go); time is one step per rate per
// request over the columns, after one read of the input.

// PerClientOptions say which per-client rates to fit and what to answer.
type PerClientOptions struct {
	Window time.Duration // rates are whole permits per Window (default 1s)
	Steps  int           // rates in the grid (default 24)
	// Rate, when set, is the per-client rate to answer for instead of the knee.
	Rate limiters.Rate
	// ClientsPPM is the share of clients, in parts per million, the spec admits entirely
	// (default 990000: 99%).
	ClientsPPM int64
	// Protect, when set, is a global rate for a second stage that keeps the backend's total
	// at or below it; its capacity is the least that admits everything the per-client stage
	// admitted.
	Protect limiters.Rate
	// MaxKeys refuses a trace with more distinct keys than this (default 1,048,576).
	MaxKeys int
	// MaxMemory is the most bytes the trace's columns may take (default DefaultMaxMemory, 28
	// bytes a row); a longer trace is read from src again for each pass.
	MaxMemory int64
}

// PerClientReport is what FitPerClient found.
type PerClientReport struct {
	Source   string `json:"source"`
	Clients  int    `json:"clients"`
	Requests int64  `json:"requests"`
	Permits  int64  `json:"permits"`
	// ClientsPPM is the share of clients each curve point's Capacity admits entirely.
	ClientsPPM int64         `json:"clients_ppm"`
	Curve      []ClientPoint `json:"curve"` // by rate, ascending
	Knee       int           `json:"knee"`
	Chosen     int           `json:"chosen"`
	// Spec is the per-client spec at the chosen point, keyed by a table that holds every
	// client (max = Clients): keys(max=N,evict=lru):token-bucket:capacity=C,rate=R.
	Spec            string `json:"spec"`
	Admitted        int64  `json:"admitted"` // requests the replay of Spec admitted
	AdmittedPermits int64  `json:"admitted_permits"`
	// RefusedClients is how many clients Spec refuses something of; Refused lists the first
	// RefusedListLimit of them, most refused permits first.
	RefusedClients int             `json:"refused_clients"`
	Refused        []ClientRefusal `json:"refused"`
	// Stack is Spec + a global token bucket at Options.Protect whose capacity admits all that
	// Spec admitted ("" without Protect); StackAdmitted is its replay's admissions.
	Stack         string `json:"stack,omitempty"`
	StackAdmitted int64  `json:"stack_admitted,omitempty"`
	// ProtectNote says why no global stage could be made (Protect below the admitted
	// traffic's long-run rate).
	ProtectNote string `json:"protect_note,omitempty"`
}

// RefusedListLimit is how many refused clients a PerClientReport names.
const RefusedListLimit = 20

// ClientPoint is, at one per-client rate, the distribution of the clients' σₖ.
type ClientPoint struct {
	Rate     limiters.Rate `json:"-"`
	RateText string        `json:"rate"`
	PerSec   float64       `json:"per_s"`
	// P50, P90, P99 and Max are σₖ's percentiles over clients (nearest rank); 0 where some
	// client's bucket would pass 2⁶² ns of tolerance at this rate.
	P50 int64 `json:"p50"`
	P90 int64 `json:"p90"`
	P99 int64 `json:"p99"`
	Max int64 `json:"max"`
	// Capacity is the ClientsPPM quantile: a bucket of it admits that share of clients
	// entirely; 0 when none fits.
	Capacity int64 `json:"capacity"`
}

// Fits is whether a bucket at this point admits the asked share of clients.
func (p ClientPoint) Fits() bool { return p.Capacity > 0 }

// ClientRefusal is one client the per-client spec refuses something of.
type ClientRefusal struct {
	Key            string `json:"key"`
	Requests       int64  `json:"requests"`
	Permits        int64  `json:"permits"`
	Refused        int64  `json:"refused"`
	RefusedPermits int64  `json:"refused_permits"`
	Sigma          int64  `json:"sigma"` // its σₖ at the chosen rate (0: none fits)
}

type clientStats struct {
	requests, permits int64
	window, count     int64 // the aligned window of the last request and its permits
	windowEnd         int64 // where that window ends
	peak              int64 // most permits in one aligned window
}

// FitPerClient reads src (a trace with a key column, or an access log read with a key) and
// answers opt.
func FitPerClient(ctx context.Context, src Source, opt PerClientOptions) (*PerClientReport, error) {
	if opt.Window <= 0 {
		opt.Window = time.Second
	}
	if opt.Steps <= 0 {
		opt.Steps = 24
	}
	if opt.ClientsPPM <= 0 || opt.ClientsPPM > 1e6 {
		opt.ClientsPPM = 990000
	}
	if opt.MaxKeys <= 0 {
		opt.MaxKeys = 1 << 20
	}
	// Pass 1: the clients, and each one's traffic and peak per aligned window; into a table
	// when it fits in opt.MaxMemory.
	maxMemory := opt.MaxMemory
	if maxMemory <= 0 {
		maxMemory = DefaultMaxMemory
	}
	var stats []clientStats
	rep := &PerClientReport{Source: src.Name(), ClientsPPM: opt.ClientsPPM}
	var first, last time.Duration
	w := int64(opt.Window)
	add := func(row *trace.Row, k uint32) {
		if int(k) == len(stats) {
			stats = append(stats, clientStats{window: -1})
		}
		if rep.Requests == 0 {
			first = row.At
		}
		last = row.At
		rep.Requests++
		rep.Permits += int64(row.Permits)
		s := &stats[k]
		s.requests++
		s.permits += int64(row.Permits)
		if at := int64(row.At); s.window < 0 || at >= s.windowEnd { // times only grow: else the same window
			g := at / w
			s.window, s.windowEnd, s.count = g, (g+1)*w, 0
		}
		s.count += int64(row.Permits)
		s.peak = max(s.peak, s.count)
	}
	in := newInterner(src.Name(), opt.MaxKeys)
	t, err := load(ctx, src, in, maxMemory, func(_ *table, row *trace.Row, k uint32) error {
		add(row, k)
		return nil
	})
	if errors.Is(err, errTooLarge) {
		stats, rep.Requests, rep.Permits = nil, 0, 0
		in = newInterner(src.Name(), opt.MaxKeys)
		err = each(ctx, src, func(row *trace.Row) error {
			k, err := in.id(row)
			if err == nil {
				add(row, k)
			}
			return err
		})
	}
	if err != nil {
		return nil, err
	}
	keys := in.keys
	rep.Clients = len(keys)
	if rep.Clients == 0 {
		return nil, fmt.Errorf("%s: no requests", src.Name())
	}
	if len(keys) == 1 && keys[0] == "" {
		return nil, fmt.Errorf("%s: the requests carry no client key: give a trace with a key column, or read a log with --key FIELD", src.Name())
	}
	rates, err := withAsked(clientGrid(stats, last-first, opt), opt.Rate)
	if err != nil {
		return nil, err
	}

	// Pass 2: every client's σₖ at every rate, Lindley's recursion per client and rate, over
	// the rows grouped by client (12 more bytes a row, dropped before the replay).
	var grouped *byClient
	var grid []ClientPoint // the grid's points, once evaluated
	var seg *clientSegments
	pointsAt := func(rates []limiters.Rate) ([]ClientPoint, []int64, error) {
		if t != nil && grouped == nil {
			grouped = t.groupByClient()
		}
		// Rates above a grid rate (the knee's refinement, the chosen rate) are evaluated over
		// the segments of the highest grid rate at or below them all.
		var over *clientSegments
		if grouped != nil && grid != nil {
			slowest := int64(0)
			for _, r := range rates {
				slowest = max(slowest, int64(r.Interval()))
			}
			basis := int64(-1)
			for _, p := range grid {
				if T := int64(p.Rate.Interval()); T >= slowest {
					basis = T // ascending rate: the last such is the highest
				}
			}
			if basis > 0 && (seg == nil || seg.interval != basis) {
				seg = grouped.segmentsAt(basis, clientSegmentRows)
			}
			if basis > 0 && seg != nil && seg.interval == basis {
				over = seg
			}
		}
		sigma, err := clientCurves(ctx, src, grouped, over, in.index, rates)
		if err != nil {
			return nil, nil, err
		}
		return clientPoints(rates, sigma, len(keys), opt.ClientsPPM), sigma, nil
	}
	if rep.Curve, _, err = pointsAt(rates); err != nil {
		return nil, err
	}
	grid = rep.Curve
	xy := func(p ClientPoint) (float64, float64, bool) { return p.PerSec, float64(p.Capacity), p.Fits() }
	rep.Knee = kneeOf(len(rep.Curve), func(i int) (float64, float64, bool) { return xy(rep.Curve[i]) })
	rep.Curve, rep.Knee, err = withRefinedKnee(rep.Curve, rep.Knee, func(p ClientPoint) limiters.Rate { return p.Rate }, xy,
		func(rates []limiters.Rate) ([]ClientPoint, error) { pts, _, err := pointsAt(rates); return pts, err })
	if err != nil {
		return nil, err
	}
	rep.Chosen = rep.Knee
	if opt.Rate.Permits > 0 {
		rep.Chosen = slices.IndexFunc(rep.Curve, func(p ClientPoint) bool { return p.Rate == opt.Rate })
	}
	chosen := rep.Curve[rep.Chosen]
	if !chosen.Fits() {
		return rep, fmt.Errorf("%s: no token bucket at %s per client admits %s of clients: the rate is far below their traffic", src.Name(), chosen.RateText, ppmText(opt.ClientsPPM))
	}
	tb := limiters.TokenBucketSpec{Capacity: int(chosen.Capacity), Rate: chosen.Rate}
	spec := limiters.KeyedSpec{Spec: tb, Keys: limiters.KeyedConfig{MaxKeys: rep.Clients, Evict: limiters.EvictLRU}}
	rep.Spec = spec.String()
	_, sigma, err := pointsAt([]limiters.Rate{chosen.Rate}) // each client's σ at the chosen rate, for the replay's check
	if err != nil {
		return nil, err
	}
	grouped = nil
	if err := clientReplay(ctx, src, t, rep, keys, stats, in.index, sigma, opt); err != nil {
		return nil, err
	}
	return rep, nil
}

// clientPoints are the quantiles over clients of σₖ at each rate, from sigma[k·len(rates)+r].
func clientPoints(rates []limiters.Rate, sigma []int64, clients int, clientsPPM int64) []ClientPoint {
	sorted := make([]int64, clients)
	out := make([]ClientPoint, 0, len(rates))
	for r, rate := range rates {
		t := int64(rate.Interval())
		p := ClientPoint{Rate: rate, RateText: rate.String(), PerSec: 1e9 / float64(t)}
		for k := range sorted {
			sorted[k] = sigma[k*len(rates)+r]
			if sorted[k] == 0 {
				sorted[k] = math.MaxInt64 // no bucket at this rate holds this client
			}
		}
		slices.Sort(sorted)
		rank := func(ppm int64) int64 {
			i := int((int64(len(sorted))*ppm + 999999) / 1000000) // nearest rank: ⌈n·q⌉, from 1
			if v := sorted[max(i, 1)-1]; v != math.MaxInt64 {
				return v
			}
			return 0
		}
		p.P50, p.P90, p.P99, p.Max, p.Capacity = rank(500000), rank(900000), rank(990000), rank(1000000), rank(clientsPPM)
		out = append(out, p)
	}
	return out
}

// clientGrid is the per-client grid: from the median client's mean rate (at least 1 per
// window) to twice the largest per-window peak of the ClientsPPM quantile of clients, on a
// log scale, as Grid spreads the global one.
func clientGrid(stats []clientStats, span time.Duration, opt PerClientOptions) []limiters.Rate {
	means := make([]float64, len(stats))
	peaks := make([]int64, len(stats))
	for i, s := range stats {
		if span > 0 {
			means[i] = float64(s.permits) / span.Seconds()
		}
		peaks[i] = s.peak
	}
	slices.Sort(means)
	slices.Sort(peaks)
	mean := means[(len(means)-1)/2]
	peak := peaks[max(int((int64(len(peaks))*opt.ClientsPPM+999999)/1000000), 1)-1]
	return Grid(Stats{MeanPerSec: mean, Peak: peak}, opt.Window, opt.Steps)
}

// clientCurves is σₖ at each rate for each client k, in sigma[k·len(rates) + r] (0 where
// the client's tolerance would pass 2⁶² ns): over the segments over (every rate at or above
// theirs), over the grouped rows, or when grouped is nil over src again.
func clientCurves(ctx context.Context, src Source, grouped *byClient, over *clientSegments, index map[string]uint32, rates []limiters.Rate) ([]int64, error) {
	nr := len(rates)
	intervals := make([]int64, nr)
	for r, rate := range rates {
		intervals[r] = int64(rate.Interval())
	}
	tat := make([]int64, len(index)*nr)
	need := make([]int64, len(index)*nr)
	var err error
	if over != nil {
		err = grouped.needsOver(ctx, over, intervals, need)
	} else if grouped != nil {
		err = grouped.needs(ctx, intervals, tat, need)
	} else {
		err = each(ctx, src, func(row *trace.Row) error {
			base := int(index[row.Key]) * nr
			now, n := int64(row.At), int64(row.Permits)
			for r, t := range intervals {
				i := base + r
				if need[i] >= 0 && !clientStep(&tat[i], &need[i], now, n, t) {
					need[i] = -1
				}
			}
			return nil
		})
	}
	if err != nil {
		return nil, err
	}
	for i, nd := range need {
		t := intervals[i%nr]
		switch capacity := (nd-1)/t + 1; {
		case nd <= 0 || capacity > maxTolerance/t:
			need[i] = 0
		default:
			need[i] = capacity
		}
	}
	return need, nil
}

// clientReplay replays the trace through the per-client spec (and the protected stack),
// counting each client's refusals, and fills the report's replay fields. It fails when a
// client the curve said fits is refused, or one it said does not fit is admitted entirely:
// the replay confirms the computation.
func clientReplay(ctx context.Context, src Source, t *table, rep *PerClientReport, keys []string, stats []clientStats,
	index map[string]uint32, sigma []int64, opt PerClientOptions) error {
	clock, stacks, _, err := newStacks([]string{rep.Spec})
	if err != nil {
		return err
	}
	admits := admitter(stacks[0])
	refused := make([]int64, len(keys))
	refusedPermits := make([]int64, len(keys))
	var global *curve
	if opt.Protect.Permits > 0 {
		global = newCurve([]limiters.Rate{opt.Protect})
	}
	decide := func(now time.Duration, key string, k uint32, n int) error {
		if err := clock.AdvanceTo(now); err != nil {
			return err
		}
		if admits(now, key, n) {
			rep.Admitted++
			rep.AdmittedPermits += int64(n)
			if global != nil {
				global.add(int64(now), int64(n))
			}
			return nil
		}
		refused[k]++
		refusedPermits[k] += int64(n)
		return nil
	}
	if t != nil {
		err = t.scanKeyed(ctx, decide)
	} else {
		err = each(ctx, src, func(row *trace.Row) error {
			if err := decide(row.At, row.Key, index[row.Key], row.Permits); err != nil {
				return fmt.Errorf("%s: line %d: %w", src.Name(), row.Line, err)
			}
			return nil
		})
	}
	if err != nil {
		return err
	}
	chosen := rep.Chosen
	for k := range keys {
		s := sigma[k] // σₖ at the chosen rate
		fits := s > 0 && s <= rep.Curve[chosen].Capacity
		if fits != (refused[k] == 0) {
			return fmt.Errorf("fit: replayed, client %q was refused %d requests though its σ at %s is %d and the capacity %d: a bug in fit",
				keys[k], refused[k], rep.Curve[chosen].RateText, s, rep.Curve[chosen].Capacity)
		}
		if refused[k] > 0 {
			rep.RefusedClients++
			rep.Refused = append(rep.Refused, ClientRefusal{Key: keys[k], Requests: stats[k].requests, Permits: stats[k].permits,
				Refused: refused[k], RefusedPermits: refusedPermits[k], Sigma: s})
		}
	}
	slices.SortStableFunc(rep.Refused, func(a, b ClientRefusal) int {
		if c := cmp.Compare(b.RefusedPermits, a.RefusedPermits); c != 0 {
			return c
		}
		return cmp.Compare(a.Key, b.Key)
	})
	if len(rep.Refused) > RefusedListLimit {
		rep.Refused = rep.Refused[:RefusedListLimit]
	}
	if global != nil {
		var read passes = streamed{src}
		if t != nil {
			read = t
		}
		if err := protect(ctx, read, rep, global, opt.Protect); err != nil {
			return err
		}
	}
	return nil
}

// protect makes the two-stage stack: the per-client spec, then a global bucket at rate whose
// capacity admits everything the per-client stage admitted, and replays it.
func protect(ctx context.Context, read passes, rep *PerClientReport, global *curve, rate limiters.Rate) error {
	p := global.points()[0]
	if !p.Fits() {
		rep.ProtectNote = fmt.Sprintf("no global bucket at %s admits what the per-client limit admits: it averages above that rate", rate)
		return nil
	}
	rep.Stack = rep.Spec + "+" + limiters.TokenBucketSpec{Capacity: int(p.Capacity), Rate: rate}.String()
	got, err := read.replay(ctx, []string{rep.Stack})
	if err != nil {
		return err
	}
	rep.StackAdmitted = got[0].Admitted
	if rep.StackAdmitted != rep.Admitted {
		return fmt.Errorf("fit: replayed, %s admits %d requests where its first stage alone admits %d: a bug in fit", rep.Stack, rep.StackAdmitted, rep.Admitted)
	}
	return nil
}

func ppmText(ppm int64) string { return fmt.Sprintf("%g%%", float64(ppm)/1e4) }
