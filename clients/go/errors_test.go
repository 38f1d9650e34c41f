package sessiond_test

import (
	"context"
	"errors"
	"iter"
	"strings"
	"syscall"
	"testing"
	"time"

	sessiond "github.com/claw-sessiond/claw-sessiond/clients/go"
	pb "github.com/claw-sessiond/claw-sessiond/clients/go/api/sessiondv1"
	"github.com/claw-sessiond/claw-sessiond/clients/go/internal/testdaemon"
	"google.golang.org/grpc/codes"
)

// Every reason a request can provoke from a running daemon comes back as an *Error with the
// daemon's code and reason, usable with errors.Is and errors.As, retryable only when transient.
func TestEveryErrorReasonIsUsableWithErrorsIsAndAs(t *testing.T) {
	t.Parallel()
	ws := testdaemon.Workspace(t)
	testdaemon.Start(t, ws, "--max-open-tool-calls", "3", "--max-watchers", "1")
	c := connect(t, ws)
	ctx := testdaemon.Ctx(t, 60*time.Second)
	app := func(session string, msgs ...*pb.Message) error {
		_, err := c.Append(ctx, &pb.AppendRequest{SessionId: session, Workdir: ws, Messages: msgs})
		return err
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(app("s", sessiond.User("hi"), sessiond.Assistant("", sessiond.Call("c1", "bash", "{}"))))
	must(app("s", sessiond.ToolResult("c1", "ok")))
	_, err := c.RecordUsage(ctx, &pb.RecordUsageRequest{SessionId: "s", InputTokens: 1, Currency: "USD", CostMicros: 1})
	must(err)
	reused := &pb.AppendRequest{SessionId: "s", Workdir: ws, Messages: []*pb.Message{sessiond.User("a")}}
	_, err = c.Append(ctx, reused)
	must(err)
	run, err := c.Attach(ctx, "owned")
	must(err)
	defer run.End(context.Background())
	must(app("pending", sessiond.User("deploy"),
		&pb.Message{Role: pb.Role_ROLE_ASSISTANT, ToolCalls: []*pb.ToolCall{{Id: "p1", Name: "deploy", Arguments: "{}", Pending: true}}}))
	_, err = c.CreateSession(ctx, &pb.CreateSessionRequest{SessionId: "made", Workdir: ws})
	must(err)
	watches := c.Watch(ctx, "s", 0)
	next, stop := iter.Pull2(watches)
	defer stop()
	if ev, err, _ := next(); err != nil || ev.GetPosition() != 1 {
		t.Fatalf("first watch: %v %v", ev, err)
	}

	cases := []struct {
		want sessiond.Reason
		code codes.Code
		call func() error
	}{
		{sessiond.ReasonInvalidSessionID, codes.InvalidArgument, func() error { return app("", sessiond.User("x")) }},
		{sessiond.ReasonInvalidMessage, codes.InvalidArgument, func() error { return app("s", &pb.Message{Content: "no role"}) }},
		{sessiond.ReasonInvalidMessage, codes.InvalidArgument, func() error { return app("s", sessiond.User("bad \xff utf-8")) }},
		{sessiond.ReasonArgumentsNotJSON, codes.InvalidArgument, func() error {
			return app("s", sessiond.Assistant("", sessiond.Call("c2", "bash", "not json")))
		}},
		{sessiond.ReasonDuplicateToolCallID, codes.InvalidArgument, func() error {
			return app("s", sessiond.Assistant("", sessiond.Call("d", "a", "{}"), sessiond.Call("d", "b", "{}")))
		}},
		{sessiond.ReasonEmptyBatch, codes.InvalidArgument, func() error { return app("s") }},
		{sessiond.ReasonFieldTooLarge, codes.InvalidArgument, func() error { return app("s", sessiond.User(strings.Repeat("x", 1100*1024))) }},
		{sessiond.ReasonInvalidUsage, codes.InvalidArgument, func() error {
			_, err := c.RecordUsage(ctx, &pb.RecordUsageRequest{SessionId: "s", InputTokens: -1})
			return err
		}},
		{sessiond.ReasonInvalidWorkdir, codes.InvalidArgument, func() error {
			_, err := c.Load(ctx, &pb.LoadRequest{SessionId: "s", Workdir: "relative/dir"})
			return err
		}},
		{sessiond.ReasonInvalidEvent, codes.InvalidArgument, func() error {
			_, err := c.RecordEvent(ctx, &pb.RecordEventRequest{SessionId: "s", Payload: "{}"})
			return err
		}},
		{sessiond.ReasonInvalidImport, codes.InvalidArgument, func() error {
			_, err := c.Import(ctx, &pb.ImportRequest{Lines: []string{"not an export line"}})
			return err
		}},
		{sessiond.ReasonRequestIDReused, codes.InvalidArgument, func() error {
			_, err := c.Append(ctx, &pb.AppendRequest{SessionId: "s", Workdir: ws, RequestId: reused.RequestId,
				Messages: []*pb.Message{sessiond.User("b")}})
			return err
		}},
		{sessiond.ReasonSessionNotFound, codes.NotFound, func() error {
			_, err := c.ForkSession(ctx, &pb.ForkSessionRequest{SourceSessionId: "missing", SessionId: "f"})
			return err
		}},
		{sessiond.ReasonUnknownToolCall, codes.FailedPrecondition, func() error { return app("s", sessiond.ToolResult("nope", "x")) }},
		{sessiond.ReasonToolCallAlreadyAnswered, codes.FailedPrecondition, func() error { return app("s", sessiond.ToolResult("c1", "again")) }},
		{sessiond.ReasonCurrencyMismatch, codes.FailedPrecondition, func() error {
			_, err := c.RecordUsage(ctx, &pb.RecordUsageRequest{SessionId: "s", CostMicros: 1, Currency: "EUR"})
			return err
		}},
		{sessiond.ReasonRunAlreadyOwned, codes.FailedPrecondition, func() error { _, err := c.Attach(ctx, "owned"); return err }},
		{sessiond.ReasonUnknownRun, codes.FailedPrecondition, func() error { _, err := c.PingRun(ctx, "no-such-run"); return err }},
		{sessiond.ReasonTooManyOpenCalls, codes.FailedPrecondition, func() error {
			return app("open", sessiond.Assistant("", sessiond.Call("o1", "a", "{}"), sessiond.Call("o2", "a", "{}"),
				sessiond.Call("o3", "a", "{}"), sessiond.Call("o4", "a", "{}")))
		}},
		{sessiond.ReasonEditSplitsCall, codes.FailedPrecondition, func() error {
			_, err := c.EditTail(ctx, &pb.EditTailRequest{SessionId: "pending", RemoveLast: 1})
			return err
		}},
		{sessiond.ReasonSessionExists, codes.AlreadyExists, func() error {
			_, err := c.CreateSession(ctx, &pb.CreateSessionRequest{SessionId: "made", Workdir: ws})
			return err
		}},
		{sessiond.ReasonClientIDExists, codes.AlreadyExists, func() error {
			return app("s", &pb.Message{Role: pb.Role_ROLE_USER, Content: "a", ClientId: "k"},
				&pb.Message{Role: pb.Role_ROLE_USER, Content: "b", ClientId: "k"})
		}},
		{sessiond.ReasonSequenceConflict, codes.Aborted, func() error {
			_, err := c.Append(ctx, &pb.AppendRequest{SessionId: "s", Workdir: ws, ExpectedLastPosition: 99,
				Messages: []*pb.Message{sessiond.User("x")}})
			return err
		}},
		{sessiond.ReasonTooManyStreams, codes.ResourceExhausted, func() error {
			for _, err := range c.Watch(ctx, "s", 0) {
				return err
			}
			return nil
		}},
	}
	for _, tc := range cases {
		err := tc.call()
		var e *sessiond.Error
		if !errors.As(err, &e) || !errors.Is(err, tc.want) || e.Code != tc.code {
			t.Errorf("want %s/%s, got %v", tc.code, tc.want, err)
			continue
		}
		if transient := tc.want == sessiond.ReasonTooManyStreams; sessiond.IsRetryable(err) != transient {
			t.Errorf("%s: retryable %v", tc.want, sessiond.IsRetryable(err))
		}
		if tc.want == sessiond.ReasonSequenceConflict && e.Actual() == 0 {
			t.Errorf("SEQUENCE_CONFLICT without its actual position: %v", e.Metadata)
		}
	}
}

// Without a daemon and with auto-start off: DAEMON_UNAVAILABLE at once, naming the workspace.
// A stopped (SIGSTOP) daemon: the caller's deadline ends the call, DEADLINE_EXCEEDED, retryable.
func TestNoDaemonAndAHungDaemon(t *testing.T) {
	t.Parallel()
	ws := testdaemon.Workspace(t)
	c := connect(t, ws)
	ctx := testdaemon.Ctx(t, 30*time.Second)
	start := time.Now()
	_, err := c.GetStats(ctx)
	if !errors.Is(err, sessiond.ReasonDaemonUnavailable) || !strings.Contains(err.Error(), ws) || time.Since(start) > 10*time.Second {
		t.Fatalf("no daemon: %v after %s", err, time.Since(start))
	}
	d := testdaemon.Start(t, ws)
	if _, err := c.GetStats(ctx); err != nil {
		t.Fatalf("the client did not find the daemon started later: %v", err)
	}
	if err := d.Cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer d.Cmd.Process.Signal(syscall.SIGCONT)
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_, err = c.GetStats(short)
	if !errors.Is(err, sessiond.ReasonDeadlineExceeded) || !sessiond.IsRetryable(err) {
		t.Fatalf("hung daemon: %v", err)
	}
	// The caller's cancel: context.Canceled through errors.Is, not retryable.
	cancelled, cancelNow := context.WithCancel(ctx)
	time.AfterFunc(300*time.Millisecond, cancelNow)
	_, err = c.GetStats(cancelled)
	if !errors.Is(err, context.Canceled) || sessiond.IsRetryable(err) {
		t.Fatalf("cancelled call: %v", err)
	}
}

// A watcher too slow for the daemon is told WATCH_LAGGED; the iterator resumes after its last
// event by itself: every event once, in order, then new ones.
func TestLaggedWatchResumesFromItsPosition(t *testing.T) {
	t.Parallel()
	ws := testdaemon.Workspace(t)
	d := testdaemon.Start(t, ws, "--watch-stall-s", "1")
	c := connect(t, ws)
	ctx := testdaemon.Ctx(t, 60*time.Second)
	if _, err := c.Append(ctx, &pb.AppendRequest{SessionId: "lag", Workdir: ws, Messages: []*pb.Message{sessiond.User("first")}}); err != nil {
		t.Fatal(err)
	}
	next, stop := iter.Pull2(c.Watch(ctx, "lag", 0))
	defer stop()
	if ev, err, _ := next(); err != nil || ev.GetPosition() != 1 {
		t.Fatalf("%v %v", ev, err)
	}
	big := make([]*pb.Message, 16)
	for i := range big {
		big[i] = sessiond.User(strings.Repeat("x", 64*1024))
	}
	const pushed = 8 // MiB: more than the flow-control window, so the daemon's send blocks
	for range pushed {
		if _, err := c.Append(ctx, &pb.AppendRequest{SessionId: "lag", Workdir: ws, Messages: big}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(d.Log(), "event=watch_lagged") {
		if time.Now().After(deadline) {
			t.Fatal("the watcher was not declared lagged in 15 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	total := int64(1 + pushed*len(big))
	for want := int64(2); want <= total; want++ {
		ev, err, ok := next()
		if !ok || err != nil || ev.GetPosition() != want {
			t.Fatalf("after the lag: event %v, err %v, want position %d", ev, err, want)
		}
	}
	if _, err := c.Append(ctx, &pb.AppendRequest{SessionId: "lag", Workdir: ws, Messages: []*pb.Message{sessiond.User("after the lag")}}); err != nil {
		t.Fatal(err)
	}
	if ev, err, _ := next(); err != nil || ev.GetPosition() != total+1 || ev.GetMessage().GetContent() != "after the lag" {
		t.Fatalf("%v %v", ev, err)
	}
}

// A call on a closed client: CLIENT_CLOSED, nothing sent, not retryable.
func TestCallOnAClosedClient(t *testing.T) {
	t.Parallel()
	c := connect(t, shared.Workspace)
	c.Close()
	_, err := c.GetStats(testdaemon.Ctx(t, 10*time.Second))
	if !errors.Is(err, sessiond.ReasonClientClosed) || sessiond.IsRetryable(err) {
		t.Fatalf("%v", err)
	}
}
