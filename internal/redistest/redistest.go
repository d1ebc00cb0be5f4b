//go:build unix

// Package redistest starts a real redis-server for a test: its own process on a free loopback
// port, with no persistence, stopped when the test ends. Tests that need one call Start; it
// skips the test when redis-server is not installed, except in CI (CI=true), where .ci/run
// installs Debian's redis-server and a missing one fails the test.
package redistest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Server is a running redis-server.
type Server struct {
	Addr string // 127.0.0.1:PORT

	t      testing.TB
	cmd    *exec.Cmd
	exited chan struct{}
	out    *lockedWriter // what the server prints
	stop   sync.Once
}

// startWait bounds how long Start waits for the server to answer PING.
const startWait = 5 * time.Second

// Binary is the redis-server to run: skipped locally when it is missing, a failure in CI.
func Binary(t testing.TB) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/redis-server"); err == nil {
		return "/usr/bin/redis-server"
	}
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("redis-server is not installed: .ci/run installs Debian's redis-server, and CI needs it for this test")
	}
	t.Skip("redis-server is not installed (apt-get install redis-server); skipping the tests against a real Redis")
	return ""
}

// Start runs redis-server on a free loopback port (no RDB snapshots, no append-only file,
// its working directory a temporary one) and returns once it answers PING, for at most 5s.
// The test's cleanup kills it.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	var lastErr error
	for range 3 { // a port picked free can be taken before redis binds it: try another
		port, err := freePort()
		if err != nil {
			t.Fatalf("redistest: no free loopback port: %v", err)
		}
		s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), t: t, exited: make(chan struct{}), out: &lockedWriter{}}
		s.cmd = exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no", "--loglevel", "warning")
		s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
		s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := s.cmd.Start(); err != nil {
			t.Fatalf("redistest: starting %s: %v", bin, err)
		}
		go func() { _ = s.cmd.Wait(); close(s.exited) }()
		t.Cleanup(s.Kill)
		if lastErr = s.waitReady(); lastErr == nil {
			return s
		}
		s.Kill()
	}
	t.Fatalf("redistest: redis-server did not start: %v", lastErr)
	return nil
}

// Kill stops the server at once (SIGKILL, as a crash or an OOM kill would) and waits for it
// to exit. Killing a killed server does nothing.
func (s *Server) Kill() {
	s.stop.Do(func() {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-s.exited:
		case <-time.After(5 * time.Second):
			s.t.Errorf("redistest: redis-server (pid %d) did not exit after SIGKILL", s.cmd.Process.Pid)
		}
	})
}

// Pause stops the server's process (SIGSTOP) without closing its sockets: a store that
// accepts connections and never answers, as a hung or partitioned one does. The test's
// cleanup resumes it before killing it.
func (s *Server) Pause() {
	_ = syscall.Kill(s.cmd.Process.Pid, syscall.SIGSTOP)
	s.t.Cleanup(s.Resume)
}

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() { _ = syscall.Kill(s.cmd.Process.Pid, syscall.SIGCONT) }

// Log is what the server printed.
func (s *Server) Log() string {
	s.out.mu.Lock()
	defer s.out.mu.Unlock()
	return s.out.buf.String()
}

func (s *Server) waitReady() error {
	deadline := time.Now().Add(startWait)
	for {
		select {
		case <-s.exited:
			return fmt.Errorf("redis-server exited: %s", s.Log())
		default:
		}
		if err := ping(s.Addr); err == nil {
			return nil
		} else if time.Now().After(deadline) {
			return fmt.Errorf("no PONG from %s within %s: %v", s.Addr, startWait, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

// Do sends one command on a connection of its own and returns the reply: a simple or bulk
// string as string, an integer as int64, a nil bulk as nil, an array as []any, an error reply
// as an error. The tests read the server's state with it (GET, PTTL, SCRIPT EXISTS, INFO)
// without depending on the client under test.
func (s *Server) Do(args ...string) (any, error) {
	c, err := net.DialTimeout("tcp", s.Addr, time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	var cmd bytes.Buffer
	fmt.Fprintf(&cmd, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&cmd, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write(cmd.Bytes()); err != nil {
		return nil, err
	}
	return readReply(bufio.NewReader(c))
}

// MustDo is Do, failing the test on an error of any kind.
func (s *Server) MustDo(args ...string) any {
	s.t.Helper()
	v, err := s.Do(args...)
	if err != nil {
		s.t.Fatalf("redistest: %q: %v", args, err)
	}
	return v
}

func readReply(r *bufio.Reader) (any, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("redistest: a reply line %q does not end in CRLF", line)
	}
	body := line[1 : len(line)-2]
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return nil, fmt.Errorf("redis: %s", body)
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		return string(b[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		v := make([]any, n)
		for i := range v {
			if v[i], err = readReply(r); err != nil {
				return nil, err
			}
		}
		return v, nil
	}
	return nil, fmt.Errorf("redistest: unknown reply %q", line)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

type lockedWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}
