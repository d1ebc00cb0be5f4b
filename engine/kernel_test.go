package engine

import (
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEventQueueSameTimeIsFIFO(t *testing.T) {
	var q eventQueue
	for i := range 100 {
		q.push(event{at: 5, req: int32(i)})
	}
	q.push(event{at: 1, req: -1})
	require.Equal(t, int32(-1), q.pop().req)
	for i := range 100 {
		e := q.pop()
		assert.Equal(t, int64(5), e.at)
		assert.Equal(t, int32(i), e.req, "same-time events must run in scheduling order")
	}
	assert.Equal(t, 0, q.len())
}

// TestEventQueueMatchesStableSort pushes and pops at random and checks every pop against a
// reference: the pending events stably sorted by time (stable = scheduling order on ties).
func TestEventQueueMatchesStableSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 40 {
		var q eventQueue
		var ref []event
		dirty := false
		pop := func(step int) {
			if dirty {
				sort.SliceStable(ref, func(i, j int) bool { return ref[i].at < ref[j].at })
				dirty = false
			}
			want := ref[0]
			ref = ref[1:]
			require.Equal(t, want.at, q.peek().at, "round %d step %d", round, step)
			got := q.pop()
			require.Equal(t, want.at, got.at, "round %d step %d", round, step)
			require.Equal(t, want.req, got.req, "round %d step %d: ties must pop first-pushed first", round, step)
			require.Equal(t, len(ref), q.len())
		}
		id := int32(0)
		for step := range 3000 {
			// Runs of pushes and runs of pops, with few distinct times: many ties.
			if len(ref) == 0 || (step/50)%3 != 2 {
				e := event{at: rng.Int64N(int64(20 + round*10)), req: id}
				id++
				q.push(e)
				ref = append(ref, e)
				dirty = true
				continue
			}
			pop(step)
		}
		for len(ref) > 0 {
			pop(-1)
		}
		require.Zero(t, q.len())
	}
}

func TestEventIs32Bytes(t *testing.T) {
	assert.Equal(t, uintptr(32), sizeofEvent())
}

// replaceTop is pop then push: the same events come out in the same order.
func TestEventQueueReplaceTopIsPopThenPush(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var a, b eventQueue
	for i := range 500 {
		e := event{at: rng.Int64N(100), req: int32(i)}
		a.push(e)
		b.push(e)
	}
	for i := range 5000 {
		e := event{at: a.peek().at + rng.Int64N(50), req: int32(1000 + i)}
		want := a.pop()
		a.push(e)
		got := b.peek()
		require.Equal(t, want.req, got.req)
		b.replaceTop(e)
		require.Equal(t, a.len(), b.len())
	}
	for a.len() > 0 {
		require.Equal(t, a.pop(), b.pop())
	}
}
