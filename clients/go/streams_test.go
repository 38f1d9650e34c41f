package sessiond_test

import (
	"context"
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

// A Watch and a WatchAll open across a daemon restart resume after the last event they yielded:
// every event once, in order, the one written as the daemon came back included.
func TestWatchResumesAcrossADaemonRestart(t *testing.T) {
	t.Parallel()
	ws := testdaemon.Workspace(t)
	d := testdaemon.Start(t, ws)
	c := connect(t, ws, sessiond.WithRetryWindow(30*time.Second))
	ctx := testdaemon.Ctx(t, 60*time.Second)
	next, stop := iter.Pull2(c.Watch(ctx, "r", 0))
	defer stop()
	all := watchAllLive(ctx, t, c, ws)
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
	// The WatchAll opened before the restart resumed too: one, two, three, each once, in order.
	for _, text := range []string{"one", "two", "three"} {
		ev, err := all.next(t)
		if err != nil || ev.GetSessionId() != "r" || ev.GetMessage().GetContent() != text {
			t.Fatalf("WatchAll after the restart: %v %v, want %q", ev, err, text)
		}
	}
	all.none(t)
}

// allEvents runs a WatchAll in a goroutine of its own, its events (of session "r") on a channel.
type allEvents struct {
	ch chan allEvent
}

type allEvent struct {
	ev  *pb.WatchAllResponse
	err error
}

// watchAllLive starts WatchAll from now on and returns once it is live: probe appends to session
// "probe" until one comes through (at most 100, 200 ms apart).
func watchAllLive(ctx context.Context, t *testing.T, c *sessiond.Client, ws string) *allEvents {
	t.Helper()
	a := &allEvents{ch: make(chan allEvent, 64)}
	probed := make(chan struct{}, 1)
	go func() {
		for ev, err := range c.WatchAll(ctx, 0) {
			if err == nil && ev.GetSessionId() == "probe" {
				select {
				case probed <- struct{}{}:
				default:
				}
				continue
			}
			select {
			case a.ch <- allEvent{ev, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for i := range 100 {
		if _, err := c.Append(ctx, &pb.AppendRequest{SessionId: "probe", Workdir: ws,
			Messages: []*pb.Message{sessiond.User(fmt.Sprint(i))}}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-probed:
			return a
		case <-time.After(200 * time.Millisecond):
		}
	}
	t.Fatal("WatchAll yielded none of 100 probe appends")
	return nil
}

// next is the next event within 20 s.
func (a *allEvents) next(t *testing.T) (*pb.WatchAllResponse, error) {
	t.Helper()
	select {
	case e := <-a.ch:
		return e.ev, e.err
	case <-time.After(20 * time.Second):
		t.Fatal("WatchAll yielded nothing in 20 s")
		return nil, nil
	}
}

// none checks that no further event (a duplicate) arrives within 300 ms.
func (a *allEvents) none(t *testing.T) {
	t.Helper()
	select {
	case e := <-a.ch:
		t.Fatalf("WatchAll yielded one more: %v %v", e.ev, e.err)
	case <-time.After(300 * time.Millisecond):
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

// Appends in flight over an AppendStream when its daemon is killed with SIGKILL are sent again by
// unary Append with their request ids once a daemon is back: every append stored exactly once,
// each goroutine's in its order.
func TestAppendStreamResendsThroughAppendAfterAKill(t *testing.T) {
	t.Parallel()
	ws := testdaemon.Workspace(t)
	d := testdaemon.Start(t, ws)
	c := connect(t, ws, sessiond.WithRetryWindow(30*time.Second))
	ctx := testdaemon.Ctx(t, 90*time.Second)
	stream, err := c.OpenAppendStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	const writers, each = 8, 40
	var acked sync.WaitGroup
	var mu sync.Mutex
	done, errs := 0, []error{}
	for g := range writers {
		acked.Add(1)
		go func() {
			defer acked.Done()
			for i := range each {
				_, err := stream.Append(ctx, &pb.AppendRequest{SessionId: "as", Workdir: ws,
					Messages: []*pb.Message{sessiond.User(fmt.Sprintf("%d-%d", g, i))}})
				mu.Lock()
				done++
				if err != nil {
					errs = append(errs, err)
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	for i := 0; i < 2000; i++ { // kill once a third is acknowledged (at most 20 s)
		mu.Lock()
		n := done
		mu.Unlock()
		if n >= writers*each/3 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	d.Kill9(t)
	mu.Lock()
	atKill := done
	mu.Unlock()
	if atKill >= writers*each {
		t.Fatalf("every append was answered before the kill (%d): nothing was in flight", atKill)
	}
	testdaemon.Start(t, ws)
	acked.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d appends failed across the kill, first: %v", len(errs), errs[0])
	}
	loaded, err := c.Load(ctx, &pb.LoadRequest{SessionId: "as", Workdir: ws})
	if err != nil {
		t.Fatal(err)
	}
	seen, last := map[string]bool{}, map[int]int{}
	for _, m := range loaded.Messages {
		var g, i int
		if _, err := fmt.Sscanf(m.GetContent(), "%d-%d", &g, &i); err != nil || seen[m.GetContent()] {
			t.Fatalf("stored twice or unknown: %q", m.GetContent())
		}
		seen[m.GetContent()] = true
		if prev, ok := last[g]; ok && i <= prev {
			t.Fatalf("writer %d's %d stored after its %d", g, i, prev)
		}
		last[g] = i
	}
	if len(seen) != writers*each {
		t.Fatalf("%d appends stored, want %d (killed at %d answered)", len(seen), writers*each, atKill)
	}
}
