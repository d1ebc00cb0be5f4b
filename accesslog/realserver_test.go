//go:build unix

package accesslog

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// realBinary is the path of a server the test starts: found on PATH or at debianPath; the test
// is skipped without it, and fails in CI (CI=true), where .ci/run installs debianPackage.
func realBinary(t *testing.T, name, debianPath, debianPackage string) string {
	t.Helper()
	if bin, err := exec.LookPath(name); err == nil {
		return bin
	}
	if _, err := os.Stat(debianPath); err == nil {
		return debianPath
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed: .ci/run installs Debian's %s", name, debianPackage)
	}
	t.Skipf("%s is not installed", name)
	return ""
}

// freePort is a loopback TCP port free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}

// realServer is a server process the test started in a process group of its own.
type realServer struct {
	name   string
	exited chan error
	stop   func(sig syscall.Signal)
	output *bytes.Buffer // what it wrote on standard error (and output when not redirected)
}

// startReal starts cmd (its Stdout left as set, Stderr captured) and stops it, its whole
// group, at the test's end at the latest: stop(SIGKILL) kills it, another signal asks it to
// exit; either waits at most 5s for it.
func startReal(t *testing.T, name string, cmd *exec.Cmd) *realServer {
	t.Helper()
	s := &realServer{name: name, exited: make(chan error, 1), output: &bytes.Buffer{}}
	var mu sync.Mutex
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return s.output.Write(p) })
	cmd.Stderr = w
	if cmd.Stdout == nil {
		cmd.Stdout = w
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	go func() { s.exited <- cmd.Wait() }()
	var once sync.Once
	s.stop = func(sig syscall.Signal) {
		once.Do(func() {
			_ = syscall.Kill(-cmd.Process.Pid, sig)
			select {
			case <-s.exited:
			case <-time.After(5 * time.Second):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-s.exited
				t.Errorf("%s did not exit within 5s of signal %v", name, sig)
			}
		})
	}
	t.Cleanup(func() { s.stop(syscall.SIGKILL) })
	return s
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// waitListening waits up to 5s for a TCP connection to addr to be accepted (a connection that
// sends nothing: the servers here do not log it), failing the test if the server exits.
func (s *realServer) waitListening(t *testing.T, addr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case e := <-s.exited:
			t.Fatalf("%s exited: %v\n%s", s.name, e, s.output)
		case <-ctx.Done():
			t.Fatalf("%s did not listen on %s within 5s\n%s", s.name, addr, s.output)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// waitLines waits up to 5s for the file at path to hold want lines that keep says are the
// log's (a server writes a line when the response has been sent, so a moment after the client
// has read it).
func waitLines(t *testing.T, path string, want int, keep func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		n := 0
		for _, l := range strings.Split(string(b), "\n") {
			if l != "" && keep(l) {
				n++
			}
		}
		if n >= want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %d log lines, not %d, 5s after the last response:\n%s", path, n, want, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sentRequest is a request as the client sent it: when it began sending it and when it had
// the answer (on the wall clock, which the servers' stamps read too), its key, and the
// status it got.
type sentRequest struct {
	wall, done time.Time
	key        string
	status     int
}

// sendGroups sends, one after the other, the requests of each group, with the group's keys
// as header X-Client, the i-th group starting at i·gap after the first (gap >= the time the
// groups take).
func sendGroups(t *testing.T, url string, gap time.Duration, groups ...[]string) []sentRequest {
	t.Helper()
	var sched []sendGroup
	for i, keys := range groups {
		sched = append(sched, sendGroup{time.Duration(i) * gap, keys})
	}
	return sendSchedule(t, url, sched)
}

// sendGroup is requests sent one after the other from offset at, one per key.
type sendGroup struct {
	at   time.Duration
	keys []string
}

// sendSchedule sends the groups, each from its offset after the start (or at once when the
// group before took longer), its requests one after the other, each with its key as header
// X-Client.
func sendSchedule(t *testing.T, url string, groups []sendGroup) []sentRequest {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	var sent []sentRequest
	start := time.Now()
	for _, g := range groups {
		if d := g.at - time.Since(start); d > 0 {
			time.Sleep(d)
		}
		for _, key := range g.keys {
			req, err := http.NewRequest("GET", url, nil)
			require.NoError(t, err)
			req.Header.Set("X-Client", key)
			wall := time.Now()
			resp, err := client.Do(req)
			require.NoError(t, err)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			sent = append(sent, sentRequest{wall: wall, done: time.Now(), key: key, status: resp.StatusCode})
		}
	}
	return sent
}

// realLogSlack is how far before the client began sending a request, or after it had the
// answer, the arrival read from a real server's log may be: the 1ms stamps of nginx and
// HAProxy truncate (by up to 1ms; nginx's arrival, $msec − $request_time, by up to 2ms).
// Within those bounds, an arrival is within the request's own round trip of when it was sent
// (observed: 0.3 to 3ms each, up to 60ms when the client was descheduled on 2 shared cores).
const realLogSlack = 5 * time.Millisecond

// readBack reads a log through Open with opt and checks it against the requests sent, one
// after the other: every request, in the order sent, with its key and (when status) its
// status, and each arrival (the log's first arrival on the wall clock, moved by shift, plus
// its At) between when the client began sending it and when it had the answer, give or take
// realLogSlack. It returns the notes.
func readBack(t *testing.T, log []byte, opt Options, sent []sentRequest, shift time.Duration, status bool) []string {
	t.Helper()
	in, err := Open(bytes.NewReader(log), opt)
	require.NoError(t, err)
	out, err := io.ReadAll(in)
	require.NoError(t, err)
	start, ok := in.Log().Start()
	require.True(t, ok)
	start = start.Add(shift)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Equal(t, "t_ns,permits,key", lines[0])
	require.Len(t, lines[1:], len(sent), "%+v: every request is in the log once:\n%s", opt, out)
	var worst, trip time.Duration
	stamps := make([]int64, len(lines)-1)
	keys := make([]string, len(lines)-1)
	for i, line := range lines[1:] {
		var ns int64
		var permits int
		var key string
		_, err := fmt.Sscanf(strings.ReplaceAll(line, ",", " "), "%d %d %s", &ns, &permits, &key)
		require.NoError(t, err, line)
		stamps[i], keys[i] = ns, key
		require.Equal(t, 1, permits)
		at := start.Add(time.Duration(ns))
		require.False(t, at.Before(sent[i].wall.Add(-realLogSlack)) || at.After(sent[i].done.Add(realLogSlack)),
			"row %d (%s): arrival %s, sent %s, answered %s", i+1, line, at.Format(time.StampMicro), sent[i].wall.Format(time.StampMicro), sent[i].done.Format(time.StampMicro))
		worst = max(worst, at.Sub(sent[i].wall), sent[i].wall.Sub(at))
		trip = max(trip, sent[i].done.Sub(sent[i].wall))
	}
	// The keys in the order sent. Requests stamped the same ms are in the order their lines
	// were written, which is not always the order they were sent in (HAProxy logs a request
	// when its stream closes): within such a tie the keys are compared as a set.
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && stamps[j] == stamps[i] {
			j++
		}
		var want []string
		for _, s := range sent[i:j] {
			want = append(want, s.key)
		}
		got := slices.Clone(keys[i:j])
		if j-i > 1 {
			slices.Sort(want)
			slices.Sort(got)
		}
		require.Equal(t, want, got, "rows %d to %d (stamped alike): the keys of the requests sent %d-th to %d-th", i+1, j, i+1, j)
		i = j
	}
	t.Logf("%+v: %d requests read back in order, arrivals within %v of when they were sent (longest round trip %v)", opt, len(sent), worst, trip)
	if status { // the status each request got, as the log says, through a second reading
		in, err := Open(bytes.NewReader(log), opt)
		require.NoError(t, err)
		type got struct {
			line, status int
			key          string
			at           time.Duration
		}
		var recs []got
		for range sent {
			rec, err := in.Log().Next()
			require.NoError(t, err)
			recs = append(recs, got{rec.Line, rec.Status, string(rec.Key), rec.At})
		}
		_, err = in.Log().Next()
		require.ErrorIs(t, err, io.EOF)
		// Requests of one key stamped the same ms are in the order their lines were written,
		// which is not always the order they were answered in (HAProxy logs a proxied request
		// when its stream closes, after the client has its answer and may have had the next
		// one refused): within such a tie the statuses are compared as a set.
		for i := 0; i < len(recs); {
			j := i + 1
			for j < len(recs) && recs[j].key == recs[i].key && recs[j].at == recs[i].at {
				j++
			}
			var want, have []int
			for k := i; k < j; k++ {
				want, have = append(want, sent[k].status), append(have, recs[k].status)
			}
			slices.Sort(want)
			slices.Sort(have)
			require.Equal(t, want, have, "line %d: the status request %d got (of %d sharing key %s and stamp %v)", recs[i].line, i+1, j-i, recs[i].key, recs[i].at)
			i = j
		}
	}
	return in.Notes()
}
