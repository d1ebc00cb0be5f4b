//go:build unix

package accesslog

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// realCaddyfile serves a static body on a free loopback port over plain HTTP, logging each
// request as JSON: no admin endpoint, no automatic HTTPS (so no certificate is sought), and
// its storage in the test's directory.
const realCaddyfile = `{
	admin off
	auto_https off
	storage file_system {{dir}}/storage
}
http://127.0.0.1:{{port}} {
	log {
		output file {{dir}}/access.log
		format json
	}
	respond "ok" 200
}
`

// A real Caddy (Debian's 2.6) writes its JSON access log; read back (detected, and named
// caddy) keyed by the logged X-Client header, it holds every request sent, in order, with its
// key and status, arriving (ts − duration) while the client was sending it (within
// realLogSlack; Caddy's ts has 100ns digits).
func TestRealCaddyLogIsReadBack(t *testing.T) {
	bin := realBinary(t, "caddy", "/usr/bin/caddy", "caddy")
	dir := t.TempDir()
	port := freePort(t)
	conf := strings.NewReplacer("{{dir}}", dir, "{{port}}", fmt.Sprint(port)).Replace(realCaddyfile)
	confPath := filepath.Join(dir, "Caddyfile")
	require.NoError(t, os.WriteFile(confPath, []byte(conf), 0o644))
	home := filepath.Join(dir, "home") // Caddy writes its autosave and certificate tools there
	cmd := exec.Command(bin, "run", "--config", confPath, "--adapter", "caddyfile")
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"),
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"), "XDG_CACHE_HOME="+filepath.Join(home, "cache"))
	srv := startReal(t, "caddy", cmd)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	srv.waitListening(t, addr)

	sent := sendGroups(t, "http://"+addr+"/api", 600*time.Millisecond,
		[]string{"a", "b", "c", "a", "b", "c", "a", "a"}, []string{"a", "a", "c"})
	logPath := filepath.Join(dir, "access.log")
	waitLines(t, logPath, len(sent), func(string) bool { return true })
	srv.stop(syscall.SIGTERM) // Caddy's graceful stop
	log, err := os.ReadFile(logPath)
	require.NoError(t, err)
	for _, format := range []string{"auto", "caddy"} {
		notes := readBack(t, log, Options{Format: format, Key: "request.headers.X-Client"}, sent, 0, true)
		all := strings.Join(notes, "\n")
		require.Contains(t, all, "read as caddy")
		require.Contains(t, all, "arrival = ts - duration")
	}
	for _, s := range sent {
		require.Equal(t, 200, s.status)
	}
}
