package translate

// The translation names the peers' kinds (x-time-rate:…, nginx:…, guava-bursty:…) and
// parses what it names: they must be registered.
import _ "github.com/ratelab/ratelab/limiters/peers"
