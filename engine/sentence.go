package engine

import (
	"fmt"

	"github.com/ratelab/ratelab/limiters"
)

// Sentence reads one traced event as the teaching log shows it, in the TUI and on the page,
// with exact durations, e.g.
//
//	t=60ms req #4 (1 permit) rejected by token-bucket: next permit due at 80ms, 20ms ahead; …
//
// The part after the colon is Record.Reason: limiters.State.Explain of the deciding stage's
// state just before it decided, never a re-computation here. stages are the lane's
// (Lane.Stages): a stack of more than one names the stage by its number.
func Sentence(stages []limiters.Limiter, r Record) string {
	head := fmt.Sprintf("t=%s req #%d", limiters.FormatDuration(r.At), r.Request)
	if r.Attempt > 1 {
		head += fmt.Sprintf(" attempt %d", r.Attempt)
	}
	if r.Permits == 1 {
		head += " (1 permit)"
	} else {
		head += fmt.Sprintf(" (%d permits)", r.Permits)
	}
	stage := func() string {
		name := ""
		if r.State != nil {
			name = string(r.State.Kind)
		} else if r.Stage >= 0 && r.Stage < len(stages) {
			name = string(stages[r.Stage].Kind())
		}
		if len(stages) > 1 {
			return fmt.Sprintf("stage %d (%s)", r.Stage+1, name)
		}
		return name
	}
	withReason := func(s string) string {
		if r.Reason == "" {
			return s
		}
		return s + ": " + r.Reason
	}
	switch r.Outcome {
	case OutcomeAdmitted:
		if r.Reason == ReasonWaitEnded {
			return withReason(head + " goes on")
		}
		if len(stages) > 1 {
			name := ""
			if r.State != nil {
				name = string(r.State.Kind)
			}
			return withReason(fmt.Sprintf("%s admitted by all %d stages; %s", head, len(stages), name))
		}
		return withReason(fmt.Sprintf("%s admitted by %s", head, stage()))
	case OutcomeDelayed:
		return withReason(fmt.Sprintf("%s admitted after a wait by %s", head, stage()))
	case OutcomeRejected:
		return withReason(fmt.Sprintf("%s rejected by %s", head, stage()))
	case OutcomeNever:
		return withReason(fmt.Sprintf("%s refused for good by %s", head, stage()))
	case OutcomeQueued:
		return head + " waits in the client queue"
	case OutcomeRefused:
		return head + " refused: the client does not retry it"
	case OutcomeGaveUp:
		if r.Attempt > 1 {
			return fmt.Sprintf("%s gave up after %d attempts", head, r.Attempt)
		}
		return head + " gave up"
	case OutcomeTimedOut:
		return head + " timed out in the client queue"
	case OutcomeCompleted:
		return head + " completed at the downstream"
	case OutcomeFailed:
		return withReason(head + " failed at the downstream")
	}
	return withReason(fmt.Sprintf("%s %s", head, r.Outcome))
}
