package redislimit

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/ratelab/ratelab/limiters"
)

// call is one script run: a decision (or, peek, a read of the state) of l for n permits at.
type call struct {
	l    *Limiter
	at   time.Duration
	n    int
	peek bool
	raw  *reply // a peek's reply goes here
}

// decide is one decision (or peek) in one round trip.
func (l *Limiter) decide(ctx context.Context, now time.Duration, n int, peek bool) (Result, error) {
	if !peek {
		if d := checkN(n, l.maxN); d != limiters.Admitted {
			return Result{Decision: d}, nil
		}
	}
	var out [1]Result
	err := l.client.exec(ctx, 1, func(int) call { return call{l: l, at: now, n: n} }, out[:], nil)
	return out[0], err
}

// peek reads the state at now (see the scripts' peek argument) in one round trip.
func (l *Limiter) peek(ctx context.Context, now time.Duration) (reply, error) {
	var rep reply
	var out [1]Result
	err := l.client.exec(ctx, 1, func(int) call { return call{l: l, at: now, n: 1, peek: true, raw: &rep} }, out[:], nil)
	return rep, err
}

// exec runs calls 0 … count−1 on one connection as one pipeline: every command written in one
// write, then every reply read in order (Redis runs them one after another in the order sent).
// A request no limiter could admit (n ≤ 0, n > MaxPermits) is decided here and not sent.
// out[i] is call i's result and, when errs is not nil, errs[i] its error (a *StoreError), nil
// when the store decided. It returns the first error.
// A server that answers NOSCRIPT (restarted, failed over, SCRIPT FLUSH) is sent the scripts
// with SCRIPT LOAD and those calls again, in their order, in a second round trip.
func (c *Client) exec(ctx context.Context, count int, calls func(int) call, out []Result, errs []error) (first error) {
	fail := func(i int, err error) {
		cl := calls(i)
		err = &StoreError{Kind: cl.l.spec.Kind(), Key: cl.l.key, Err: err}
		if errs != nil {
			errs[i] = err
		}
		if first == nil {
			first = err
		}
	}
	sent := 0
	for i := range count {
		out[i] = Result{}
		if errs != nil {
			errs[i] = nil
		}
		if cl := calls(i); !cl.peek {
			if d := checkN(cl.n, cl.l.maxN); d != limiters.Admitted {
				out[i].Decision = d
				continue
			}
		}
		sent++
	}
	if sent == 0 {
		return nil
	}
	cn, err := c.get(ctx)
	if err == nil {
		err = ctx.Err()
		if err == nil {
			err = cn.deadline(ctx, c.opts.Timeout)
		}
		defer c.put(cn)
	}
	if err != nil {
		for i := range count {
			if unsent(calls(i)) {
				continue
			}
			fail(i, err)
		}
		return first
	}
	cn.w = cn.w[:0]
	for i := range count {
		if cl := calls(i); !unsent(cl) {
			cn.w = cl.l.appendCall(cn.w, cl.at, cl.n, cl.peek)
		}
	}
	var again []int // answered NOSCRIPT
	read := func(i int) {
		cl := calls(i)
		if cn.broken {
			fail(i, errBroken)
			return
		}
		var v [6]int64
		k, err := cn.ints("EVALSHA", v[:])
		switch {
		case isNoScript(err):
			again = append(again, i)
		case err != nil:
			fail(i, err)
		case cl.raw != nil:
			if *cl.raw, err = cl.l.parse(v[:k]); err != nil {
				fail(i, err)
			}
		default:
			if out[i], err = cl.l.result(v[:k]); err != nil {
				fail(i, err)
			}
		}
	}
	if err := cn.flush(); err != nil {
		for i := range count {
			if !unsent(calls(i)) {
				fail(i, err)
			}
		}
		return first
	}
	for i := range count {
		if !unsent(calls(i)) {
			read(i)
		}
	}
	if len(again) == 0 || cn.broken {
		return first
	}
	cn.w = cn.w[:0]
	var loaded []*script
	for _, i := range again {
		if s := calls(i).l.script; !contains(loaded, s) {
			loaded = append(loaded, s)
			cn.w = appendCommand(cn.w, "SCRIPT", "LOAD", s.src)
		}
	}
	for _, i := range again {
		cl := calls(i)
		cn.w = cl.l.appendCall(cn.w, cl.at, cl.n, cl.peek)
	}
	err = cn.flush()
	for _, s := range loaded {
		if err != nil {
			break
		}
		var sha string
		if sha, err = cn.bulk("SCRIPT LOAD"); err == nil && sha != s.sha {
			err = cn.protocol("SCRIPT LOAD", []byte(sha))
		}
	}
	if err != nil {
		for _, i := range again {
			fail(i, err)
		}
		return first
	}
	for _, i := range again {
		read(i)
	}
	return first
}

// errBroken is the error of the calls after one whose reply broke the connection.
var errBroken = errors.New("redis: the connection failed before this reply (see the first error)")

func unsent(cl call) bool { return !cl.peek && checkN(cl.n, cl.l.maxN) != limiters.Admitted }

func contains(ss []*script, s *script) bool {
	for _, t := range ss {
		if t == s {
			return true
		}
	}
	return false
}

// isNoScript reports a "NOSCRIPT No matching script" reply.
func isNoScript(err error) bool {
	re, ok := err.(*ReplyError) // as cn.ints returns it: a type assertion allocates nothing
	return ok && strings.HasPrefix(re.Msg, "NOSCRIPT")
}

// prepare makes the bytes every call of l begins with: EVALSHA, the digest, one key, the
// key; and the expiry argument.
func (l *Limiter) prepare() {
	argc := 5 // GCRA: now, cost, room, ttl, peek
	if !l.isGCRA {
		argc = 7 // now, n, limit, window, index, ttl, peek
	}
	w := []byte{'*'}
	w = strconv.AppendInt(w, int64(4+argc), 10)
	w = append(w, "\r\n"...)
	for _, s := range []string{"EVALSHA", l.script.sha, "1", l.key} {
		w = appendBulk(w, s)
	}
	l.head = w
	l.ttlArg = appendBulk(nil, l.ttl)
}

const (
	emptyBulk = "$0\r\n\r\n"
	oneBulk   = "$1\r\n1\r\n"
)

// appendCall appends l's EVALSHA for n permits at now (see gcraLua and windowLua for the
// arguments), allocating nothing.
func (l *Limiter) appendCall(w []byte, now time.Duration, n int, peek bool) []byte {
	w = append(w, l.head...)
	if l.clock == CallerClock {
		w = appendBulkInt(w, int64(now))
	} else {
		w = append(w, emptyBulk...)
	}
	if peek {
		n = 1
	}
	if l.isGCRA {
		cost := int64(n) * l.interval // ≤ τ ≤ 2^62: n ≤ τ/T
		w = appendBulkInt(w, cost)
		w = appendBulkInt(w, l.tolerance-cost)
	} else {
		w = appendBulkInt(w, int64(n))
		w = appendBulkInt(w, int64(l.limit))
		if l.clock == ServerClock {
			w = appendBulkInt(w, l.window/int64(time.Microsecond))
			w = append(w, emptyBulk...)
		} else {
			w = appendBulkInt(w, l.window)
			w = appendBulkInt(w, int64(now)/l.window)
		}
	}
	w = append(w, l.ttlArg...)
	if peek {
		return append(w, oneBulk...)
	}
	return append(w, emptyBulk...)
}

// reply is a script's answer: {code, a_s, a_ns, now_s, now_ns} or {code, used, index_s,
// index_ns, now_s, now_ns}.
type reply struct {
	code, used int64
	a          int64 // GCRA: the wait (code 0) or the backlog (code 2); window: the index
	at         int64
}

func (l *Limiter) parse(v []int64) (reply, error) {
	const B = int64(time.Second)
	if l.isGCRA && len(v) == 5 {
		return reply{code: v[0], a: v[1]*B + v[2], at: v[3]*B + v[4]}, nil
	}
	if !l.isGCRA && len(v) == 6 {
		return reply{code: v[0], used: v[1], a: v[2]*B + v[3], at: v[4]*B + v[5]}, nil
	}
	return reply{}, errors.New("unexpected reply " + formatInts(v))
}

func formatInts(v []int64) string {
	b := []byte{'['}
	for i, x := range v {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, x, 10)
	}
	return string(append(b, ']'))
}

// result is the decision a reply says; a peek's reply is kept in a Result by state.
func (l *Limiter) result(v []int64) (Result, error) {
	rep, err := l.parse(v)
	if err != nil {
		return Result{}, err
	}
	r := Result{Decision: limiters.Rejected, At: time.Duration(rep.at)}
	switch {
	case rep.code == 1:
		r.Decision = limiters.Admitted
	case l.isGCRA:
		r.RetryAfter = time.Duration(rep.a)
	default:
		// The counted window's end less now: W − (now − index·W), which a late caller's newer
		// window makes longer than W.
		r.RetryAfter = time.Duration(l.window - (rep.at - rep.a*l.window))
	}
	return r, nil
}

// AcquireBatch decides every request in one round trip (a pipeline of EVALSHAs on one
// connection; a second when the server answered NOSCRIPT and was sent the script), writing
// out[i] for reqs[i]; out must be at least as long. Redis runs the scripts one after another
// in the order sent, so the decisions are those of the requests made one by one, in order
// (with CallerClock, give their times in order too). It returns the first failure, and out[i]
// is then the zero Result for each request the store did not answer. A batch of 64 on
// loopback takes about as long as redis-benchmark -P 64 takes for 64 of the same EVALSHA.
func (l *Limiter) AcquireBatch(ctx context.Context, reqs []Request, out []Result) error {
	if len(out) < len(reqs) {
		return errors.New("redislimit: AcquireBatch: " + strconv.Itoa(len(out)) + " results for " + strconv.Itoa(len(reqs)) + " requests")
	}
	if l.clock == CallerClock {
		for i, r := range reqs {
			if err := checkTime(r.At); err != nil {
				return errors.New("request " + strconv.Itoa(i) + ": " + err.Error())
			}
		}
	}
	return l.client.exec(ctx, len(reqs), func(i int) call { return call{l: l, at: reqs[i].At, n: reqs[i].Permits} }, out, nil)
}

// Command is the EVALSHA a decision of n permits at now sends, as its arguments
// ("EVALSHA", the digest, "1", the key, then the script's): for redis-cli, or redis-benchmark
// timing the same call as a floor.
func (l *Limiter) Command(now time.Duration, n int) []string {
	w := l.appendCall(nil, now, n, false)
	var args []string
	for len(w) > 0 {
		nl := strings.Index(string(w), "\r\n")
		line := string(w[:nl])
		w = w[nl+2:]
		if line[0] != '$' {
			continue
		}
		size, _ := strconv.Atoi(line[1:])
		args = append(args, string(w[:size]))
		w = w[size+2:]
	}
	return args
}
