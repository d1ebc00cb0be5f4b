package limiters

// What the external tests (package limiters_test, which run the peers' kinds beside these)
// read of the inside.

// ShardCount is how many shards k has.
func ShardCount(k *KeyedLimiter) int { return len(k.shards) }
