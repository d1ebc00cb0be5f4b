package fit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/scenarios"
)

// Three clients at 1/s: a sends 5 at once at 0 and then one a second (σ 5); b one every
// 500ms, 20 in all (at 1/s its 20th, at 9.5s, finds 19 − 9.5 = 9.5 ahead of it: need 10.5,
// σ 11); c 20 at once at 3s (σ 20). At 1 per second, the 60% quantile of σ (the 2nd of 3)
// is b's 11, so a bucket of 11 per client admits a and b entirely and refuses c's last 9.
func TestPerClientByHand(t *testing.T) {
	var b strings.Builder
	b.WriteString("t_ns,permits,key\n")
	type row struct {
		at  time.Duration
		key string
	}
	var rows []row
	for range 5 {
		rows = append(rows, row{0, "a"})
	}
	for s := 1; s <= 9; s++ {
		rows = append(rows, row{time.Duration(s) * time.Second, "a"})
	}
	for i := range 20 {
		rows = append(rows, row{time.Duration(i) * 500 * time.Millisecond, "b"})
	}
	for range 20 {
		rows = append(rows, row{3 * time.Second, "c"})
	}
	slicesSortStable(rows, func(x, y row) bool { return x.at < y.at })
	for _, r := range rows {
		fmt.Fprintf(&b, "%d,1,%s\n", r.at, r.key)
	}
	rep, err := FitPerClient(context.Background(), Text("three.csv", b.String()),
		PerClientOptions{Rate: limiters.PerSecond(1), ClientsPPM: 600000})
	require.NoError(t, err)
	assert.Equal(t, 3, rep.Clients)
	p := rep.Curve[rep.Chosen]
	assert.Equal(t, "1/1s", p.RateText)
	assert.Equal(t, int64(11), p.P50, "the median client, b: 20 in 9.5s at 1/s")
	assert.Equal(t, int64(20), p.Max, "c's 20 at once")
	assert.Equal(t, int64(11), p.Capacity)
	assert.Equal(t, "keys(max=3,evict=lru):token-bucket:capacity=11,rate=1/1s", rep.Spec)
	require.Equal(t, 1, rep.RefusedClients)
	assert.Equal(t, ClientRefusal{Key: "c", Requests: 20, Permits: 20, Refused: 9, RefusedPermits: 9, Sigma: 20}, rep.Refused[0])
	assert.Equal(t, rep.Requests-9, rep.Admitted)
}

func slicesSortStable[T any](s []T, less func(a, b T) bool) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && less(s[j], s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// On the noisy-neighbour scenario (one client sends 600 of its requests, the quiet ones
// about 4 per second each) the per-client answer at the knee refuses the neighbour most, and
// admits 99% of clients entirely; with --protect, the two-stage stack admits what the
// per-client stage admits. Every client's σ is confirmed by the replay inside FitPerClient
// (a client said to fit that is refused, or the reverse, is an error).
func TestPerClientNoisyNeighbour(t *testing.T) {
	sc, err := scenarios.Get("noisy-neighbour")
	require.NoError(t, err)
	rep, err := FitPerClient(context.Background(), Scenario(sc), PerClientOptions{Protect: limiters.PerSecond(400)})
	require.NoError(t, err)
	require.NotEmpty(t, rep.Refused)
	assert.Equal(t, "noisy-neighbour", rep.Refused[0].Key, "the neighbour is refused the most")
	assert.LessOrEqual(t, rep.RefusedClients*100, rep.Clients, "99%% of clients admitted entirely")
	assert.True(t, strings.HasPrefix(rep.Spec, "keys(max="), rep.Spec)
	require.NotEmpty(t, rep.Stack, rep.ProtectNote)
	assert.Equal(t, rep.Admitted, rep.StackAdmitted)
	t.Logf("%d clients: %s refuses %d of them (%s: %d of %d requests); stack %s",
		rep.Clients, rep.Spec, rep.RefusedClients, rep.Refused[0].Key, rep.Refused[0].Refused, rep.Refused[0].Requests, rep.Stack)
}

// Each client's σ is the brute-force maximum over its own busy periods (the global σ of its
// requests alone), on random traces of 5 clients.
func TestPerClientSigmaIsEachClientsOwn(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 0))
	for trial := range 20 {
		var b strings.Builder
		b.WriteString("t_ns,permits,key\n")
		per := map[string]*strings.Builder{}
		var at time.Duration
		for range 200 {
			at += time.Duration(rng.Int64N(int64(40 * time.Millisecond)))
			key := fmt.Sprintf("k%d", rng.IntN(5))
			n := 1 + rng.IntN(3)
			fmt.Fprintf(&b, "%d,%d,%s\n", at, n, key)
			if per[key] == nil {
				per[key] = &strings.Builder{}
				per[key].WriteString("t_ns,permits\n")
			}
			fmt.Fprintf(per[key], "%d,%d\n", at, n)
		}
		rate := limiters.Rate{Permits: 5 + rng.IntN(40), Window: time.Second}
		rep, err := FitPerClient(context.Background(), Text("r.csv", b.String()), PerClientOptions{Rate: rate, ClientsPPM: 1000000})
		require.NoError(t, err)
		var most int64
		for key, text := range per {
			pts, err := Curve(context.Background(), Text(key, text.String()), []limiters.Rate{rate})
			require.NoError(t, err)
			most = max(most, pts[0].Capacity)
		}
		assert.Equal(t, most, rep.Curve[rep.Chosen].Max, "trial %d: the largest client σ at %s", trial, rate)
		assert.Equal(t, most, rep.Curve[rep.Chosen].Capacity, "trial %d: 100%% of clients: the largest", trial)
		assert.Zero(t, rep.RefusedClients, "trial %d", trial)
	}
}

// A trace without keys is refused with a sentence saying how to give them.
func TestPerClientNeedsKeys(t *testing.T) {
	_, err := FitPerClient(context.Background(), Text("k.csv", "t_ns,permits\n0,1\n5,1\n"), PerClientOptions{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "--key")
}
