package engine_test

import (
	"testing"
	"time"

	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// The log's rounding, shared by the TUI and the page: four significant digits, never a
// negative time, exact on request; numbers inside words and specs stay as they are.
func TestReadable(t *testing.T) {
	in := "t=1.0105263s live slots [-900ms, 100ms) hold 3; next permit due at 2.022376458s, 194.712345ms ahead; rate=100/1s T=10ms #4"
	if got, want := engine.Readable(in, false), "t=1.011s live slots [0s, 100ms) hold 3; next permit due at 2.022s, 194.7ms ahead; rate=100/1s T=10ms #4"; got != want {
		t.Errorf("rounded:\n got %s\nwant %s", got, want)
	}
	if got, want := engine.Readable(in, true), "t=1.0105263s live slots [0s, 100ms) hold 3; next permit due at 2.022376458s, 194.712345ms ahead; rate=100/1s T=10ms #4"; got != want {
		t.Errorf("exact:\n got %s\nwant %s", got, want)
	}
	for d, want := range map[time.Duration]string{
		12345678 * time.Microsecond: "12.35s", 1010526300: "1.011s", 57512340: "57.5ms",
		1234567: "1.23ms", 250400: "250µs", -1500 * time.Millisecond: "-1.5s", 0: "0s",
	} {
		if got := limiters.ShortDuration(d); got != want {
			t.Errorf("ShortDuration(%d) = %s, want %s", d, got, want)
		}
	}
}
