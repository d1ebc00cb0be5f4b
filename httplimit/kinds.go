package httplimit

// New takes every spec the CLI takes, the peers' kinds (nginx:…, x-time-rate:…) and
// failsafe-adaptive included.
import (
	_ "github.com/ratelab/ratelab/limiters/failsafego"
	_ "github.com/ratelab/ratelab/limiters/peers"
)
