package httplimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/ratelab/ratelab/httplimit"
)

// The limiter chosen in the workbench, in front of a handler: a token bucket of 2 per
// client that refills one a minute. The third call in a row is refused with 429 and told to
// come back in 60s; every response says what is left.
func Example() {
	mw, err := httplimit.New("keys(max=10000):token-bucket:capacity=2,rate=1/1m", httplimit.Options{})
	if err != nil {
		panic(err)
	}
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "hello") })
	srv := httptest.NewServer(mw.Wrap(hello))
	defer srv.Close()

	for range 3 {
		resp, err := http.Get(srv.URL)
		if err != nil {
			panic(err)
		}
		resp.Body.Close()
		fmt.Printf("%s | RateLimit: %s | Retry-After: %q\n", resp.Status, resp.Header.Get("RateLimit"), resp.Header.Get("Retry-After"))
	}
	fmt.Println(mw.Policies()[0].Name, mw.Policies()[0].Quota, "per", mw.Policies()[0].Window)
	// Output:
	// 200 OK | RateLimit: "token-bucket";r=1;t=60;pk=:MTI3LjAuMC4x: | Retry-After: ""
	// 200 OK | RateLimit: "token-bucket";r=0;t=120;pk=:MTI3LjAuMC4x: | Retry-After: ""
	// 429 Too Many Requests | RateLimit: "token-bucket";r=0;t=120;pk=:MTI3LjAuMC4x: | Retry-After: "60"
	// token-bucket 2 per 2m0s
}
