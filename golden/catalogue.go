package golden

// Catalogue is every guarantee, in the order the README and `ratelab guarantees` list them.
func Catalogue() []*Guarantee {
	return []*Guarantee{
		tokenBucketBurst,
		tokenBucketInterval,
		tokenBucketNoDrift,
		leakyBucket,
		slidingWindowBoundary,
		slidingWindowSlotEdge,
		fixedWindowBoundary,
		flash5EpochWrap,
		flash5TokenLowRate,
		xTimeRateLibrary,
		uberSlack,
		nginxBurst,
		guavaPrepay,
		guavaWarmupNeverWarms,
		sentinelFlow,
		resilience4jCycles,
		twoCounterWorstWindow,
		warmUpCurve,
		warmUpBurst,
		warmUpCapacityOne,
		concurrencyInFlight,
		slowDownstream,
		stackRefunds,
		slidingFailsClosed,
		racesExact,
		monotonicTime,
		lowRate,
		requestSizes,
		keyedPerKeyBound,
		keyedLRUAttacker,
		keyedPeers,
		noAlloc,
	}
}
