package replicate

import (
	"github.com/ratelab/ratelab/engine"
)

// Metric is one number a run reports for a lane, under a stable name used in CSV headers and
// JSON keys (name_mean, name_ci95). Units: a count, a ratio in [0, 1], nanoseconds (the
// names end in _ns), or requests (mean_in_service) and requests per second (_per_s).
type Metric struct {
	Name  string
	Doc   string
	value func(lane engine.LaneSpec, r engine.LaneResult) (float64, bool)
}

// Value is the metric's value in one run's lane; false when the lane has nothing to measure
// (the service metrics without a downstream, a window without an admission meter).
func (m Metric) Value(lane engine.LaneSpec, r engine.LaneResult) (float64, bool) {
	return m.value(lane, r)
}

func total(name, doc string, f func(engine.Totals) int64) Metric {
	return Metric{Name: name, Doc: doc, value: func(_ engine.LaneSpec, r engine.LaneResult) (float64, bool) {
		return float64(f(r.Totals)), true
	}}
}

func wait(name, doc string, f func(engine.Wait) int64) Metric {
	return Metric{Name: name, Doc: doc, value: func(_ engine.LaneSpec, r engine.LaneResult) (float64, bool) {
		return float64(f(r.Wait)), true
	}}
}

func service(name, doc string, f func(*engine.Service) float64) Metric {
	return Metric{Name: name, Doc: doc, value: func(_ engine.LaneSpec, r engine.LaneResult) (float64, bool) {
		if r.Service == nil {
			return 0, false
		}
		return f(r.Service), true
	}}
}

// Metrics is every metric, in the order the CSV and JSON write them: the request outcomes
// first (offered = admitted + refused + timed_out + gave_up + waiting holds for the means
// too, the mean being linear), then the attempts, the downstream, the guarantee meter and
// the waits.
var Metrics = []Metric{
	total("offered", "requests offered by the sources", func(t engine.Totals) int64 { return t.Offered }),
	total("admitted", "requests admitted by every stage", func(t engine.Totals) int64 { return t.Admitted }),
	total("refused", "requests refused and not retried", func(t engine.Totals) int64 { return t.Refused }),
	total("timed_out", "requests that timed out in the client queue", func(t engine.Totals) int64 { return t.TimedOut }),
	total("gave_up", "requests a retrying client gave up on", func(t engine.Totals) int64 { return t.GaveUp }),
	total("waiting", "requests not ended at the horizon", func(t engine.Totals) int64 { return t.Waiting }),
	{Name: "admit_ratio", Doc: "admitted over offered", value: func(_ engine.LaneSpec, r engine.LaneResult) (float64, bool) {
		return r.Totals.AdmitRatio(), r.Totals.Offered > 0
	}},
	total("attempts", "first tries and retries", func(t engine.Totals) int64 { return t.Attempts }),
	total("retried", "attempts after the first", func(t engine.Totals) int64 { return t.Retried }),
	total("refused_attempts", "attempts a stage refused", func(t engine.Totals) int64 { return t.RefusedAttempts }),
	total("delayed", "admitted after a reservation's wait", func(t engine.Totals) int64 { return t.Delayed }),
	total("queued", "requests that waited in the client queue", func(t engine.Totals) int64 { return t.Queued }),
	total("completed", "admitted requests the downstream served", func(t engine.Totals) int64 { return t.Completed }),
	total("failed", "admitted requests the downstream refused (pool full)", func(t engine.Totals) int64 { return t.Failed }),
	total("wasted", "permits kept by earlier stages when a later one refused", func(t engine.Totals) int64 { return t.Wasted }),
	total("max_in_flight", "the most requests at the downstream at once", func(t engine.Totals) int64 { return int64(t.MaxInFlight) }),
	total("max_queue", "the longest the client queue got", func(t engine.Totals) int64 { return int64(t.MaxQueue) }),
	service("mean_in_service", "L: the time-average of requests in service", func(s *engine.Service) float64 { return s.MeanInService }),
	service("service_rate_per_s", "λ: requests that went into service per second", func(s *engine.Service) float64 { return s.ArrivalRate }),
	service("service_time_ns", "W: mean time in service (L = λW)", func(s *engine.Service) float64 { return float64(s.MeanTime) }),
	{Name: "max_in_window", Doc: "the most permits admitted in any interval of the lane's window", value: func(lane engine.LaneSpec, r engine.LaneResult) (float64, bool) {
		m, ok := engine.PrimaryWindow(lane, r)
		return float64(m.MaxAdmitted), ok
	}},
	wait("wait_p50_ns", "median wait from arrival to admission", func(w engine.Wait) int64 { return int64(w.P50) }),
	wait("wait_p90_ns", "90th percentile wait", func(w engine.Wait) int64 { return int64(w.P90) }),
	wait("wait_p99_ns", "99th percentile wait", func(w engine.Wait) int64 { return int64(w.P99) }),
	wait("wait_max_ns", "longest wait", func(w engine.Wait) int64 { return int64(w.Max) }),
	wait("wait_mean_ns", "mean wait", func(w engine.Wait) int64 { return int64(w.Mean) }),
}

// MetricIndex is the position of the metric called name in Metrics, or −1.
func MetricIndex(name string) int {
	for i, m := range Metrics {
		if m.Name == name {
			return i
		}
	}
	return -1
}
