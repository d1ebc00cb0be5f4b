package scenarios

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/engine"
)

// TestUserVsPrefetchTeaches holds user-vs-prefetch to its description on three seeds:
// under the 12× prefetch spike the bulkhead and Gradient2 refuse users with prefetch, and
// partitioned 90/10 they hold the users' goodput (none refused by the bulkhead, a fraction of
// Gradient2's) and shed prefetch instead.
func TestUserVsPrefetchTeaches(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		sc, err := Get("user-vs-prefetch")
		require.NoError(t, err)
		sc.Seed = seed
		res, err := engine.Run(context.Background(), sc, nil)
		require.NoError(t, err)
		class := func(lane int, name string) engine.ClassResult {
			for _, c := range res.Lanes[lane].Classes {
				if c.Class == name {
					return c
				}
			}
			t.Fatalf("lane %d has no class %s", lane, name)
			return engine.ClassResult{}
		}
		bulk, part, g2, pg2 := 0, 1, 2, 3
		assert.Greater(t, class(bulk, "user").Refused, int64(200), "seed %d: the bulkhead refuses users in the spike", seed)
		assert.Zero(t, class(part, "user").Refused, "seed %d: partitioned, users keep their 29 of 32", seed)
		assert.Greater(t, class(part, "prefetch").Refused, class(bulk, "prefetch").Refused, "seed %d: prefetch is shed instead", seed)
		assert.Greater(t, class(part, "user").Answered, class(bulk, "user").Answered*115/100, "seed %d: users' goodput held", seed)
		assert.Greater(t, class(g2, "user").Refused, int64(150), "seed %d: Gradient2 alone refuses users", seed)
		assert.Less(t, class(pg2, "user").Refused*5, class(g2, "user").Refused, "seed %d: partitioned Gradient2 refuses under a fifth as many", seed)
		for lane := range res.Lanes {
			u, p := class(lane, "user"), class(lane, "prefetch")
			tot := res.Lanes[lane].Totals
			assert.Equal(t, tot.Offered, u.Offered+p.Offered, "seed %d lane %d: the classes add up", seed, lane)
			assert.Equal(t, tot.Refused, u.Refused+p.Refused, "seed %d lane %d", seed, lane)
			assert.Equal(t, tot.Completed, u.Answered+p.Answered, "seed %d lane %d", seed, lane)
		}
	}
}

// TestClassFromYAML: a source's class is read, shown back, and counted per class.
func TestClassFromYAML(t *testing.T) {
	src := `horizon: 2s
sources:
  - {kind: poisson, rate: 100, class: user}
  - {kind: poisson, rate: 400, class: prefetch}
limiters: ["partition(user=0.5,prefetch=0.5):concurrency:max=4"]
downstream: {service: {kind: constant, mean: 20ms}}
`
	sc, err := Load("c.yaml", []byte(src))
	require.NoError(t, err)
	require.Equal(t, []string{"user", "prefetch"}, sc.Classes())
	shown, err := YAML(sc)
	require.NoError(t, err)
	require.Contains(t, string(shown), "class: prefetch")
	require.Contains(t, string(shown), "partition(user=0.5,prefetch=0.5):concurrency:max=4")
	again, err := Load("c.yaml", shown)
	require.NoError(t, err)
	require.Equal(t, sc.Sources, again.Sources)
	res, err := engine.Run(context.Background(), sc, nil)
	require.NoError(t, err)
	cl := res.Lanes[0].Classes
	require.Len(t, cl, 2)
	require.Less(t, cl[0].Refused*4, cl[1].Refused, "prefetch, 4× the traffic with the same share, is refused far more")

	_, err = Load("c.yaml", []byte(`horizon: 2s
sources: [{kind: poisson, rate: 1}]
limiters: ["partition(user=0.5,prefetch=0.6):concurrency:max=4"]
`))
	require.ErrorContains(t, err, "c.yaml:3:")
	require.ErrorContains(t, err, "add up to more than 1")
}
