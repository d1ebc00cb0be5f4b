package gate

import (
	"github.com/ratelab/ratelab/engine"
)

// keyMetrics compare clients, from the lane's per-key counts (engine.KeyResults): a lane
// whose requests carry one key, or none, has no value for them.
var keyMetrics = []Metric{
	{"fairness", "Jain's index of admitted permits over the keys offered (1: every key admitted alike)", Ratio,
		func(_ engine.LaneSpec, r engine.LaneResult) (float64, bool) {
			if r.Keys == nil || r.Keys.Distinct < 2 {
				return 0, false
			}
			return r.Keys.Fairness, true
		}},
	{"quiet_admitted%", "admitted, % of offered, over every key but the one that offered the most (the noisy neighbour)", Percent,
		func(_ engine.LaneSpec, r engine.LaneResult) (float64, bool) {
			k := r.Keys
			// Every key must be listed one by one, or the quiet ones' sum is not theirs.
			if k == nil || len(k.PerKey) < 2 || len(k.PerKey) != k.Distinct || k.Untracked > 0 {
				return 0, false
			}
			loud := 0
			for i, c := range k.PerKey {
				if c.Offered > k.PerKey[loud].Offered {
					loud = i
				}
			}
			var offered, admitted int64
			for i, c := range k.PerKey {
				if i != loud {
					offered += c.Offered
					admitted += c.Admitted
				}
			}
			if offered == 0 {
				return 0, true
			}
			return 100 * float64(admitted) / float64(offered), true
		}},
}
