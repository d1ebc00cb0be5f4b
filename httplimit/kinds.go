package httplimit

// New takes every spec the CLI takes, the peers' kinds (nginx:…, x-time-rate:…) included.
import _ "github.com/ratelab/ratelab/limiters/peers"
