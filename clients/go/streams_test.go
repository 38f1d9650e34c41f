package sessiond_test

import (
	"fmt"
	"iter"
	"sync"
	"testing"
	"time"

	sessiond "github.com/claw-sessiond/claw-sessiond/clients/go"
	pb "github.com/claw-sessiond/claw-sessiond/clients/go/api/sessiondv1"
	"github.com/claw-sessiond/claw-sessiond/clients/go/internal/testdaemon"
)

// Many goroutines append over one AppendStream: each gets its own reply, per-append errors
// come back as *Error, and every append is stored once. WatchAll sees them in event order.
func TestAppendStreamAndWatchAll(t *testing.T) {
	t.Parallel()
	ws := testdaemon.Workspace(t)
	testdaemon.Start(t, ws)
	c := connect(t, ws)
	ctx := testdaemon.Ctx(t, 60*time.Second)
	all, stopAll := iter.Pull2(c.WatchAll(ctx, 0))
	defer stopAll()
	// WatchAll from 0 follows what commits once its stream is open: write until it sees a first event.
	first := make(chan error, 1)
	go func() {
		ev, err, _ := all()
		if err == nil && ev.GetSessionId() != "w0" {
			err = fmt.Errorf("first event of %q", ev.GetSessionId())
		}
		first <- err
	}()
	func() {
		for range 100 {
			if _, err := c.Append(ctx, &pb.AppendRequest{SessionId: "w0", Workdir: ws, Messages: []*pb.Message{sessiond.User("start")}}); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-first:
				if err != nil {
					t.Fatal(err)
				}
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
		t.Fatal("WatchAll saw nothing of 100 appends")
	}()
	stream, err := c.OpenAppendStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	const writers, each = 4, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				resp, err := stream.Append(ctx, &pb.AppendRequest{SessionId: "st", Workdir: ws,
					Messages: []*pb.Message{sessiond.User(fmt.Sprintf("w%d-%d", w, i))}})
				if err == nil && resp.GetFirstPosition() < 1 {
					err = fmt.Errorf("reply without a position: %v", resp)
				}
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	_, err = stream.Append(ctx, &pb.AppendRequest{SessionId: "st", Workdir: ws, Messages: []*pb.Message{sessiond.ToolResult("nope", "x")}})
	if sessiond.ReasonOf(err) != sessiond.ReasonUnknownToolCall {
		t.Fatalf("a failed append on the stream: %v", err)
	}
	loaded, err := c.Load(ctx, &pb.LoadRequest{SessionId: "st", Workdir: ws})
	if err != nil || len(loaded.Messages) != writers*each {
		t.Fatalf("%d stored, %v", len(loaded.Messages), err)
	}
	var last int64
	for seen := 0; seen < writers*each; {
		ev, err, ok := all()
		if !ok || err != nil || ev.GetEventId() <= last {
			t.Fatalf("WatchAll: %v %v", ev, err)
		}
		last = ev.GetEventId()
		if ev.GetSessionId() == "st" {
			seen++
		}
	}
}

// A Watch open across a daemon restart resumes after the last event it yielded: every event
// once, in order, the ones written while the daemon was down included.
func TestWatchResumesAcrossADaemonRestart(t *testing.T) {
	t.Parallel()
	ws := testdaemon.Workspace(t)
	d := testdaemon.Start(t, ws)
	c := connect(t, ws, sessiond.WithRetryWindow(30*time.Second))
	ctx := testdaemon.Ctx(t, 60*time.Second)
	next, stop := iter.Pull2(c.Watch(ctx, "r", 0))
	defer stop()
	app := func(text string) {
		t.Helper()
		if _, err := c.Append(ctx, &pb.AppendRequest{SessionId: "r", Workdir: ws, Messages: []*pb.Message{sessiond.User(text)}}); err != nil {
			t.Fatal(err)
		}
	}
	app("one")
	app("two")
	for want := int64(1); want <= 2; want++ {
		if ev, err, _ := next(); err != nil || ev.GetPosition() != want {
			t.Fatalf("%v %v", ev, err)
		}
	}
	d.Term()
	testdaemon.Start(t, ws)
	app("three")
	for want, text := range map[int64]string{3: "three"} {
		ev, err, _ := next()
		if err != nil || ev.GetPosition() != want || ev.GetMessage().GetContent() != text {
			t.Fatalf("after the restart: %v %v", ev, err)
		}
	}
}

// A run that asked for pings (WithPingTimeout) is kept alive by the Run's pinger past its bound;
// EndRun is idempotent (a second one: was_live false).
func TestPingTimeoutRunIsKeptByItsPinger(t *testing.T) {
	t.Parallel()
	ws := shared.Workspace // a session of its own on the shared daemon
	c := connect(t, ws)
	ctx := testdaemon.Ctx(t, 30*time.Second)
	run, err := c.Attach(ctx, "pinged", sessiond.WithPingTimeout(2*time.Second))
	if err != nil || run.PingTimeoutSeconds != 2 {
		t.Fatalf("%v %v", run, err)
	}
	time.Sleep(5 * time.Second) // more than twice the bound: only the pings keep it
	if _, err := c.PingRun(ctx, run.ID); err != nil {
		t.Fatalf("the pinged run ended: %v (%v)", err, run.Err())
	}
	if _, err := run.End(ctx); err != nil {
		t.Fatal(err)
	}
	again, err := c.EndRun(ctx, run.ID)
	if err != nil || again.GetWasLive() {
		t.Fatalf("EndRun again: %v %v", again, err)
	}
}
