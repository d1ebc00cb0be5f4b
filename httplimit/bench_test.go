package httplimit

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/didip/tollbooth/v7"
	"github.com/go-chi/httprate"
)

// BenchmarkMiddleware is the cost per request of the middleware in front of an empty handler,
// beside the handler alone (the floor) and go-chi/httprate's LimitBy and didip/tollbooth (v7) keyed by the remote address on the same handler, in
// one run: 64 clients in turn, every request admitted (limits far above the load), headers
// written. Compare with benchstat, or the ratios to floor within one run.
func BenchmarkMiddleware(b *testing.B) {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	reqs := make([]*http.Request, 64)
	for i := range reqs {
		reqs[i] = httptest.NewRequest(http.MethodGet, "/", nil)
		reqs[i].RemoteAddr = "10.0.0." + strconv.Itoa(i) + ":5000"
	}
	keyed, err := New("keys(max=1024):token-bucket:capacity=1000000000,rate=1000000000/1s", Options{})
	if err != nil {
		b.Fatal(err)
	}
	global, err := New("token-bucket:capacity=1000000000,rate=1000000000/1s", Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		h    http.Handler
	}{
		{"floor", handler},
		{"httplimit-keyed", keyed.Wrap(handler)},
		{"httplimit-global", global.Wrap(handler)},
		{"tollbooth-by-addr", tollbooth.LimitHandler(tollbooth.NewLimiter(1e9, nil).SetIPLookups([]string{"RemoteAddr"}), handler)},
		{"httprate-by-addr", httprate.LimitBy(1_000_000_000, time.Minute, func(r *http.Request) (string, error) {
			return RemoteAddrKey(r), nil // the same key as httplimit's default
		})(handler)},
	} {
		b.Run(c.name, func(b *testing.B) {
			w := httptest.NewRecorder()
			i := 0
			for b.Loop() {
				clear(w.Header())
				c.h.ServeHTTP(w, reqs[i&63])
				i++
			}
		})
	}
}
