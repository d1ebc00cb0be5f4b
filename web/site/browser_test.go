package site_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/ratelab/ratelab/jsonout"
	"github.com/ratelab/ratelab/scenarios"
)

// chromium starts a headless Debian chromium for the test (skipped when there is none, unless
// CI=true) and returns a browser context, stopped when the test ends.
func chromium(t *testing.T) context.Context {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed (.ci/run installs it)")
		}
		t.Skip("no chromium")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin), chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun, chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 720),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	// Every built-in's JSON in WebAssembly takes ~26s on an idle machine and ran past 90s at a
	// load of 20 on 2 cores: the bound is for a browser that hangs, not a slow one.
	ctx, cancelTime := context.WithTimeout(ctx, 300*time.Second)
	t.Cleanup(func() { cancelTime(); cancel(); cancelAlloc() })
	return ctx
}

// openPage loads url and waits until the page has drawn its lanes.
func openPage(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`))); err != nil {
		status, _ := chromedp.Run(ctx, chromedp.TextContent(chromedp.ID("status")))
		t.Fatalf("page %s: %v (status: %s)", url, err, status)
	}
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// laneView is what the tests compare of the page's view.
type laneView struct {
	Now   int64 `json:"now_ns"`
	Steps int64 `json:"steps"`
	Lanes []struct {
		Label    string            `json:"label"`
		Admitted int               `json:"admitted"`
		Rejected int               `json:"rejected"`
		Log      []string          `json:"log"`
		Stages   []json.RawMessage `json:"stages"`
	} `json:"lanes"`
}

func view(t *testing.T, ctx context.Context) (laneView, string) {
	t.Helper()
	text := eval[string](t, ctx, `JSON.stringify(app.view)`)
	var v laneView
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatal(err)
	}
	// The speed meter (events) counts re-runs too: compare the rest.
	b, _ := json.Marshal(v)
	return v, string(b)
}

// The page opened from a file: first lane within 2s (the best of up to 3 loads); every
// built-in's JSON is run --format json's; step back; a burst; a typo; a permalink; a
// screenshot.
func TestPageInChromium(t *testing.T) {
	theSite(t)
	ctx := chromium(t)
	dir := filepath.Join(buildDir, "site")
	began := time.Now()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 720)); err != nil {
		t.Fatal(err)
	}
	openPage(t, ctx, "file://"+filepath.Join(dir, "index.html"))
	loaded := time.Since(began)
	first := eval[float64](t, ctx, `Number(document.body.dataset.firstLaneMs)`)
	t.Logf("first lane drawn %.0f ms after navigation start (page ready in %v, browser start included)", first, loaded.Round(time.Millisecond))
	// The budget is the page's, not the machine's: when other work shares the 2 cores (the
	// other packages' tests), a load can take 2.75s whose phases are all slower alike. So a
	// load over budget is measured again, twice at most, each in a fresh tab (its own
	// WebAssembly compiled again, as a first visit does), and the best is held to 2s.
	for again := 0; first > 2000 && again < 2; again++ {
		tab, cancel := chromedp.NewContext(ctx)
		openPage(t, tab, "file://"+filepath.Join(dir, "index.html"))
		ms := eval[float64](t, tab, `Number(document.body.dataset.firstLaneMs)`)
		cancel()
		t.Logf("over budget: measured again in a fresh tab, first lane drawn %.0f ms after navigation start", ms)
		if ms > 0 {
			first = min(first, ms)
		}
	}
	if first <= 0 || first > 2000 {
		t.Errorf("first lane drawn at %.0f ms at best, budget 2000 ms", first)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#lanes .lane').length`); n != 6 {
		t.Errorf("%d lanes drawn for the default scenario, want 6", n)
	}

	t.Logf("loading phases (ms since navigation start): %s", eval[string](t, ctx, `JSON.stringify(app.phases)`))

	// Every built-in's JSON, in a tab of its own (its own WebAssembly) beside the other checks:
	// the longest of them (26s), it would otherwise come first and last.
	type jsonResult struct {
		problems []string
		speed    string
	}
	jsonDone := make(chan jsonResult, 1)
	go func() {
		problems, speed := everyBuiltinsJSON(ctx, "file://"+filepath.Join(dir, "index.html"))
		jsonDone <- jsonResult{problems, speed}
	}()
	defer t.Run("json", func(t *testing.T) {
		r := <-jsonDone
		for _, problem := range r.problems {
			t.Error(problem)
		}
		// Reported, not asserted (wall clocks on a shared machine, other checks running in the
		// first tab meanwhile): the page's simulation speed against native, for docs/PERFORMANCE.md.
		if r.speed != "" {
			t.Logf("speed: %s", r.speed)
		}
	})

	t.Run("step back", func(t *testing.T) {
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("home"))); err != nil {
			t.Fatal(err)
		}
		for range 4 {
			if err := chromedp.Do(ctx, chromedp.KeyEvent(".")); err != nil {
				t.Fatal(err)
			}
		}
		at4, want := view(t, ctx)
		if at4.Steps != 4 {
			t.Fatalf("after four steps: position %d", at4.Steps)
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("step")), chromedp.Click(chromedp.ID("back"))); err != nil {
			t.Fatal(err)
		}
		if _, got := view(t, ctx); got != want {
			t.Fatalf("a step and a step back:\n%s\nwant\n%s", got, want)
		}
	})

	t.Run("burst", func(t *testing.T) {
		before, _ := view(t, ctx)
		eval[any](t, ctx, `document.getElementById('burst-size').value = '25', 0`)
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("burst"))); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(eval[string](t, ctx, `document.getElementById('editor').value`), "script") {
			t.Fatal("the burst is not in the scenario's text")
		}
		eval[any](t, ctx, `app.view && window.ratelab.seek(app.view.now_ns + 1e6), 0`)
		eval[any](t, ctx, `(function(){ const r = JSON.parse(window.ratelab.view()); app.view = r.ok; return 0 })()`)
		after, _ := view(t, ctx)
		offered := func(v laneView) int { return v.Lanes[0].Admitted + v.Lanes[0].Rejected }
		if offered(after)-offered(before) < 25 {
			t.Fatalf("lane 1 decided %d more after a burst of 25", offered(after)-offered(before))
		}
	})

	t.Run("typo", func(t *testing.T) {
		eval[any](t, ctx, `(function(){ const e = document.getElementById('editor'); e.value = e.value.replace('token-bucket:', 'token-buckt:'); e.dispatchEvent(new Event('input')); return 0 })()`)
		msg, err := chromedp.Run(ctx, chromedp.Poll[string](`document.getElementById('editor-error').textContent || false`, chromedp.WithPollingTimeout(3*time.Second)))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(msg, "scenario.yaml:") || !strings.Contains(msg, "did you mean token-bucket") {
			t.Fatalf("the editor says %q", msg)
		}
		t.Logf("editor: %s", msg)
		eval[any](t, ctx, `document.getElementById('spec').value = 'concurency:max=2', 0`)
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("add"))); err != nil {
			t.Fatal(err)
		}
		spec := eval[string](t, ctx, `document.getElementById('spec-error').textContent`)
		if !strings.Contains(spec, "did you mean concurrency") {
			t.Fatalf("the lane editor says %q", spec)
		}
		eval[any](t, ctx, `app.selectScenario("burst-after-idle"), 0`)
	})

	t.Run("charts", func(t *testing.T) { charts(t, ctx) })

	t.Run("permalink", func(t *testing.T) {
		// Over HTTP this time: the same page served, the link opened in a fresh tab.
		srv := httptest.NewServer(built.Handler())
		defer srv.Close()
		openPage(t, ctx, srv.URL+"/")
		eval[any](t, ctx, `app.selectScenario("burst-after-idle"), 0`)
		for range 6 {
			if err := chromedp.Do(ctx, chromedp.KeyEvent(".")); err != nil {
				t.Fatal(err)
			}
		}
		if err := chromedp.Do(ctx, chromedp.KeyEvent("b"), chromedp.KeyEvent("."), chromedp.KeyEvent(".")); err != nil {
			t.Fatal(err)
		}
		_, want := view(t, ctx)
		link := eval[string](t, ctx, `'#' + JSON.parse(window.ratelab.link()).ok`)
		t.Logf("permalink: %d characters", len(link))
		tab, cancel := chromedp.NewContext(ctx)
		defer cancel()
		openPage(t, tab, srv.URL+"/"+link)
		if _, got := view(t, tab); got != want {
			t.Fatalf("the permalink's page:\n%s\nwant\n%s", got, want)
		}
	})

	t.Run("permalink runs the same", func(t *testing.T) { sameRun(t, ctx) })
	t.Run("back late", func(t *testing.T) { backLate(t, ctx) })
	t.Run("predict", func(t *testing.T) { predict(t, ctx) })
	t.Run("rate", func(t *testing.T) { rateUp(t, ctx) })

	// The screenshot at 1280×720 is compared with testdata/page-1280x720.png: at most 1% of
	// the pixels may differ (fonts' antialiasing), and a page without its lanes must differ
	// more. After a deliberate change of the page, look at the new screenshot (the test logs
	// where it is) and refresh the reference:
	//
	//	RATELAB_UPDATE_SCREENSHOT=1 go test -run 'TestPageInChromium/screenshot' ./web/site
	t.Run("screenshot", func(t *testing.T) {
		eval[any](t, ctx, `document.querySelectorAll('dialog[open]').forEach((d) => d.close()), app.selectScenario("poisson"), window.ratelab.seek(2.5e9), 0`)
		if err := chromedp.Do(ctx, chromedp.KeyEvent("."), chromedp.KeyEvent("b"), chromedp.KeyEvent(".")); err != nil {
			t.Fatal(err)
		}
		// The speed meter reads the wall clock: hidden for the comparison.
		eval[any](t, ctx, `document.getElementById('rate').style.visibility = 'hidden', document.activeElement.blur(), 0`)
		shot := func() []byte {
			png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			return png
		}
		png := shot()
		out := filepath.Join(os.TempDir(), "ratelab-web-screenshot.png")
		if err := os.WriteFile(out, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot at 1280x720: %s (%d bytes)", out, len(png))
		ref := filepath.Join("testdata", "page-1280x720.png")
		if os.Getenv("RATELAB_UPDATE_SCREENSHOT") == "1" {
			if err := os.WriteFile(ref, png, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("wrote %s", ref)
		}
		want, err := os.ReadFile(ref)
		if err != nil {
			t.Fatal(err)
		}
		d := differing(t, png, want)
		t.Logf("%.3f%% of the pixels differ from %s", 100*d, ref)
		if d > 0.01 {
			t.Errorf("the page differs from %s in %.2f%% of its pixels (at most 1%%): look at %s", ref, 100*d, out)
		}
		eval[any](t, ctx, `document.getElementById('lanes').style.visibility = 'hidden', 0`)
		broken := shot()
		eval[any](t, ctx, `document.getElementById('lanes').style.visibility = '', 0`)
		if d := differing(t, broken, want); d <= 0.01 {
			t.Errorf("a page without its lanes differs in only %.2f%% of its pixels: the comparison would not see it", 100*d)
		}
	})
	t.Run("embed", func(t *testing.T) { embedded(t, ctx) })
}

// everyBuiltinsJSON opens the page in a new tab and compares every built-in's JSON there with
// run --format json's (jsonout.RunJSON, which `run` prints: cmd/ratelab's tests), returning
// what differs, and the page's simulation speed against native Go's on the same runs.
func everyBuiltinsJSON(ctx context.Context, url string) (problems []string, speed string) {
	tab, cancel := chromedp.NewContext(ctx)
	defer cancel()
	if err := chromedp.Do(tab, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="1"]`))); err != nil {
		return []string{"the JSON tab: " + err.Error()}, ""
	}
	var pageTime, nativeTime time.Duration
	var ratios []float64
	for _, name := range scenarios.Names() {
		sc, err := scenarios.Get(name)
		if err != nil {
			return append(problems, err.Error()), ""
		}
		began := time.Now()
		want, err := jsonout.RunJSON(context.Background(), sc)
		native := time.Since(began)
		if err != nil {
			return append(problems, err.Error()), ""
		}
		// The page's run is timed inside the page (performance.now around runJSON alone),
		// so that the DevTools round trip is not counted.
		got, err := chromedp.Run(tab, chromedp.Evaluate[pageRun](`(() => {
			const yaml = JSON.parse(window.ratelab.builtinYAML(`+quote(name)+`)).ok;
			const t0 = performance.now();
			const reply = window.ratelab.runJSON(yaml);
			const ms = performance.now() - t0;
			return {ms, out: JSON.parse(reply).ok};
		})()`))
		if err != nil {
			return append(problems, name+": "+err.Error()), ""
		}
		if got.Out != string(want) {
			problems = append(problems, fmt.Sprintf("%s: the page's JSON (%d bytes) differs from run --format json (%d bytes)", name, len(got.Out), len(want)))
		}
		page := time.Duration(got.MS * float64(time.Millisecond))
		pageTime += page
		nativeTime += native
		if native >= 20*time.Millisecond { // shorter runs measure the timer more than the run
			ratios = append(ratios, float64(page)/float64(native))
		}
	}
	slices.Sort(ratios)
	speed = fmt.Sprintf("every built-in run in WebAssembly took %v against %v natively (%.1f×)", pageTime.Round(time.Millisecond), nativeTime.Round(time.Millisecond), float64(pageTime)/float64(nativeTime))
	if len(ratios) > 0 {
		speed += fmt.Sprintf("; per run of ≥ 20 ms natively, %d runs: median %.1f× (%.1f–%.1f×)", len(ratios), ratios[len(ratios)/2], ratios[0], ratios[len(ratios)-1])
	}
	return problems, speed
}

// pageRun is one run in the page: how long runJSON took there, and its JSON.
type pageRun struct {
	MS  float64 `json:"ms"`
	Out string  `json:"out"`
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }
