package accesslog

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Verdict is what the production limiter decided for a request, as its log records it.
type Verdict uint8

const (
	// Unlogged: the log does not say (no $limit_req_status, or "-" where no limit_req
	// applies; no status named by Options.RefusedStatus).
	Unlogged Verdict = iota
	// Admitted: nginx's PASSED or DELAYED (served after a wait), or a status not named by
	// Options.RefusedStatus.
	Admitted
	// Refused: nginx's REJECTED, or a status named by Options.RefusedStatus (HAProxy's 429
	// from a stick table, any proxy's 503).
	Refused
)

func (v Verdict) String() string {
	switch v {
	case Admitted:
		return "admitted"
	case Refused:
		return "refused"
	}
	return "unlogged"
}

// verdict is a record's logged verdict: from nginx's $limit_req_status where the format has
// it, else from its status when refused names statuses. A dry run's decision is the
// limiter's (REJECTED_DRY_RUN is Refused, though nginx served the request).
func verdict(hasDecision bool, d Decision, status int, refused []int) Verdict {
	if hasDecision {
		switch d {
		case DecisionPassed, DecisionDelayed, DecisionDelayedDryRun:
			return Admitted
		case DecisionRejected, DecisionRejectedDryRun:
			return Refused
		}
		return Unlogged
	}
	if len(refused) == 0 || status == 0 {
		return Unlogged
	}
	for _, s := range refused {
		if s == status {
			return Refused
		}
	}
	return Admitted
}

// parseStatuses reads Options.RefusedStatus: "429" or "429,503".
func parseStatuses(text string) ([]int, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(text, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 100 || v > 599 {
			return nil, fmt.Errorf("--refused-status %s: %q is not an HTTP status (100 to 599); give one or more separated by commas, e.g. 429,503", text, strings.TrimSpace(f))
		}
		out = append(out, v)
	}
	return out, nil
}

// Comparison is a model's decisions beside the ones production logged, request by request.
type Comparison struct {
	Requests int64 // all the requests read, each decided by the model
	Unlogged int64 // of them, those whose log records no decision: not compared
	// Matrix counts the compared requests: Matrix[logged][model], 0 admitted and 1 refused.
	Matrix [2][2]int64
	// Disagreements are the first MaxDisagreements requests decided otherwise, in arrival
	// order.
	Disagreements []Disagreement
}

// MaxDisagreements is how many disagreements a Comparison lists.
const MaxDisagreements = 20

// Disagreement is a request the model decided otherwise than production.
type Disagreement struct {
	Line   int
	At     time.Duration
	Key    string
	Logged Verdict
}

// Compared is how many requests had a logged decision; Agreed how many of them the model
// decided alike.
func (c Comparison) Compared() int64 { return c.Requests - c.Unlogged }
func (c Comparison) Agreed() int64   { return c.Matrix[0][0] + c.Matrix[1][1] }

// String is "agreed on 38 of 40 logged decisions (95.0%): production admitted 30 (model
// refused 1 of them), refused 10 (model admitted 1); 2 logged no decision (…)".
func (c Comparison) String() string {
	pct := 100.0
	if n := c.Compared(); n > 0 {
		pct = 100 * float64(c.Agreed()) / float64(n)
	}
	s := fmt.Sprintf("agreed on %d of %d logged decisions (%.1f%%): production admitted %d (model refused %d of them), refused %d (model admitted %d)",
		c.Agreed(), c.Compared(), pct, c.Matrix[0][0]+c.Matrix[0][1], c.Matrix[0][1], c.Matrix[1][0]+c.Matrix[1][1], c.Matrix[1][0])
	if c.Unlogged > 0 {
		s += fmt.Sprintf("; %d logged no decision (decided by the model, not compared)", c.Unlogged)
	}
	return s
}

// Compare reads every request of r in arrival order, has model decide each (true:
// admitted) — the unlogged ones too, as they are traffic the model sees — and counts where
// it agrees with the logged verdict.
func Compare(r *Reader, model func(rec *Record) bool) (Comparison, error) {
	c, err := CompareAll(r, []func(rec *Record) bool{model})
	return c[0], err
}

// CompareAll is Compare for several models in one read, each deciding every request in turn
// (so a log read once, from standard input, is compared with every model).
func CompareAll(r *Reader, models []func(rec *Record) bool) ([]Comparison, error) {
	cs := make([]Comparison, len(models))
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return cs, nil
		}
		if err != nil {
			return cs, err
		}
		for i, model := range models {
			cs[i].add(rec, model(rec))
		}
	}
}

// add counts one request the model decided (admitted or not).
func (c *Comparison) add(rec *Record, admitted bool) {
	c.Requests++
	if rec.Logged == Unlogged {
		c.Unlogged++
		return
	}
	l, m := 0, 0
	if rec.Logged == Refused {
		l = 1
	}
	if !admitted {
		m = 1
	}
	c.Matrix[l][m]++
	if l != m && len(c.Disagreements) < MaxDisagreements {
		c.Disagreements = append(c.Disagreements, Disagreement{Line: rec.Line, At: rec.At, Key: string(rec.Key), Logged: rec.Logged})
	}
}
