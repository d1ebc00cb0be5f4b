package engine

import (
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/virtualclock"
)

// region is memory a lane writes at every event.
type region struct {
	what       string
	start, end uintptr
}

func sliceRegion[T any](what string, s []T) region {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	return region{what, p, p + uintptr(cap(s))*unsafe.Sizeof(*new(T))}
}

func objectRegion[T any](what string, p *T) region {
	a := uintptr(unsafe.Pointer(p))
	return region{what, a, a + unsafe.Sizeof(*p)}
}

// The perf scenario's six lanes, run to their working size, write no cache line in common:
// what each writes at every event (its clock, its source's state and generator, its request
// slots, free list, event heaps, the lane itself) lies on lines no other
// lane's does (lines.go). Before, the sources' states (112 bytes each, made one lane after
// the other) straddled lines shared by neighbouring lanes, each written by its own lane at
// every arrival: without flatStream's pad this test fails, "lane 3: source shares a cache
// line with lane 2: source".
func TestLanesWriteNoCacheLineInCommon(t *testing.T) {
	require.Equal(t, uintptr(16), unsafe.Sizeof(virtualclock.Clock{}), "clockOnOwnLine's pad assumes it")
	require.Equal(t, uintptr(16), unsafe.Sizeof(rand.PCG{}), "pcgOnOwnLine's pad assumes it")
	require.Equal(t, uintptr(cacheLine), unsafe.Sizeof(clockOnOwnLine{}))
	require.Equal(t, uintptr(cacheLine), unsafe.Sizeof(pcgOnOwnLine{}))
	require.Zero(t, unsafe.Sizeof(flatStream{})%128, "a multiple of 128 bytes: a size class of whole lines")
	require.GreaterOrEqual(t, unsafe.Sizeof(Lane{}), uintptr(512))

	sc := perfScenario(t, time.Hour)
	require.NoError(t, sc.Validate())
	owner := map[uintptr]string{} // line → "lane i: what"
	for i := range sc.Lanes {
		l, err := NewLane(sc, i)
		require.NoError(t, err)
		defer l.Close()
		for range 100_000 {
			_, err := l.Step()
			require.NoError(t, err)
		}
		fs := l.flat[0]
		require.NotNil(t, fs, "a poisson source takes the flat path")
		regions := []region{
			objectRegion("lane", l),
			objectRegion("clock", l.clock),
			objectRegion("source", &fs.flatState),
			sliceRegion("requests", l.reqs),
			sliceRegion("free list", l.free),
			sliceRegion("events", l.events.items),
			sliceRegion("arrivals", l.arrivals.items),
		}
		// One key, known before the run: no per-key counters at all (keyCounts.single).
		require.True(t, l.keys.single, "lane %d", i)
		require.Empty(t, l.keys.counts, "lane %d", i)
		for _, r := range regions {
			require.Greater(t, r.end, r.start, "lane %d: %s", i, r.what)
			for line := r.start / cacheLine; line <= (r.end-1)/cacheLine; line++ {
				me := "lane " + string(rune('0'+i)) + ": " + r.what
				if o, ok := owner[line]; ok && o[:6] != me[:6] {
					t.Errorf("%s shares a cache line with %s", me, o)
				}
				owner[line] = me
			}
		}
	}
}

// newRand's generator is the stream rand.New(rand.NewPCG(…)) gives, draw for draw.
func TestNewRandIsPCGsStream(t *testing.T) {
	a, b := newRand(7, 0x5eed0003), rand.New(rand.NewPCG(7, 0x5eed0003))
	for range 1000 {
		require.Equal(t, b.ExpFloat64(), a.ExpFloat64())
		require.Equal(t, b.Uint64(), a.Uint64())
	}
}
