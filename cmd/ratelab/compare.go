package main

import (
	"fmt"
	"time"

	"github.com/ratelab/ratelab/accesslog"
	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/redislimit/redislanes"
	"github.com/ratelab/ratelab/virtualclock"
)

// compareLog decides every request of an access log with each lane's stack, as replay does
// (open loop, on the log's arrival times, each key with its own limiter in a keyed stage, a
// stage whose callers wait reserving), and prints, per lane, how often it agrees with the
// decision production logged, and the first disagreements by line.
func compareLog(e *env, source string, in *accesslog.Input, lanes []redislanes.Lane) error {
	r := in.Log()
	if r == nil {
		return fmt.Errorf("%s: --compare needs an access log that records production's decisions (a CSV trace records none)", source)
	}
	clock := virtualclock.New()
	models := make([]func(rec *accesslog.Record) bool, len(lanes))
	for i, lane := range lanes {
		stack, err := engine.NewStack(lane.Specs, clock)
		if err != nil {
			return fmt.Errorf("--limiter %s: %w", quoteArg(lane.Text), err)
		}
		if stack.SetWaits(lane.Specs, 0) {
			if err := stack.CanReserve(); err != nil {
				return fmt.Errorf("--limiter %s: %w", quoteArg(lane.Text), err)
			}
		}
		models[i] = func(rec *accesslog.Record) bool {
			key := string(rec.Key)
			if d, _, _ := stack.Decide(rec.At, key, rec.Permits); d != limiters.Admitted {
				return false
			}
			stack.BindHeld(key)
			stack.Complete(rec.At, rec.Permits, 0, true) // open loop: done as soon as admitted
			return true
		}
	}
	var last time.Duration
	advance := func(rec *accesslog.Record) bool {
		if rec.At > last {
			last = rec.At
			_ = clock.AdvanceTo(rec.At)
		}
		return true
	}
	cs, err := accesslog.CompareAll(r, append([]func(*accesslog.Record) bool{advance}, models...))
	if err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	printNotes(e.stderr, e.errWidth, source, in.Notes())
	fmt.Fprintf(e.stdout, "%s: %d requests over %s\n", source, cs[0].Requests, limiters.FormatDuration(last))
	if cs[0].Compared() == 0 {
		return fmt.Errorf("%s: no request's decision is logged: log nginx's $limit_req_status, or name the refusing statuses with --refused-status (e.g. 429 for HAProxy)", source)
	}
	for i, lane := range lanes {
		c := cs[i+1]
		fmt.Fprintf(e.stdout, "\n%s\n  %s\n", lane.Text, c)
		for _, d := range c.Disagreements {
			model := "admitted"
			if d.Logged == accesslog.Admitted {
				model = "refused"
			}
			fmt.Fprintf(e.stdout, "  line %d at %s, key %s: production %s, the model %s\n", d.Line, at(d.At), quoteArg(d.Key), d.Logged, model)
		}
		if more := c.Compared() - c.Agreed() - int64(len(c.Disagreements)); more > 0 {
			fmt.Fprintf(e.stdout, "  and %d more disagreements\n", more)
		}
	}
	return nil
}
