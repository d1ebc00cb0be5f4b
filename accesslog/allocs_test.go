package accesslog

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The line readers allocate nothing per row once warm: the ALB, Envoy and CloudFront lines
// are split into spans of the line, and their stamps and durations parsed in place. (A HAR's
// entries are decoded by encoding/json, which allocates each entry's strings: HAR files are
// a browser session's requests, not a server's day.)
func TestNewReadersAllocateNothingPerRow(t *testing.T) {
	for name, sample := range map[string]string{
		"alb":        strings.SplitAfter(albLog, "\n")[2],
		"envoy":      strings.SplitAfter(envoyLog, "\n")[2],
		"cloudfront": strings.SplitAfter(cloudFrontLog, "\n")[2],
	} {
		in, err := Open(strings.NewReader(strings.Repeat(sample, 5000)), Options{Format: name, Key: "method+path"})
		require.NoError(t, err)
		for range 1000 {
			_, err := in.Log().Next()
			require.NoError(t, err, name)
		}
		allocs := testing.AllocsPerRun(2000, func() {
			if _, err := in.Log().Next(); err != nil {
				t.Fatal(name, err)
			}
		})
		require.Zero(t, allocs, name)
	}
}
