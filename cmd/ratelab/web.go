package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/ratelab/ratelab/web/site"
)

// webCommand is `ratelab web`: the workbench as a page, served on a loopback port (its address
// printed), or written as a static site with --out DIR. The page's WebAssembly is built here by
// the Go toolchain from ratelab's source (web/site.Build says why), the first time in a minute or two (a cold build cache), later in seconds.
func webCommand(ctx context.Context, e *env, args []string) error {
	fs := flag.NewFlagSet("web", flag.ContinueOnError)
	out := fs.String("out", "", "write the static site into `DIR` (new, empty, or a site written before) instead of serving it")
	addr := fs.String("addr", "127.0.0.1:0", "serve on `ADDRESS`, a HOST:PORT (port 0: a free one)")
	positional, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(positional) > 0 {
		return usageErrorf("web: no arguments (the page opens the default scenario; pick others there), got %q", positional[0])
	}
	tmp, err := os.MkdirTemp("", "ratelab-web-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintln(e.stderr, "ratelab: building the page's WebAssembly with the Go toolchain…")
	s, err := site.Build(ctx, "", tmp)
	if err != nil {
		return err
	}
	if *out != "" {
		if err := s.Write(*out); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "wrote the site to %s: open %s/index.html, or publish the directory on any static host\n", *out, *out)
		return nil
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %w", *addr, err)
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(e.stdout, "http://%s/\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := srv.Shutdown(shut); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return ctx.Err()
	}
}
