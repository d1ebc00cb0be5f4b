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

// startRealNginx starts Debian's nginx (nginx-light) with realNginxConf on a free loopback
// port: /api logs to the access log it returns, with realNginxFormat.
func startRealNginx(t *testing.T) (srv *realServer, base, logPath string) {
	t.Helper()
	bin := realBinary(t, "nginx", "/usr/sbin/nginx", "nginx-light")
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "html"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "tmp"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "html", "ok"), []byte("ok\n"), 0o644))
	port := freePort(t)
	conf := strings.NewReplacer("{{dir}}", dir, "{{port}}", fmt.Sprint(port)).Replace(realNginxConf)
	confPath := filepath.Join(dir, "nginx.conf")
	require.NoError(t, os.WriteFile(confPath, []byte(conf), 0o644))
	srv = startReal(t, "nginx", exec.Command(bin, "-p", dir, "-c", confPath, "-e", "stderr"))
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	srv.waitListening(t, addr)
	return srv, "http://" + addr, filepath.Join(dir, "access.log")
}

// A real nginx (Debian's nginx-light) with a per-client limit_req logs $msec, $request_time
// and $limit_req_status; its access log, read back by the nginx:FORMAT reader, holds every
// request sent, in order, with its client key and status, arriving while the client was
// sending it (within realLogSlack: the log's 1ms stamps).
func TestRealNginxLogIsReadBack(t *testing.T) {
	srv, base, logPath := startRealNginx(t)
	// Two groups 600ms apart: a, b, c, a, b, c, a, a (a's 4th is refused: burst=2 lets 3
	// pass at once), then a, a, c.
	sent := sendGroups(t, base+"/api", 600*time.Millisecond, []string{"a", "b", "c", "a", "b", "c", "a", "a"}, []string{"a", "a", "c"})
	// nginx writes a request's line once its response is sent, a moment after the client has
	// read it: stopped at once, it lost the last line about 1 run in 20 under load.
	waitLines(t, logPath, len(sent), func(string) bool { return true })
	srv.stop(syscall.SIGKILL)
	log, err := os.ReadFile(logPath)
	require.NoError(t, err)
	readBack(t, log, Options{Format: "nginx:" + realNginxFormat, Key: "http_x_client"}, sent, 0, true)
	var statuses []int
	for _, s := range sent {
		statuses = append(statuses, s.status)
	}
	require.Equal(t, []int{200, 200, 200, 200, 200, 200, 200, 503, 200, 200, 200}, statuses)
}
