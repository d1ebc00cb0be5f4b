// Package site is the workbench's static page: its files (index.html; embed.html, one
// scenario's lanes sized to an <iframe>; app.js, style.css; embedded here), Go's
// wasm_exec.js, and the two WebAssembly builds of web/wasm, built by the local Go toolchain. `ratelab web` serves it (Handler) or writes it (Write).
//
// Why build at run time: a WebAssembly build of web/wasm is 7.8 MB (2.0 MB gzip'd) and the
// charts' 16 MB, too large to commit or embed in every ratelab binary; and a binary built
// earlier would drift from the engine it was built with. The Go toolchain that `go install`
// needs is there, and its build cache makes every build after the first (1-2 minutes, cold) a matter of seconds. Build finds
// ratelab's source where this file was compiled from (a checkout, or the module cache for
// `go install …@version`).
//
// The WebAssembly files are written as scripts (ratelab.wasm.js: the gzip'd module in base64
// in a global), not .wasm files, because a page opened from a file may not fetch() its
// neighbours, while it may load their scripts; gzip keeps them near the compressed size.
package site

import (
	"bytes"
	"compress/gzip"
	"context"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
)

//go:embed index.html embed.html app.js style.css
var static embed.FS

// Marker is in the page's index.html: Write overwrites a directory that has it (a site it
// wrote before) and refuses any other that is not empty.
const Marker = `<meta name="generator" content="ratelab web">`

// Budgets are the most the gzip'd WebAssembly may weigh, in bytes: the page's (engine,
// limiters, scenarios: 2.0 MB measured when the page was made, 2.40 MB once the access-log
// rows, the adaptive kinds and the TUI's light steps joined the engine) and the charts' (plots
// with gonum/plot and its 12 fonts: 5.5 MB, 5.85 MB), loaded only when a chart is asked for.
// TestWasmBudget builds both.
const (
	CoreBudget   = 2_500_000
	ChartsBudget = 6_200_000
)

// Site is the page's files, by name.
type Site struct {
	Files map[string][]byte
	// CoreGzip and ChartsGzip are the gzip'd sizes of the two WebAssembly modules.
	CoreGzip, ChartsGzip int
}

// Names lists the site's file names in order.
func (s *Site) Names() []string {
	var names []string
	for name := range s.Files {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Source is the root of ratelab's module source this package was compiled from, or an error
// saying why there is none (a binary built with -trimpath, or source since removed).
func Source() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return "", errors.New("this ratelab was built without its source paths (-trimpath): build it with go install or go build without -trimpath to use web, or write the site from a checkout")
	}
	root := filepath.Dir(filepath.Dir(filepath.Dir(file))) // web/site/site.go → the module
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil || !strings.HasPrefix(string(data), "module github.com/ratelab/ratelab\n") {
		return "", fmt.Errorf("ratelab's source is no longer at %s, where this ratelab was built from", root)
	}
	return root, nil
}

// Build makes the site: the embedded files, wasm_exec.js from the Go toolchain's GOROOT,
// and the two WebAssembly builds (go build with GOOS=js GOARCH=wasm, into tmp). goCmd is the
// go command ("" means "go" on PATH).
func Build(ctx context.Context, goCmd, tmp string) (*Site, error) {
	if goCmd == "" {
		goCmd = "go"
	}
	if _, err := exec.LookPath(goCmd); err != nil {
		return nil, fmt.Errorf("the page's WebAssembly is built by the Go toolchain, and there is none here (%v): install Go from https://go.dev/dl", err)
	}
	root, err := Source()
	if err != nil {
		return nil, err
	}
	s := &Site{Files: map[string][]byte{}}
	for _, name := range []string{"index.html", "embed.html", "app.js", "style.css"} {
		data, err := static.ReadFile(name)
		if err != nil {
			return nil, err
		}
		s.Files[name] = data
	}
	goroot, err := exec.CommandContext(ctx, goCmd, "env", "GOROOT").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOROOT: %w", err)
	}
	execJS, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm", "wasm_exec.js"))
	if err != nil {
		return nil, fmt.Errorf("the Go toolchain's wasm_exec.js: %w", err)
	}
	s.Files["wasm_exec.js"] = execJS
	type build struct {
		tags, out, global string
		size              *int
	}
	builds := []build{{"", "ratelab.wasm.js", "RATELAB_WASM", &s.CoreGzip}, {"charts", "ratelab-charts.wasm.js", "RATELAB_CHARTS_WASM", &s.ChartsGzip}}
	errs := make([]error, len(builds))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, b := range builds {
		wg.Go(func() {
			wasm := filepath.Join(tmp, strings.TrimSuffix(b.out, ".js"))
			cmd := exec.CommandContext(ctx, goCmd, "build", "-trimpath", "-ldflags=-s -w", "-tags="+b.tags, "-o", wasm, "./web/wasm")
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm")
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("go build of the page's WebAssembly (%s): %v: %s", b.out, err, bytes.TrimSpace(out))
				return
			}
			data, err := os.ReadFile(wasm)
			if err != nil {
				errs[i] = err
				return
			}
			var gz bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
			zw.Write(data)
			zw.Close()
			script := "window." + b.global + "=\"" + base64.StdEncoding.EncodeToString(gz.Bytes()) + "\";\n"
			mu.Lock()
			s.Files[b.out] = []byte(script)
			*b.size = gz.Len()
			mu.Unlock()
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

// Write writes the site into dir, made if missing. A dir that holds anything but a site
// Write wrote before (its index.html has Marker) is refused, naming what is there.
func (s *Site) Write(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	case err != nil:
		return err
	case len(entries) > 0:
		index, err := os.ReadFile(filepath.Join(dir, "index.html"))
		if err != nil || !bytes.Contains(index, []byte(Marker)) {
			return fmt.Errorf("%s: not empty and not a site ratelab web wrote (it holds %s): give an empty or new directory", dir, entries[0].Name())
		}
		for _, e := range entries {
			if _, ours := s.Files[e.Name()]; !ours {
				return fmt.Errorf("%s: a site ratelab web wrote, but it also holds %s: give an empty or new directory", dir, e.Name())
			}
		}
	}
	for _, name := range s.Names() {
		if err := os.WriteFile(filepath.Join(dir, name), s.Files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Handler serves the site: / is index.html; no other path is served.
func (s *Site) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
		if name == "" {
			name = "index.html"
		}
		data, ok := s.Files[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		types := map[string]string{".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
		w.Header().Set("Content-Type", types[path.Ext(name)])
		w.Header().Set("Cache-Control", "no-cache")
		w.Write(data)
	})
}
