package accesslog

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// --log-format auto tells every format from its content, none taken for another; named, each
// reads its own sample and refuses the others' at their first line.
func TestDetectionTellsEveryFormat(t *testing.T) {
	samples := map[string]string{
		"nginx combined": combined,
		"haproxy":        haproxyRaw,
		"caddy":          `{"level":"info","ts":1700000000.5,"request":{"remote_ip":"127.0.0.1"},"duration":0.5,"status":200}` + "\n",
		"alb":            albLog,
		"envoy":          envoyLog,
		"cloudfront":     cloudFrontLog,
		"har":            harLog,
	}
	names := map[string]string{"nginx combined": "combined", "haproxy": "haproxy", "caddy": "caddy", "alb": "alb",
		"envoy": "envoy", "cloudfront": "cloudfront", "har": "har"}
	for label, log := range samples {
		in, err := Open(strings.NewReader(log), Options{})
		require.NoError(t, err, label)
		require.Equal(t, label, in.Log().Format(), "detected")
		for other, name := range names {
			if other == label || other == "caddy" && label == "har" {
				continue // a HAR is JSON, which the caddy format reads line by line and refuses at line 2
			}
			in, err := Open(strings.NewReader(log), Options{Format: name})
			if err == nil {
				_, err = in.Log().Next()
			}
			require.Error(t, err, "%s read as %s", label, name)
		}
	}
}

// A file that is none of them gets one line: every format tried (the new ones too), where
// the closest stopped, and the flag that names a format.
func TestUnrecognisedNamesEveryFormatTried(t *testing.T) {
	_, err := Open(strings.NewReader("GET /index.html 200\nGET /about 404\n"), Options{})
	require.Error(t, err)
	msg := err.Error()
	require.NotContains(t, msg, "\n")
	for _, f := range []string{"nginx combined", "haproxy", "alb", "envoy", "cloudfront", "caddy", "har (not a JSON document", "--log-format (auto, csv, combined, common, nginx:FORMAT, caddy, json, haproxy, alb, cloudfront, envoy, har)"} {
		require.Contains(t, msg, f)
	}
	require.Regexp(t, `the closest, [a-z ]+, stops at line \d+, column \d+: `, msg)
}
