package scenarios

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Values past the engine's range are refused by validation; through a scenario file the
// refusal points at the value's line and column.
func TestOutOfRangeValuesAreLocated(t *testing.T) {
	const tail = "limiters: [concurrency:max=1]\n"
	for _, tc := range []struct{ name, yaml, want string }{
		{"horizon of 146 years", "horizon: 1281024h\nsources: [{kind: constant, rate: 5}]\n" + tail,
			"f.yaml:1:10: horizon: must be less than 2^62ns (about 146 years), got 1281024h0m0s"},
		{"script from + at", "horizon: 10s\nsources:\n  - kind: script\n    from: 1000000h\n    arrivals:\n      - {at: 0s}\n      - {at: 1000000h}\n" + tail,
			"f.yaml:7:14: sources[0].arrivals[1].at: from (1000000h0m0s) + at (1000000h0m0s) is past 2^62ns (about 146 years)"},
		{"script from past the range", "horizon: 10s\nsources:\n  - kind: script\n    from: 2000000h\n    arrivals: [{at: 1000000h}]\n" + tail,
			"f.yaml:4:11: sources[0].from: must be less than 2^62ns"},
		{"on-off off", "horizon: 10s\nsources:\n  - {kind: on-off, rate: 5, on: 1s, off: 2562047h47m16.854775807s}\n" + tail,
			"f.yaml:3:42: sources[0].off: must be less than 2^62ns (about 146 years), got 2562047h47m16.854775807s"},
		{"burst spread", "horizon: 10s\nsources:\n  - kind: bursts\n    bursts:\n      - {at: 1s, count: 3, spread: 2000000h}\n" + tail,
			"f.yaml:5:36: sources[0].bursts[0].spread: must be less than 2^62ns"},
		{"source permits", "horizon: 10s\nsources:\n  - {kind: constant, rate: 5, permits: 9223372036854775807}\n" + tail,
			"f.yaml:3:40: sources[0].permits: must be at most 2147483647 (2^31-1, so that sums of permits stay exact), got 9223372036854775807"},
		{"uniform max", "horizon: 10s\nsources: [{kind: constant, rate: 5}]\n" + tail + "downstream:\n  service: {kind: uniform, min: 0s, max: 2562047h47m16.854775807s}\n",
			"f.yaml:5:42: downstream.phases[0].service.max: must be less than 2^62ns"},
		{"backoff delay with jitter", "horizon: 10s\nsources: [{kind: constant, rate: 5}]\n" + tail +
			"client: {policy: backoff, delay: 2562047h47m16.854775807s, jitter: true, max_attempts: 3}\n",
			"f.yaml:4:34: client.delay: must be less than 2^62ns"},
		{"backoff max_delay", "horizon: 10s\nsources: [{kind: constant, rate: 5}]\n" + tail +
			"client:\n  policy: backoff\n  delay: 1ms\n  max_delay: 2000000h\n  max_attempts: 3\n",
			"f.yaml:7:14: client.max_delay: must be less than 2^62ns"},
		{"window", "horizon: 10s\nwindows: [1s, 2000000h]\nsources: [{kind: constant, rate: 5}]\n" + tail,
			"f.yaml:2:15: windows[1]: must be less than 2^62ns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load("f.yaml", []byte(tc.yaml))
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), tc.want), "got  %s\nwant %s…", err, tc.want)
			var fe *FileError
			assert.True(t, errors.As(err, &fe), "a *FileError")
		})
	}
}
