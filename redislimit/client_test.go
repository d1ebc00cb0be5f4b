//go:build unix

package redislimit

import (
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ratelab/ratelab/internal/redistest"
	"github.com/ratelab/ratelab/limiters"
)

// TestDecisionAllocatesNothing: a decision, one at a time or in a batch of 64, allocates
// nothing once the connection is open (go-redis allocated 20 times per decision).
func TestDecisionAllocatesNothing(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	for _, clock := range []Clock{ServerClock, CallerClock} {
		for _, spec := range []limiters.Spec{benchSpec, limiters.FixedWindowSpec{Limit: 1 << 20, Window: time.Second}} {
			l, err := New(client(t, srv, 1), "allocs:"+spec.String()+":"+clock.String(), spec, Options{Clock: clock})
			require.NoError(t, err)
			reqs, out := make([]Request, 64), make([]Result, 64)
			for i := range reqs {
				reqs[i] = Request{At: time.Duration(i), Permits: 1}
			}
			now := time.Duration(0)
			decide := func() {
				var r Result
				if clock == ServerClock {
					r, err = l.Acquire(ctx, 1)
				} else {
					now += time.Microsecond
					r, err = l.AcquireAt(ctx, now, 1)
				}
				require.NoError(t, err)
				require.Equal(t, limiters.Admitted, r.Decision)
			}
			decide()
			require.Zero(t, testing.AllocsPerRun(200, decide), "%s %s one at a time", spec, clock)
			batch := func() { require.NoError(t, l.AcquireBatch(ctx, reqs, out)) }
			require.Zero(t, testing.AllocsPerRun(20, batch), "%s %s batch of 64", spec, clock)
		}
	}
}

// TestErrorReplyKeepsTheConnection: an error reply (the key holds a list: WRONGTYPE inside the
// script) is a StoreError naming the key and the server's message; the connection stays in
// step, and the next decision on it succeeds.
func TestErrorReplyKeepsTheConnection(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	c := client(t, srv, 1)
	srv.MustDo("RPUSH", "listkey", "x")
	bad, err := New(c, "listkey", benchSpec, Options{})
	require.NoError(t, err)
	good, err := New(c, "goodkey", benchSpec, Options{})
	require.NoError(t, err)
	for range 3 {
		_, err = bad.Acquire(ctx, 1)
		var store *StoreError
		require.ErrorAs(t, err, &store)
		var reply *ReplyError
		require.ErrorAs(t, err, &reply)
		require.Contains(t, err.Error(), `redislimit: token-bucket at key "listkey": the store gave no decision: redis: `)
		require.Contains(t, reply.Msg, "WRONGTYPE")
		r, err := good.Acquire(ctx, 1)
		require.NoError(t, err)
		require.Equal(t, limiters.Admitted, r.Decision)
	}
	// In a batch, the failing request's error is returned and the others are decided.

	var batch Batch
	gBad, err := NewGuarded(bad, limiters.FailurePolicy{Mode: limiters.FailOpen, Timeout: time.Second})
	require.NoError(t, err)
	gGood, err := NewGuarded(good, limiters.FailurePolicy{Mode: limiters.FailClosed, Timeout: time.Second})
	require.NoError(t, err)
	require.NoError(t, batch.Add(gGood, 0, 1))
	require.NoError(t, batch.Add(gBad, 0, 1))
	require.NoError(t, batch.Add(gGood, 0, 1))
	err = batch.Decide(ctx)
	require.ErrorContains(t, err, "WRONGTYPE")
	require.ErrorContains(t, err, "(fail-open: admitted)")
	require.Equal(t, []limiters.Decision{limiters.Admitted, limiters.Admitted, limiters.Admitted},
		[]limiters.Decision{batch.Decision(0), batch.Decision(1), batch.Decision(2)})
	n, _ := gBad.Failures()
	require.EqualValues(t, 1, n)
	require.Len(t, c.idle, 1, "one connection, never replaced")
}

// TestServerClosedMidPipeline: a server that closes the connection after answering part of a
// pipeline gives an error naming the cause for the requests it did not answer, promptly, not
// a hang; the answered ones keep their results; the next call dials afresh.
func TestServerClosedMidPipeline(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	l, err := New(client(t, srv, 1), "mid", benchSpec, Options{Clock: CallerClock})
	require.NoError(t, err)
	_, err = l.AcquireAt(ctx, 0, 1) // the script is loaded
	require.NoError(t, err)

	// A proxy that forwards the commands and only the first 3 replies' bytes, then closes.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		down, err := ln.Accept()
		if err != nil {
			return
		}
		defer down.Close()
		up, err := net.Dial("tcp", srv.Addr)
		if err != nil {
			return
		}
		defer up.Close()
		go func() { _, _ = io.Copy(up, down) }()
		// A GCRA reply is "*5\r\n" and five integers: 6 lines; pass 3 replies and a half.
		lines := 0
		buf := make([]byte, 1)
		for lines < 3*6+3 {
			if _, err := up.Read(buf); err != nil {
				return
			}
			if _, err := down.Write(buf); err != nil {
				return
			}
			if buf[0] == '\n' {
				lines++
			}
		}
	}()
	proxied, err := New(client(t, &redistest.Server{Addr: ln.Addr().String()}, 1), "mid", benchSpec, Options{Clock: CallerClock})
	require.NoError(t, err)
	reqs, out := make([]Request, 64), make([]Result, 64)
	for i := range reqs {
		reqs[i] = Request{At: time.Second + time.Duration(i)*time.Microsecond, Permits: 1}
	}
	start := time.Now()
	err = proxied.AcquireBatch(ctx, reqs, out)
	require.Less(t, time.Since(start), time.Second, "an error, not a wait for the timeout")
	require.Error(t, err)
	require.Contains(t, err.Error(), `redislimit: token-bucket at key "mid": the store gave no decision: the server closed the connection`)
	for i := range 3 {
		require.Equal(t, limiters.Admitted, out[i].Decision, "request %d was answered", i)
		require.Equal(t, reqs[i].At, out[i].At)
	}
	require.Zero(t, out[3].At, "not answered")
	wg.Wait()
	require.NoError(t, ln.Close())
	// The broken connection was dropped: the next call dials again (and the proxy is gone).
	require.Empty(t, proxied.client.idle)
	_, err = proxied.AcquireAt(ctx, 2*time.Second, 1)
	require.ErrorContains(t, err, "connection refused")
}

// TestClientRefuses: bad options and a closed client give errors, not panics.
func TestClientRefuses(t *testing.T) {
	_, err := NewClient(ClientOptions{})
	require.ErrorContains(t, err, "Addr (host:port) is required")
	_, err = NewClient(ClientOptions{Addr: "localhost"})
	require.ErrorContains(t, err, `Addr "localhost"`)
	_, err = NewClient(ClientOptions{Addr: "127.0.0.1:1", PoolSize: -1})
	require.ErrorContains(t, err, "must not be negative")
	srv := redistest.Start(t)
	c := client(t, srv, 1)
	require.NoError(t, c.Ping(context.Background()))
	require.NoError(t, c.Close())
	require.ErrorIs(t, c.Ping(context.Background()), ErrClosed)
}

// TestPoolSizeBoundsConnections: 32 goroutines deciding through a Client of PoolSize 3 (under
// -race) open 3 connections at most, all of them idle again at the end, and every decision is
// made: the pool makes the Client safe for concurrent use.
func TestPoolSizeBoundsConnections(t *testing.T) {
	srv := redistest.Start(t)
	c := client(t, srv, 3)
	l, err := New(c, "pool", benchSpec, Options{})
	require.NoError(t, err)
	connected := func() int64 {
		info := srv.MustDo("INFO", "clients").(string)
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "connected_clients:"); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				require.NoError(t, err)
				return n - 1 // the INFO's own connection
			}
		}
		t.Fatalf("no connected_clients in %q", info)
		return 0
	}
	var wg sync.WaitGroup
	var most atomic.Int64
	errs := make(chan error, 32)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if _, err := l.Acquire(context.Background(), 1); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
			if n := connected(); n > most.Load() {
				most.Store(n)
			}
		}
	}
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.LessOrEqual(t, most.Load(), int64(3), "connections seen at once")
	require.NotEmpty(t, c.idle)
	require.EqualValues(t, len(c.idle), connected(), "every connection open is back in the pool")
}

// TestServerKilledMidPipeline: the real server stopped (SIGSTOP) with a batch of 64 on the wire
// and then killed (SIGKILL) answers the batch with an error about the closed connection, as
// soon as the kernel closes it, well within the 5s timeout.
func TestServerKilledMidPipeline(t *testing.T) {
	srv := redistest.Start(t)
	c, err := NewClient(ClientOptions{Addr: srv.Addr, Timeout: 5 * time.Second})
	require.NoError(t, err)
	defer c.Close()
	l, err := New(c, "killed", benchSpec, Options{Clock: CallerClock})
	require.NoError(t, err)
	_, err = l.AcquireAt(context.Background(), 0, 1)
	require.NoError(t, err)
	srv.Pause()
	reqs, out := make([]Request, 64), make([]Result, 64)
	for i := range reqs {
		reqs[i] = Request{At: time.Duration(i + 1), Permits: 1}
	}
	done := make(chan error, 1)
	go func() { done <- l.AcquireBatch(context.Background(), reqs, out) }()
	time.Sleep(100 * time.Millisecond) // the batch is written and waits for its replies
	killed := time.Now()
	srv.Kill()
	select {
	case err = <-done:
	case <-time.After(4 * time.Second):
		t.Fatal("no answer 4s after the server was killed: the batch hangs")
	}
	require.Less(t, time.Since(killed), 2*time.Second)
	var store *StoreError
	require.ErrorAs(t, err, &store)
	require.False(t, store.Timeout(), "%v", err)
	require.Regexp(t, `the server closed the connection|connection reset by peer`, err.Error())
}
