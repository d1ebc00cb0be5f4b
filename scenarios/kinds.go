package scenarios

// A scenario names its limiters by spec, and the built-ins and users' files name the peers'
// kinds (nginx:…, guava-bursty:…) and failsafe-go's adaptive limiter as often as ratelab's
// own: the workbench knows every kind.
import (
	_ "github.com/ratelab/ratelab/limiters/failsafego"
	_ "github.com/ratelab/ratelab/limiters/peers"
)
