package virtualclock

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAdvanceMovesForwardOnly(t *testing.T) {
	c := New()
	require.Equal(t, time.Duration(0), c.Now())
	require.NoError(t, c.Advance(10*time.Millisecond))
	require.NoError(t, c.AdvanceTo(25*time.Millisecond))
	require.NoError(t, c.AdvanceTo(25*time.Millisecond), "staying put is not moving backwards")
	assert.Equal(t, 25*time.Millisecond, c.Now())

	err := c.Advance(-time.Nanosecond)
	require.ErrorContains(t, err, "cannot move backwards")
	err = c.AdvanceTo(24 * time.Millisecond)
	require.ErrorContains(t, err, "already at 25ms")
	assert.Equal(t, 25*time.Millisecond, c.Now(), "a refused move leaves the clock unchanged")
}

func TestAdvanceRefusesOverflow(t *testing.T) {
	c, err := NewAt(time.Duration(1<<63 - 10))
	require.NoError(t, err)
	require.ErrorContains(t, c.Advance(time.Second), "overflows")
	assert.Equal(t, time.Duration(1<<63-10), c.Now())
}

func TestNewAtRefusesNegativeStart(t *testing.T) {
	_, err := NewAt(-time.Second)
	require.ErrorContains(t, err, "before the origin")
}

func TestFreezeStopsTime(t *testing.T) {
	c := New()
	c.Freeze()
	assert.True(t, c.Frozen())
	require.ErrorIs(t, c.Advance(time.Second), ErrFrozen)
	require.ErrorIs(t, c.AdvanceTo(time.Second), ErrFrozen)
	assert.Equal(t, time.Duration(0), c.Now())
	c.Thaw()
	require.NoError(t, c.Advance(time.Second))
	assert.Equal(t, time.Second, c.Now())
}

// Many goroutines advancing and reading at once: every read is monotonic per reader and the
// final time is the exact sum of all advances.
func TestConcurrentAdvanceIsMonotonicAndExact(t *testing.T) {
	c := New()
	const goroutines, steps = 8, 2000
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := time.Duration(0)
			for i := 0; i < steps; i++ {
				if err := c.Advance(time.Microsecond); err != nil {
					t.Error(err)
					return
				}
				now := c.Now()
				if now < last {
					t.Errorf("time went backwards: %v after %v", now, last)
					return
				}
				last = now
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, goroutines*steps*time.Microsecond, c.Now())
}
