package crosscheck

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	stripe "github.com/stripe/stripe-go/v84"

	"github.com/ratelab/ratelab/clients"
	"github.com/ratelab/ratelab/engine"
	"github.com/ratelab/ratelab/limiters"
)

// stripeAnswer is one scripted answer of the fake API: a status, its error code (an error
// body when not ""), and Stripe-Should-Retry ("" for none).
type stripeAnswer struct {
	status      int
	code        string
	shouldRetry string
}

// stripeCall makes one call through stripe-go's own backend (its retry loop, its
// shouldRetry, its sleepTime on the wall clock) against a loopback server that answers
// from script, and returns how many requests the server saw and when.
func stripeCall(t *testing.T, script []stripeAnswer) []time.Time {
	t.Helper()
	var mu sync.Mutex
	var seen []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		a := script[min(len(seen), len(script)-1)]
		seen = append(seen, time.Now())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if a.shouldRetry != "" {
			w.Header().Set("Stripe-Should-Retry", a.shouldRetry)
		}
		w.WriteHeader(a.status)
		if a.code != "" {
			fmt.Fprintf(w, `{"error":{"type":"invalid_request_error","code":%q,"message":"scripted"}}`, a.code)
			return
		}
		fmt.Fprint(w, `{"id":"ch_1","object":"charge"}`)
	}))
	defer srv.Close()
	backend := stripe.GetBackendWithConfig(stripe.APIBackend, &stripe.BackendConfig{
		URL: stripe.String(srv.URL), HTTPClient: srv.Client(), MaxNetworkRetries: stripe.Int64(clients.StripeMaxNetworkRetries),
		LeveledLogger: &stripe.LeveledLogger{Level: stripe.LevelNull}, EnableTelemetry: stripe.Bool(false),
	})
	_ = backend.Call(http.MethodGet, "/v1/charges/ch_1", "sk_test_ratelab", &stripe.ChargeParams{}, &stripe.Charge{})
	mu.Lock()
	defer mu.Unlock()
	return append([]time.Time(nil), seen...)
}

// stripe-go v84.4.1's retry rules, driven through its real backend against a loopback
// server: which answers it retries (clients.StripeRetries: a 429 only with code
// lock_timeout; never a 429 rate_limit, even with Stripe-Should-Retry: true, nor a 409; a
// 500 with an error body neither, since every error answer is an API error whose canRetry
// decides) is compared exactly, by the requests the server sees. Its sleeps come from
// math/rand's global source, which cannot be seeded, and pass on the wall clock: each gap
// between requests is held to at least clients.StripeSleepBounds' least (a sleep is never
// shorter than asked) and, loosely, to at most its most plus 2s of scheduling.
func TestStripeRetryRulesAreStripeGos(t *testing.T) {
	for _, tc := range []struct {
		name     string
		answer   stripeAnswer
		requests int
	}{
		{"429 rate_limit", stripeAnswer{429, "rate_limit", ""}, 1},
		{"429 rate_limit, Stripe-Should-Retry true", stripeAnswer{429, "rate_limit", "true"}, 1},
		{"409 with an error", stripeAnswer{409, "idempotency_key_in_use", ""}, 1},
		{"500 with an error", stripeAnswer{500, "api_error", ""}, 1},
		{"429 lock_timeout", stripeAnswer{429, "lock_timeout", ""}, clients.StripeMaxAttempts},
	} {
		seen := stripeCall(t, []stripeAnswer{tc.answer})
		require.Len(t, seen, tc.requests, tc.name)
		assert.Equal(t, tc.requests > 1, clients.StripeRetries(tc.answer.code), tc.name)
		for k := 1; k < len(seen); k++ {
			gap := seen[k].Sub(seen[k-1])
			lo, hi := clients.StripeSleepBounds(k - 1)
			assert.GreaterOrEqual(t, gap, lo, "%s: sleep before retry %d", tc.name, k)
			assert.LessOrEqual(t, gap, hi+2*time.Second, "%s: sleep before retry %d", tc.name, k)
			t.Logf("%s: retry %d after %v (model: [%v, %v])", tc.name, k, gap.Round(time.Millisecond), lo, hi)
		}
	}
	// A lock timeout that clears: the second request succeeds, and no third is made.
	seen := stripeCall(t, []stripeAnswer{{429, "lock_timeout", ""}, {200, "", ""}})
	assert.Len(t, seen, 2)
	// The model's bounds, written out: 500ms exactly, then (750ms, 1s], (1.875s, 2.5s], and
	// (3.75s, 5s] from the fourth retry on.
	for k, want := range [][2]time.Duration{{500 * time.Millisecond, 500 * time.Millisecond},
		{750*time.Millisecond + 1, time.Second}, {1875*time.Millisecond + 1, 2500 * time.Millisecond},
		{3750*time.Millisecond + 1, 5 * time.Second}, {3750*time.Millisecond + 1, 5 * time.Second}} {
		lo, hi := clients.StripeSleepBounds(k)
		assert.Equal(t, want, [2]time.Duration{lo, hi}, "retry %d", k+1)
	}
}

// The engine's stripe-lock-timeout lane over many seeds draws every wait inside the
// library's bounds, and its stripe lane never retries.
func TestStripeLaneWaitsWithinStripeGosBounds(t *testing.T) {
	sc := &engine.Scenario{Name: "stripe", Seed: 7, Horizon: 20 * time.Second, Trace: true,
		Lanes: []engine.LaneSpec{
			{Name: "lock", Stack: mustSpecs(t, "token-bucket:capacity=1,rate=1/1h"), Client: &engine.Client{Policy: engine.PolicyStripeLock}},
			{Name: "rate", Stack: mustSpecs(t, "token-bucket:capacity=1,rate=1/1h"), Client: &engine.Client{Policy: engine.PolicyStripe}},
		},
		Sources: []engine.Source{{Kind: engine.SourceConstant, Rate: 20}}}
	require.NoError(t, sc.Validate())
	res, err := engine.Run(t.Context(), sc, nil)
	require.NoError(t, err)
	last := map[uint64]engine.Record{}
	checked := 0
	for _, rec := range res.Lanes[0].Trace {
		if rec.Outcome != engine.OutcomeRejected && rec.Outcome != engine.OutcomeAdmitted {
			continue
		}
		if prev, ok := last[rec.Request]; ok {
			lo, hi := clients.StripeSleepBounds(prev.Attempt - 1)
			gap := rec.At - prev.At
			require.True(t, gap >= lo && gap <= hi, "request %d attempt %d after %v, not in [%v, %v]", rec.Request, rec.Attempt, gap, lo, hi)
			checked++
		}
		last[rec.Request] = rec
	}
	assert.Greater(t, checked, 500)
	assert.Equal(t, res.Lanes[1].Totals.Offered, res.Lanes[1].Totals.Attempts)
}

func mustSpecs(t *testing.T, text string) []limiters.Spec {
	t.Helper()
	specs, err := engine.ParseStack(text)
	require.NoError(t, err)
	return specs
}
