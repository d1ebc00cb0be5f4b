package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// --open asks the desktop's opener for the page; without one it says so and goes on.
func TestOpenBrowser(t *testing.T) {
	saved := browserOpener
	t.Cleanup(func() { browserOpener = saved })

	var stderr bytes.Buffer
	e := &env{stdout: &bytes.Buffer{}, stderr: &stderr}
	browserOpener = "ratelab-no-such-opener"
	openBrowser(e, "http://127.0.0.1:1234/")
	if msg := stderr.String(); !strings.Contains(msg, "no ratelab-no-such-opener here") || !strings.Contains(msg, "open http://127.0.0.1:1234/ yourself") {
		t.Fatalf("without an opener: %q", msg)
	}

	dir := t.TempDir()
	got := filepath.Join(dir, "opened")
	opener := filepath.Join(dir, "fake-open")
	if err := os.WriteFile(opener, []byte("#!/bin/sh\necho \"$1\" > "+got+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	browserOpener = opener
	openBrowser(e, "http://127.0.0.1:1234/")
	deadline := time.Now().Add(5 * time.Second)
	for {
		data, err := os.ReadFile(got)
		if err == nil && strings.TrimSpace(string(data)) == "http://127.0.0.1:1234/" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the opener was not run with the address (%v, %q; stderr %q)", err, data, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if stderr.Len() != 0 {
		t.Fatalf("stderr %q", stderr.String())
	}
}
