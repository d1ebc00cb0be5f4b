package plots

import (
	"testing"

	"github.com/ratelab/ratelab/engine"
)

// Every client policy but drop says in a figure's subtitle what it does with a refusal: the
// newer ones (octokit, stripe, header-paced, aws-adaptive) were titled "refused requests are
// dropped", which header-paced's and octokit's retries contradict in their own loop chart.
func TestClientTextNamesEveryPolicy(t *testing.T) {
	drop := clientText(engine.Client{Policy: engine.PolicyDrop})
	seen := map[string]engine.Policy{}
	for _, p := range engine.Policies {
		c := engine.Client{Policy: p, Delay: 1e9, MaxAttempts: 3, QueueSize: 10, Timeout: 1e9}
		got := clientText(c)
		if p == engine.PolicyDrop {
			continue
		}
		if got == drop {
			t.Errorf("%s: %q, the drop client's words", p, got)
		}
		if q, ok := seen[got]; ok {
			t.Errorf("%s and %s both read %q", q, p, got)
		}
		seen[got] = p
	}
}
