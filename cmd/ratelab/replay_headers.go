package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/ratelab/ratelab/engine"
	ratelimitheaders "github.com/ratelab/ratelab/headers"
	"github.com/ratelab/ratelab/limiters"
	"github.com/ratelab/ratelab/redislimit/redislanes"
	"github.com/ratelab/ratelab/trace"
	"github.com/ratelab/ratelab/virtualclock"
)

// replayHeaders decides every row of a trace with each lane's stack, as replay does (open
// loop, each key with its own limiter in a keyed stage, a stage whose callers wait
// reserving), and writes, per lane, the decision and the header fields a server would send
// with it: what httplimit sends for the same arrivals. Columns: t_ns, permits, key, then for
// each lane "SPEC" (1 or 0), "SPEC RateLimit" and "SPEC Retry-After"; RateLimit-Policy, the
// same for every row of an unkeyed lane, is printed once per lane on standard error.
func replayHeaders(e *env, source string, input io.Reader, out io.Writer, lanes []redislanes.Lane) error {
	rows, err := trace.NewReader(input)
	if err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	clock := virtualclock.New()
	type lane struct {
		stack    *engine.Stack
		policies []ratelimitheaders.Policy
	}
	built := make([]lane, len(lanes))
	header := []string{"t_ns", "permits", "key"}
	for i, l := range lanes {
		stack, err := engine.NewStack(l.Specs, clock)
		if err != nil {
			return fmt.Errorf("--limiter %s: %w", quoteArg(l.Text), err)
		}
		if stack.SetWaits(l.Specs, 0) {
			if err := stack.CanReserve(); err != nil {
				return fmt.Errorf("--limiter %s: %w", quoteArg(l.Text), err)
			}
		}
		built[i] = lane{stack, ratelimitheaders.Policies(l.Specs)}
		name := engine.StackString(l.Specs)
		header = append(header, name, name+" RateLimit", name+" Retry-After")
	}
	w := csv.NewWriter(out)
	if err := w.Write(header); err != nil {
		return err
	}
	record := make([]string, len(header))
	var quotas []limiters.Quota
	first := true
	for {
		row, err := rows.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", source, err)
		}
		if err := clock.AdvanceTo(row.At); err != nil {
			return fmt.Errorf("%s: line %d: %w", source, row.Line, err)
		}
		record[0], record[1], record[2] = strconv.FormatInt(int64(row.At), 10), strconv.Itoa(row.Permits), row.Key
		for i := range built {
			l := &built[i]
			d, stage, _ := l.stack.Decide(row.At, row.Key, row.Permits)
			a := ratelimitheaders.AnswerOf(l.stack.Stages(), l.policies, row.At, row.Permits, d, stage, row.Key, quotas)
			quotas = a.Quotas
			f := a.Fields(l.policies, ratelimitheaders.Style{Draft: true, RetryAfter: true}, time.Time{})
			if first {
				perKey := ""
				if slices.ContainsFunc(l.policies, func(p ratelimitheaders.Policy) bool { return p.Keyed }) {
					perKey = " (pk: each request's key; this is the first's)"
				}
				fmt.Fprintf(e.stderr, "%s: RateLimit-Policy: %s%s\n", lanes[i].Text, f.RateLimitPolicy, perKey)
			}
			admitted := "0"
			if d == limiters.Admitted {
				admitted = "1"
				l.stack.BindHeld(row.Key)
				l.stack.Complete(row.At, row.Permits, 0, true) // open loop: done as soon as admitted
			}
			record[3+3*i], record[4+3*i], record[5+3*i] = admitted, f.RateLimit, f.RetryAfter
		}
		first = false
		if err := w.Write(record); err != nil {
			return err
		}
	}
	w.Flush()
	return w.Error()
}
