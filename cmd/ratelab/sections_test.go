package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The run table gains a fleet section under it; the JSON carries each lane's fleet.
func TestRunFleetTableAndJSON(t *testing.T) {
	var out, errs bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"run", "fleet"}, strings.NewReader(""), &out, &errs), errs.String())
	text := out.String()
	assert.Contains(t, text, "fleet (overshoot: the most admitted in one window over one limiter's bound for it)")
	assert.Contains(t, text, "local, 3 instances round-robin  300 in 1s, bound 179: overshoot 1.68  shares 33% 33% 33%")
	assert.Contains(t, text, "store: 3000 ops, 600 failed")
	assert.NotContains(t, text, "per key", "one key: no per-key section")
	out.Reset()
	require.NoError(t, run(context.Background(), []string{"run", "fleet", "--format", "json"}, strings.NewReader(""), &out, &errs), errs.String())
	var res struct {
		Lanes []struct {
			Name   string
			Totals struct{ Offered, Admitted, Refused, TimedOut, GaveUp, Waiting int64 }
			Fleet  *struct {
				Overshoot     float64 `json:"overshoot"`
				StoreFailures int64   `json:"store_failures"`
				Instances     []struct {
					Admitted int64 `json:"admitted"`
				} `json:"instances"`
			}
		}
	}
	require.NoError(t, json.NewDecoder(strings.NewReader(out.String())).Decode(&res))
	require.Len(t, res.Lanes, 6)
	assert.Nil(t, res.Lanes[0].Fleet)
	assert.Equal(t, 1.676, res.Lanes[1].Fleet.Overshoot)
	assert.EqualValues(t, 600, res.Lanes[3].Fleet.StoreFailures)
	for _, l := range res.Lanes {
		tt := l.Totals
		assert.Equal(t, tt.Offered, tt.Admitted+tt.Refused+tt.TimedOut+tt.GaveUp+tt.Waiting, l.Name)
	}
}
