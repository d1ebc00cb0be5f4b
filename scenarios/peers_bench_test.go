package scenarios

import (
	"context"
	"testing"
	"time"

	"github.com/ratelab/ratelab/engine"
)

// peerLanes is one lane of each peer kind, at 100/s with what each calls a burst of 20.
var peerLanes = []string{
	"flash5-fixed:limit=100,window=1s",
	"flash5-token:limit=100,window=1s",
	"guava-bursty:rate=100/1s",
	"guava-warmup:rate=100/1s,warmup=1s",
	"x-time-rate:rate=100/1s,burst=20",
	"uber:rate=100/1s,slack=19",
	"nginx:rate=100r/s,burst=19,delay=nodelay",
	"sentinel:threshold=100",
	"resilience4j:limit=100,period=1s,timeout=0s",
	"two-counter:limit=100,window=1s",
}

// The simulator's throughput with ten peer lanes: Poisson at 1000/s for 60s (60,000 requests
// offered to each lane), dropping clients. It reports decisions per second over all lanes.
//
//	go test -run '^$' -bench PeerLanes -count 6 ./scenarios/
func BenchmarkPeerLanes(b *testing.B) {
	sc := &engine.Scenario{Name: "peer-lanes", Seed: 1, Horizon: time.Minute, Client: engine.Client{Policy: engine.PolicyDrop},
		Lanes: lanes(peerLanes...), Sources: []engine.Source{{Kind: engine.SourcePoisson, Rate: 1000}}}
	var decisions int64
	b.ReportAllocs()
	for b.Loop() {
		res, err := engine.Run(context.Background(), sc, nil)
		if err != nil {
			b.Fatal(err)
		}
		decisions = 0
		for _, l := range res.Lanes {
			decisions += l.Totals.Attempts
		}
	}
	b.ReportMetric(float64(decisions)*float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(decisions)/float64(b.N), "ns/decision")
}
