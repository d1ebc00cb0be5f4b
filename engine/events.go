package engine

// eventKind says what an event does when it fires.
type eventKind uint8

const (
	evArrival   eventKind = iota // source src emits its next request
	evAttempt                    // request req (generation gen) tries the limiters again
	evComplete                   // request req's downstream call finishes
	evTimeout                    // request req gives up waiting in the queue
	evQueueWake                  // the queue's head may fit now
	evProceed                    // request req's reservation is due: it goes on to the downstream
	evServer                     // the server's next completion or phase change (gen: the server's epoch)
	evDeadline                   // request req's caller stops waiting for the server's answer
)

// event is one scheduled happening. 32 bytes, no pointers: the heap is a plain slice the
// garbage collector never scans.
type event struct {
	at   int64  // virtual ns
	seq  uint64 // scheduling order: ties at the same instant run first-scheduled first
	kind eventKind
	src  int32
	req  int32
	gen  uint32 // the request slot's generation when scheduled; a stale event is skipped
}

// eventQueue is a binary min-heap on (at, seq). Push and pop are O(log n) and allocate only
// when the slice grows past its largest size so far.
//
// Invariant: for every i > 0, !less(q.items[i], q.items[(i-1)/2]).
type eventQueue struct {
	items []event
	seq   uint64
}

func (q *eventQueue) len() int { return len(q.items) }

func less(a, b *event) bool {
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

// push schedules e, stamping it with the queue's next sequence number. O(log n).
func (q *eventQueue) push(e event) {
	q.seq++
	e.seq = q.seq
	q.insert(e)
}

// insert schedules e, already stamped with its sequence number: a lane's two queues (its
// sources' next arrivals, and every other event) share one numbering, so that the earlier of
// their two tops is the event one heap of both would pop. O(log n).
func (q *eventQueue) insert(e event) {
	q.items = append(q.items, e)
	items := q.items
	i := len(items) - 1
	for i > 0 {
		parent := (i - 1) / 2
		if !less(&items[i], &items[parent]) {
			break
		}
		items[i], items[parent] = items[parent], items[i]
		i = parent
	}
}

// peek returns the earliest event without removing it. The queue must not be empty.
func (q *eventQueue) peek() *event { return &q.items[0] }

// pop removes and returns the earliest event. O(log n).
func (q *eventQueue) pop() event {
	items := q.items
	top := items[0]
	last := len(items) - 1
	items[0] = items[last]
	q.items = items[:last]
	q.siftDown()
	return top
}

// replaceTop removes the earliest event and schedules e in one sift: pop then push, half the
// work. The order of later pops is the same, because (at, seq) keys are unique and e takes the
// sequence number push would have given it.
func (q *eventQueue) replaceTop(e event) {
	q.seq++
	e.seq = q.seq
	q.replaceTopStamped(e)
}

// replaceTopStamped is replaceTop for an e already stamped (see insert).
func (q *eventQueue) replaceTopStamped(e event) {
	q.items[0] = e
	if len(q.items) > 1 {
		q.siftDown()
	}
}

// siftDown restores the invariant after the root was replaced.
func (q *eventQueue) siftDown() {
	items := q.items
	n := len(items)
	i := 0
	for {
		left := 2*i + 1
		if left >= n {
			break
		}
		child := left
		if right := left + 1; right < n && less(&items[right], &items[left]) {
			child = right
		}
		if !less(&items[child], &items[i]) {
			break
		}
		items[i], items[child] = items[child], items[i]
		i = child
	}
}
