package engine

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/ratelab/ratelab/limiters"
)

// Sentence reads one traced event as the teaching log shows it, in the TUI and on the page,
// with exact durations, e.g.
//
//	t=60ms req #4 (1 permit) rejected by token-bucket: next permit due at 80ms, 20ms ahead; …
//
// The part after the colon is Record.Reason (ReasonText): limiters.State.Explain of the deciding stage's
// state just before it decided, never a re-computation here. stages are the lane's
// (Lane.Stages()): a stack of more than one names the stage by its number.
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
	reason := r.ReasonText() // a lazy lane's Reason is made here, when the sentence is shown
	withReason := func(s string) string {
		if reason == "" {
			return s
		}
		return s + ": " + reason
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

// durationText matches the durations a sentence carries, as limiters.FormatDuration writes
// them ("194.712ms", "1m30s", "-900ms"), not inside words.
var durationText = regexp.MustCompile(`-?(?:\d+(?:\.\d+)?(?:ns|µs|us|ms|h|m|s))+`)

// Readable rewrites every duration in a Sentence for the screen: rounded by
// limiters.ShortDuration to about four significant digits (t=1.0105263s → t=1.011s,
// 194.712345ms → 194.7ms), or left exact when exact is set; a negative time (a window that
// began before the run) reads as 0s either way, since nothing happened before 0. The TUI's log
// and the page's show sentences through it (the TUI's x key and the page's "exact" box set
// exact).
func Readable(sentence string, exact bool) string {
	locs := durationText.FindAllStringIndex(sentence, -1)
	if locs == nil {
		return sentence
	}
	var b strings.Builder
	last := 0
	for _, loc := range locs {
		from, to := loc[0], loc[1]
		before, after := rune(0), rune(0)
		if from > 0 {
			before = []rune(sentence[:from])[len([]rune(sentence[:from]))-1]
		}
		if to < len(sentence) {
			after = []rune(sentence[to:])[0]
		}
		if unicode.IsLetter(before) || unicode.IsDigit(before) || unicode.IsLetter(after) || before == '.' {
			continue // part of a word or a number: not a duration
		}
		d, err := time.ParseDuration(sentence[from:to])
		if err != nil {
			continue
		}
		b.WriteString(sentence[last:from])
		switch {
		case d < 0:
			b.WriteString("0s")
		case exact:
			b.WriteString(limiters.FormatDuration(d))
		default:
			b.WriteString(limiters.ShortDuration(d))
		}
		last = to
	}
	b.WriteString(sentence[last:])
	return b.String()
}
