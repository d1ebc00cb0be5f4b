// Package failsafego runs failsafe-go's adaptive limiter (github.com/failsafe-go/failsafe-go,
// package adaptivelimiter), the real library, as ratelab's kind failsafe-adaptive, at virtual
// time. It is a package of its own so that the library and its dependencies (a t-digest, a
// bitset) are no dependency of limiters or of limiters/peers.
//
// Importing the package registers the kind (limiters.Register), after the peers:
//
//	import _ "github.com/ratelab/ratelab/limiters/failsafego"
package failsafego

import (
	"github.com/ratelab/ratelab/limiters"
	// The peers register first, so that the listing shows failsafe-adaptive after them
	// (packages initialise after those they import).
	_ "github.com/ratelab/ratelab/limiters/peers"
)

func init() { limiters.Register(adaptiveKind) }
