package golden

import (
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/limiters/peers"
)

// nginxNodeWithoutExcess is nginx whose node shows the zone no excess: every node idle 60s
// looks drained, so a zone expires a node that still holds excess, and its key comes back
// with a whole burst.
type nginxNodeWithoutExcess struct{ *peers.Nginx }

func (l nginxNodeWithoutExcess) ZoneNode() limiters.NginxNode {
	node := l.Nginx.ZoneNode()
	node.Excess = 0
	return node
}

// The zone guarantee's checker fails for a zone that reads no excess.
func init() {
	brokenCases = append(brokenCases, struct {
		name       string
		factory    Factory
		guarantees map[string][]string
	}{"an nginx zone that reads every node's excess as 0", only(func(s peers.NginxSpec, c limiters.Clock) (limiters.Limiter, error) {
		l, err := peers.NewNginx(s, c)
		return nginxNodeWithoutExcess{l}, err
	}), map[string][]string{
		"keyed-nginx-zone": {
			"f at 1m40s: 1 of 1 admitted, zone [e f], 6 removed: the bound is exactly 1, [a e f], 5",
			"a at 1m41s: 6 of 6 admitted, zone [a e f], 6 removed: the bound is exactly 1, [a e f], 5",
		},
	}})
}
