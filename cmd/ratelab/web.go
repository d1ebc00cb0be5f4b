package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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
	openIt := fs.Bool("open", false, "open the page in the browser (xdg-open); without one, say so and serve on")
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
		fmt.Fprintf(e.stdout, "wrote the site to %s: open %s/index.html, or publish the directory on any static host (embed.html is the lanes alone, for an <iframe>)\n", *out, *out)
		if *openIt {
			index, err := filepath.Abs(filepath.Join(*out, "index.html"))
			if err == nil {
				openBrowser(e, "file://"+index)
			}
		}
		return nil
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %w", *addr, err)
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	url := fmt.Sprintf("http://%s/", ln.Addr())
	fmt.Fprintln(e.stdout, url)
	if *openIt {
		openBrowser(e, url)
	}
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

// browserOpener is the command --open runs with the page's address: xdg-open, the desktop's
// way to open a URL on Linux and the BSDs (a variable so that tests can name another).
var browserOpener = "xdg-open"

// openBrowser asks the desktop to open url. It never fails the command: without an opener, or
// when the opener fails, it says so and the page is served all the same.
func openBrowser(e *env, url string) {
	bin, err := exec.LookPath(browserOpener)
	if err != nil {
		fmt.Fprintf(e.stderr, "ratelab: --open: no %s here to open a browser with: open %s yourself\n", browserOpener, url)
		return
	}
	cmd := exec.Command(bin, url)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(e.stderr, "ratelab: --open: %s: %v: open %s yourself\n", browserOpener, err, url)
		return
	}
	go cmd.Wait() // xdg-open returns once the browser has the URL; reap it
}
