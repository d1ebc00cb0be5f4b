package peers

import "github.com/ratelab/ratelab/limiters"

// The peers join the registry in the order ratelab shows them: after ratelab's own six,
// Flash5's two, then the Go modules run as themselves, then the models of servers and of
// other languages' libraries. A new peer is its own file and one line here.
func init() {
	for _, info := range []*limiters.KindInfo{
		&flash5FixedKind,
		&flash5TokenKind,
		&xTimeRateKind,
		&uberKind,
		&nginxKind,
		&guavaBurstyKind,
		&guavaWarmUpKind,
		&sentinelKind,
		&resilience4jKind,
		&twoCounterKind,
		&haproxyKind,
	} {
		limiters.Register(*info)
	}
}
