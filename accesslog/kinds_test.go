package accesslog

// The comparisons name the nginx kind: the tests link the peers in, as the CLI does (package
// accesslog itself imports only the standard library and limiters).
import _ "github.com/ratelab/ratelab/limiters/peers"
