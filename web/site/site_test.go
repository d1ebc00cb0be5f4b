package site_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratelab/ratelab/web/site"
)

var (
	buildOnce sync.Once
	built     *site.Site
	buildErr  error
	buildDir  string
	// binary is the ratelab command, built beside the site: the browser test runs the page's
	// permalink with it.
	binary    string
	binaryErr error
)

// theSite builds the site once for the package's tests (two go builds of web/wasm).
func theSite(t *testing.T) *site.Site {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build the WebAssembly")
	}
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "ratelab-site-test-")
		if buildErr != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		began := time.Now()
		cmdDone := make(chan struct{})
		go func() {
			defer close(cmdDone)
			root, err := site.Source()
			if err != nil {
				binaryErr = err
				return
			}
			binary = filepath.Join(buildDir, "ratelab")
			cmd := exec.CommandContext(ctx, "go", "build", "-o", binary, "./cmd/ratelab")
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				binaryErr = fmt.Errorf("go build ./cmd/ratelab: %v: %s", err, out)
			}
		}()
		defer func() { <-cmdDone }()
		built, buildErr = site.Build(ctx, "", buildDir)
		if buildErr == nil {
			buildErr = built.Write(filepath.Join(buildDir, "site"))
		}
		t.Logf("built the site in %v", time.Since(began).Round(time.Millisecond))
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// The WebAssembly stays within its budgets, gzip'd (the page's core is what the first lane
// waits for; the charts' is loaded only for a chart).
func TestWasmBudget(t *testing.T) {
	s := theSite(t)
	t.Logf("gzip'd WebAssembly: page %d bytes (budget %d), charts %d bytes (budget %d)", s.CoreGzip, site.CoreBudget, s.ChartsGzip, site.ChartsBudget)
	if s.CoreGzip > site.CoreBudget {
		t.Errorf("the page's WebAssembly is %d bytes gzip'd, over its budget of %d", s.CoreGzip, site.CoreBudget)
	}
	if s.ChartsGzip > site.ChartsBudget {
		t.Errorf("the charts' WebAssembly is %d bytes gzip'd, over its budget of %d", s.ChartsGzip, site.ChartsBudget)
	}
	if s.CoreGzip < 500_000 {
		t.Errorf("the page's WebAssembly is only %d bytes gzip'd: not the engine", s.CoreGzip)
	}
}

func TestWriteRefusesAnUnrelatedDirectory(t *testing.T) {
	s := &site.Site{Files: map[string][]byte{"index.html": []byte("<html>" + site.Marker), "app.js": []byte("x")}}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(dir); err == nil || !strings.Contains(err.Error(), "notes.txt") {
		t.Fatalf("wrote over an unrelated directory: %v", err)
	}
	fresh := filepath.Join(t.TempDir(), "new")
	if err := s.Write(fresh); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(fresh); err != nil { // a site it wrote before: rewritten
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fresh, "extra.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(fresh); err == nil || !strings.Contains(err.Error(), "extra.txt") {
		t.Fatalf("wrote over a site with a stranger in it: %v", err)
	}
}
