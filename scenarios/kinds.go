package scenarios

// A scenario names its limiters by spec, and the built-ins and users' files name the peers'
// kinds (nginx:…, guava-bursty:…) as often as ratelab's own: the workbench knows every kind.
import _ "github.com/ratelab/ratelab/limiters/peers"
