package tui

import (
	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// sentence is the log's line for r: engine.Sentence, which the page in the browser shows too.
func sentence(stages []limiters.Limiter, r engine.Record) string { return engine.Sentence(stages, r) }
