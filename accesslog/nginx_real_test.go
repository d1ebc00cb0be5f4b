//go:build unix

package accesslog

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const realNginxFormat = `$remote_addr [$time_local] "$request" $status $msec $request_time $limit_req_status $http_x_client`

const realNginxConf = `daemon off;
master_process off;
worker_processes 1;
pid {{dir}}/nginx.pid;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path {{dir}}/tmp; proxy_temp_path {{dir}}/tmp; fastcgi_temp_path {{dir}}/tmp;
    uwsgi_temp_path {{dir}}/tmp; scgi_temp_path {{dir}}/tmp;
    log_format lab '` + realNginxFormat + `';
    limit_req_zone $http_x_client zone=perclient:1m rate=10r/s;
    server {
        listen 127.0.0.1:{{port}};
        root {{dir}}/html;
        location /ok { }
        location /api {
            access_log {{dir}}/access.log lab;
            limit_req zone=perclient burst=2 nodelay;
            try_files /ok =404;
        }
    }
}
`

// A real nginx (Debian's nginx-light) with a per-client limit_req logs $msec, $request_time
// and $limit_req_status; its access log, read back by the nginx:FORMAT reader, holds every
// request sent, with its client key, at the instant it was sent (within the log's 1ms
// resolution and the scheduler's slack), in arrival order.
func TestRealNginxLogIsReadBack(t *testing.T) {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		if _, e := os.Stat("/usr/sbin/nginx"); e == nil {
			bin = "/usr/sbin/nginx"
		} else if os.Getenv("CI") == "true" {
			t.Fatal("nginx is not installed: .ci/run installs Debian's nginx-light")
		} else {
			t.Skip("nginx is not installed")
		}
	}
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "html"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "tmp"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "html", "ok"), []byte("ok\n"), 0o644))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	conf := strings.NewReplacer("{{dir}}", dir, "{{port}}", fmt.Sprint(port)).Replace(realNginxConf)
	confPath := filepath.Join(dir, "nginx.conf")
	require.NoError(t, os.WriteFile(confPath, []byte(conf), 0o644))
	cmd := exec.Command(bin, "-p", dir, "-c", confPath, "-e", filepath.Join(dir, "error.log"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			select {
			case <-exited:
			case <-time.After(5 * time.Second):
				t.Errorf("nginx did not exit")
			}
		})
	}
	defer stop()

	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for { // until nginx answers
		resp, err := client.Get(base + "/ok")
		if err == nil {
			resp.Body.Close()
			break
		}
		select {
		case e := <-exited:
			log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
			t.Fatalf("nginx exited: %v\n%s", e, log)
		case <-ctx.Done():
			t.Fatal("nginx did not answer within 5s")
		case <-time.After(20 * time.Millisecond):
		}
	}

	// Two groups: 6 requests of clients a, b, c at once, then 3 more 600ms later.
	type sent struct {
		at  time.Duration
		key string
	}
	var want []sent
	start := time.Now()
	send := func(key string) {
		req, _ := http.NewRequest("GET", base+"/api", nil)
		req.Header.Set("X-Client", key)
		at := time.Since(start)
		resp, err := client.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		want = append(want, sent{at, key})
	}
	for i := range 6 {
		send([]string{"a", "b", "c"}[i%3])
	}
	for time.Since(start) < 600*time.Millisecond {
		time.Sleep(5 * time.Millisecond)
	}
	for _, k := range []string{"a", "a", "c"} {
		send(k)
	}
	stop() // the log is written as each request ends; nothing is buffered

	f, err := os.Open(filepath.Join(dir, "access.log"))
	require.NoError(t, err)
	defer f.Close()
	in, err := Open(f, Options{Format: "nginx:" + realNginxFormat, Key: "http_x_client"})
	require.NoError(t, err)
	out, err := io.ReadAll(in)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Equal(t, "t_ns,permits,key", lines[0])
	require.Len(t, lines[1:], len(want), "every request is in the log:\n%s", out)
	var gotKeys, wantKeys []string
	var prev int64 = -1
	for i, line := range lines[1:] {
		var ns int64
		var permits int
		var key string
		_, err := fmt.Sscanf(strings.ReplaceAll(line, ",", " "), "%d %d %s", &ns, &permits, &key)
		require.NoError(t, err, line)
		require.GreaterOrEqual(t, ns, prev, "arrival order")
		prev = ns
		gotKeys = append(gotKeys, key)
		wantKeys = append(wantKeys, want[i].key)
		// The log's arrival (stamp − request_time, ms resolution) is the instant sent, rebased
		// to the first request: within 50ms (the ms stamps and the scheduler).
		require.InDelta(t, float64(want[i].at-want[0].at), float64(ns), float64(50*time.Millisecond), "row %d: %s", i+1, line)
	}
	slices.Sort(gotKeys)
	slices.Sort(wantKeys)
	require.Equal(t, wantKeys, gotKeys)
}
