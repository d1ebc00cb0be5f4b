package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fit --clients answers per client: the keyed spec at the knee, the clients it refuses by
// name, and with --protect the two-stage stack; within 80 columns.
func TestFitPerClient(t *testing.T) {
	out, _, err := ratelab(t, "fit", "noisy-neighbour", "--clients", "99%", "--protect", "400/1s")
	require.NoError(t, err)
	assert.Contains(t, out, "from 101 clients")
	assert.Contains(t, out, "keys(max=101,evict=lru):token-bucket:capacity=5,rate=12/1s\n")
	assert.Contains(t, out, "admits 100 of 101 clients entirely")
	assert.Contains(t, out, "noisy-neighbour  5804 (97.9%)  5928")
	assert.Contains(t, out, "keys(max=101,evict=lru):token-bucket:capacity=5,rate=12/1s+token-bucket:capacity=160,rate=400/1s")
	for line := range strings.Lines(out) {
		line = strings.TrimSuffix(line, "\n")
		if !strings.Contains(strings.TrimSpace(line), " ") {
			continue // a spec on a line of its own is copied whole, never wrapped
		}
		assert.LessOrEqual(t, utf8.RuneCountInString(line), 80, "%q", line)
		assert.Equal(t, strings.TrimRight(line, " "), line, "no trailing spaces")
	}

	js, _, err := ratelab(t, "fit", "noisy-neighbour", "--clients", "90%", "--format", "json")
	require.NoError(t, err)
	var rep struct {
		Clients        int    `json:"clients"`
		Spec           string `json:"spec"`
		RefusedClients int    `json:"refused_clients"`
		Refused        []struct {
			Key string `json:"key"`
		} `json:"refused"`
	}
	require.NoError(t, json.Unmarshal([]byte(js), &rep))
	assert.Equal(t, 101, rep.Clients)
	assert.LessOrEqual(t, rep.RefusedClients, 10)
	require.NotEmpty(t, rep.Refused)
	assert.Equal(t, "noisy-neighbour", rep.Refused[0].Key)

	for _, bad := range [][]string{
		{"fit", "noisy-neighbour", "--clients", "0%"},
		{"fit", "noisy-neighbour", "--protect", "400/1s"},
		{"fit", "noisy-neighbour", "--clients", "99%", "--protect", "fast"},
		{"fit", "noisy-neighbour", "--clients", "99%", "--refuse", "1%"},
	} {
		_, _, err := ratelab(t, bad...)
		require.Error(t, err, "%v", bad)
	}
}

// A CSV trace with no key column has no clients to fit: the error says how to give them.
func TestFitPerClientNeedsKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nokeys.csv")
	require.NoError(t, os.WriteFile(path, []byte("t_ns,permits\n0,1\n5,1\n"), 0o644))
	_, _, err := ratelab(t, "fit", "--in", path, "--clients", "99%")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "carry no client key")

	// The gateway trace's key column names its six callers.
	out, _, err := ratelab(t, "fit", "--in", "../../scenarios/traces/api-gateway.csv", "--clients", "100%")
	require.NoError(t, err)
	assert.Contains(t, out, "from 6 clients")
	assert.Contains(t, out, "admits 6 of 6 clients entirely, 1919 of 1919 requests")
}
