package engine

import (
	"math"
	"strings"
	"time"

	"github.com/ratelab/ratelab/internal/wording"
)

// QueueDiscipline is the order in which the queue policy's waiting requests go on, and what
// the queue sheds on its own (Client.Discipline):
//
//   - fifo (the default): oldest first; a request leaves only admitted or at its Timeout.
//   - lifo: newest first. Under a standing queue the newest request is the one whose caller
//     most likely still waits for it; the oldest wait until their Timeout.
//   - codel: oldest first, with CoDel's drops (Nichols & Jacobson, RFC 8289), a request
//     counting as a packet and "dequeue" being the moment the stack could take the request
//     at the front. Its sojourn (time waited) is judged against CoDelTarget = 5ms: once every
//     request taken for CoDelInterval = 100ms waited longer, the queue drops the one at the
//     front and enters its dropping state, where it drops again at intervals of
//     100ms/√count (100ms, 70.7ms, 57.7ms, 50ms, ...: the control law) until a request
//     waited less than 5ms. A dropped request is refused (the service's 503), before the
//     stack is asked: it costs no permit.
//   - adaptive-lifo: Facebook's adaptive LIFO with controlled delay (Maurer, "Fail at
//     Scale", 2015): when the queue has not been empty for the last CoDelInterval (100ms)
//     it is congested, and it serves newest first and gives a request that joins then a
//     queue timeout of CoDelTarget (5ms); otherwise oldest first, and a joining request's
//     queue timeout is CoDelInterval (100ms). The client's Timeout still applies when
//     shorter. Timed-out requests count as timed out.
type QueueDiscipline string

// The queue disciplines.
const (
	QueueFIFO         QueueDiscipline = "fifo"
	QueueLIFO         QueueDiscipline = "lifo"
	QueueCoDel        QueueDiscipline = "codel"
	QueueAdaptiveLIFO QueueDiscipline = "adaptive-lifo"
)

// QueueDisciplines lists every discipline, in the order errors name them.
var QueueDisciplines = []QueueDiscipline{QueueFIFO, QueueLIFO, QueueCoDel, QueueAdaptiveLIFO}

// CoDel's constants, RFC 8289's defaults (and Facebook's M and N for adaptive-lifo).
const (
	CoDelTarget   = 5 * time.Millisecond   // a sojourn above it counts against the queue
	CoDelInterval = 100 * time.Millisecond // how long it must stay above before a drop
)

func (q QueueDiscipline) validate(field string) error {
	switch q {
	case "", QueueFIFO, QueueLIFO, QueueCoDel, QueueAdaptiveLIFO:
		return nil
	}
	names := make([]string, len(QueueDisciplines))
	for i, d := range QueueDisciplines {
		names[i] = string(d)
	}
	return fieldErr(field, "unknown queue discipline %q%s (%s)", q, wording.DidYouMean(string(q), names), strings.Join(names, ", "))
}

// codel is CoDel's state (RFC 8289 section 5), written for a queue that is asked about one
// request at a time: next judges the request at the front when the stack could take it, and
// says whether to drop it; after a drop the caller asks about the new front at once, which
// is the RFC's dequeue loop unrolled. Times are the lane's nanoseconds; 0 is "none" for
// firstAbove, as in the RFC (a lane's first instant is 0 but firstAbove is always at least
// CoDelInterval).
type codel struct {
	firstAbove int64  // when the sojourn, above target since, will have been for an interval
	dropNext   int64  // the dropping state's next drop time
	count      uint32 // drops since entering the dropping state (or the count it resumed)
	lastCount  uint32 // count when the dropping state was last entered
	dropping   bool
	// follow is where the RFC's dequeue stands for the next request judged: after the drop
	// that entered the dropping state the next request goes on whatever (followEnter); after
	// a drop within it, the next one that is also ok to drop moves dropNext by the control
	// law before the loop's test (followDrop).
	follow uint8
}

const (
	followNone uint8 = iota
	followEnter
	followDrop
)

// okToDrop is the RFC's dodequeue for a request taken at now that waited sojourn, with
// nobody behind it when alone (the RFC's "at most one MTU left"): a sojourn below target, or
// a queue that empties, resets the clock; a sojourn above it for an interval makes the
// request droppable.
func (c *codel) okToDrop(now, sojourn int64, alone bool) bool {
	if sojourn < int64(CoDelTarget) || alone {
		c.firstAbove = 0
		return false
	}
	if c.firstAbove == 0 {
		c.firstAbove = now + int64(CoDelInterval)
		return false
	}
	return now >= c.firstAbove
}

// next judges the request at the front (see okToDrop) and reports whether to drop it.
func (c *codel) next(now, sojourn int64, alone bool) (drop bool) {
	ok := c.okToDrop(now, sojourn, alone)
	switch f := c.follow; {
	case f == followEnter:
		c.follow = followNone
		return false
	case c.dropping:
		if !ok {
			c.dropping, c.follow = false, followNone
			return false
		}
		if c.follow == followDrop {
			c.dropNext = controlLaw(c.dropNext, c.count)
		}
		c.follow = followNone
		if now >= c.dropNext {
			c.count++
			c.follow = followDrop
			return true
		}
		return false
	case ok:
		// Enter the dropping state. A recent one (within 16 intervals) that dropped more
		// than once resumes near its drop rate: count starts at the drops it made since.
		delta := c.count - c.lastCount
		c.count = 1
		if delta > 1 && now-c.dropNext < 16*int64(CoDelInterval) {
			c.count = delta
		}
		c.dropNext = controlLaw(now, c.count)
		c.lastCount = c.count
		c.dropping, c.follow = true, followEnter
		return true
	}
	return false
}

// idle is the queue emptied: the RFC's dequeue of an empty queue leaves the dropping state
// and forgets the sojourn above target.
func (c *codel) idle() {
	c.firstAbove, c.dropping, c.follow = 0, false, followNone
}

// controlLaw is t + interval/√count: the drops come faster the longer the queue stands
// (count 1: 100ms, 4: 50ms, 100: 10ms).
func controlLaw(t int64, count uint32) int64 {
	return t + int64(float64(CoDelInterval)/math.Sqrt(float64(count)))
}
