package sessiond_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	sessiond "github.com/claw-sessiond/claw-sessiond/clients/go"
	pb "github.com/claw-sessiond/claw-sessiond/clients/go/api/sessiondv1"
	"github.com/claw-sessiond/claw-sessiond/clients/go/internal/testdaemon"
)

func connect(t *testing.T, ws string, opts ...sessiond.Option) *sessiond.Client {
	t.Helper()
	c, err := sessiond.New(append([]sessiond.Option{sessiond.WithWorkspace(ws), sessiond.WithAutostart(false)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func roles(msgs []*pb.Message) string {
	var parts []string
	for _, m := range msgs {
		s := strings.TrimPrefix(m.GetRole().String(), "ROLE_")
		if m.GetToolCallId() != "" {
			s += ":" + m.GetToolCallId()
		}
		if m.GetSynthetic() != nil {
			s += "(synthetic)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// Every RPC family against one daemon: append, load, usage, clear (totals kept), items,
// client ids, metadata, entry usage, tool policy, state deltas, labels, EditTail, fork,
// search, list, export/import, delete, stats, backup, events, scope states, usage report.
func TestEveryRPCAgainstARealDaemon(t *testing.T) {
	t.Parallel()
	ws := testdaemon.Workspace(t)
	testdaemon.Start(t, ws)
	c := connect(t, ws)
	ctx := testdaemon.Ctx(t, 60*time.Second)

	created, err := c.CreateSession(ctx, &pb.CreateSessionRequest{SessionId: "s1", Workdir: ws, State: `{"step":1}`,
		Labels: map[string]string{"team": "go"}, ToolPolicy: &pb.ToolPolicy{AllowUnparsedCalls: true}})
	if err != nil || created.GetLabels()["team"] != "go" {
		t.Fatalf("CreateSession: %v %v", created, err)
	}
	item := []byte{0, 1, 2, 255}
	resp, err := c.Append(ctx, &pb.AppendRequest{SessionId: "s1", Workdir: ws, Messages: []*pb.Message{
		sessiond.User("list the files"),
		{Role: pb.Role_ROLE_OTHER, Format: "openai.reasoning", Item: item, ClientId: "r-1", Metadata: `{"k":"v"}`},
		{Role: pb.Role_ROLE_ASSISTANT, ToolCalls: []*pb.ToolCall{sessiond.Call("call_1", "bash", "not json")},
			Usage: &pb.EntryUsage{InputTokens: 7, OutputTokens: 3, Model: "m"}},
	}, StateDeltas: []*pb.StateDelta{{Delta: `{"step":2}`}}})
	if err != nil || resp.GetFirstPosition() != 1 || resp.GetLastPosition() != 3 {
		t.Fatalf("Append: %v %v", resp, err)
	}
	if _, err := c.Append(ctx, &pb.AppendRequest{SessionId: "s1", Workdir: ws, ExpectedLastPosition: 3,
		Messages: []*pb.Message{sessiond.ToolResult("call_1", "a.txt")}}); err != nil {
		t.Fatal(err)
	}
	usage, err := c.RecordUsage(ctx, &pb.RecordUsageRequest{SessionId: "s1", InputTokens: 100, OutputTokens: 20,
		CostMicros: 5, Currency: "USD", Model: "m"})
	if err != nil || usage.GetInputTokens() != 107 {
		t.Fatalf("RecordUsage: %v %v", usage, err)
	}
	loaded, err := c.Load(ctx, &pb.LoadRequest{SessionId: "s1", Workdir: ws})
	if err != nil {
		t.Fatal(err)
	}
	if got := roles(loaded.Messages); got != "USER OTHER ASSISTANT TOOL:call_1" {
		t.Fatalf("Load: %s", got)
	}
	if m := loaded.Messages[1]; !bytes.Equal(m.GetItem(), item) || m.GetClientId() != "r-1" || m.GetMetadata() != `{"k":"v"}` {
		t.Fatalf("item, client id or metadata lost: %v", m)
	}
	if m := loaded.Messages[2]; !m.GetToolCalls()[0].GetArgumentsNotJson() || m.GetUsage().GetInputTokens() != 7 {
		t.Fatalf("tool policy or entry usage lost: %v", m)
	}
	if loaded.Session.GetState() != `{"step":2}` {
		t.Fatalf("state delta not applied: %q", loaded.Session.GetState())
	}
	// A client id is unique in the visible history.
	_, err = c.Append(ctx, &pb.AppendRequest{SessionId: "s1", Workdir: ws,
		Messages: []*pb.Message{{Role: pb.Role_ROLE_USER, Content: "x", ClientId: "r-1"}}})
	if !errors.Is(err, sessiond.ReasonClientIDExists) {
		t.Fatalf("duplicate client id: %v", err)
	}
	if _, err := c.UpdateSession(ctx, &pb.UpdateSessionRequest{SessionId: "s1", SetLabels: map[string]string{"x": "y"},
		RemoveLabels: []string{"team"}}); err != nil {
		t.Fatal(err)
	}
	edit, err := c.EditTail(ctx, &pb.EditTailRequest{SessionId: "s1", RemoveLast: 1, ExpectedLastPosition: 4,
		Replacements: []*pb.Message{sessiond.ToolResult("call_1", "a.txt b.txt")}})
	if err != nil || len(edit.GetRemoved()) != 1 {
		t.Fatalf("EditTail: %v %v", edit, err)
	}
	fork, err := c.ForkSession(ctx, &pb.ForkSessionRequest{SourceSessionId: "s1", SessionId: "s1-fork", UpToPosition: 1})
	if err != nil || fork.GetEntriesCopied() != 1 || fork.GetSession().GetForkedFrom() != "s1" {
		t.Fatalf("ForkSession: %v %v", fork, err)
	}
	hits, err := c.Search(ctx, &pb.SearchRequest{Query: "files"})
	if err != nil || len(hits.GetHits()) == 0 {
		t.Fatalf("Search: %v %v", hits, err)
	}
	list, err := c.ListSessions(ctx, &pb.ListSessionsRequest{Labels: map[string]string{"x": "y"}})
	if err != nil || len(list.GetSessions()) != 2 { // the fork took the labels too
		t.Fatalf("ListSessions by label: %v %v", list, err)
	}
	if _, err := c.RecordEvent(ctx, &pb.RecordEventRequest{SessionId: "s1", Kind: pb.EventKind_EVENT_KIND_ERROR,
		Payload: `{"error":"x"}`}); err != nil {
		t.Fatal(err)
	}
	cleared, err := c.Clear(ctx, &pb.ClearRequest{SessionId: "s1"})
	if err != nil || cleared.GetPosition() == 0 {
		t.Fatalf("Clear: %v %v", cleared, err)
	}
	after, err := c.Load(ctx, &pb.LoadRequest{SessionId: "s1"})
	if err != nil || len(after.Messages) != 0 || after.Session.GetUsage().GetInputTokens() != 107 {
		t.Fatalf("Clear must empty the history and keep totals: %v %v", after, err)
	}
	byModel, err := c.GetUsage(ctx, "s1")
	if err != nil || byModel.GetTotal().GetInputTokens() != 107 {
		t.Fatalf("GetUsage: %v %v", byModel, err)
	}
	if rep, err := c.GetUsageReport(ctx, &pb.GetUsageReportRequest{}); err != nil || len(rep.GetRows()) == 0 {
		t.Fatalf("GetUsageReport: %v %v", rep, err)
	}
	if _, err := c.UpdateSession(ctx, &pb.UpdateSessionRequest{SessionId: "s1",
		StateDeltas: []*pb.StateDelta{{Scope: "team:go", Delta: `{"a":1}`}}}); err != nil {
		t.Fatal(err)
	}
	scopes, err := c.GetScopeStates(ctx, "team:go")
	if err != nil || len(scopes.GetStates()) != 1 {
		t.Fatalf("GetScopeStates: %v %v", scopes, err)
	}
	var lines []string
	for line, err := range c.Export(ctx, "s1-fork") {
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, line)
	}
	if _, err := c.Delete(ctx, "s1-fork"); err != nil {
		t.Fatal(err)
	}
	imported, err := c.Import(ctx, &pb.ImportRequest{Lines: lines})
	if err != nil || imported.GetSessionId() != "s1-fork" {
		t.Fatalf("Import: %v %v", imported, err)
	}
	stats, err := c.GetStats(ctx)
	if err != nil || stats.GetSessions() != 2 {
		t.Fatalf("GetStats: %v %v", stats, err)
	}
	var backup bytes.Buffer
	figures, err := c.Backup(ctx, &backup)
	if err != nil || figures.GetSessions() != 2 || !bytes.HasPrefix(backup.Bytes(), []byte("SQLite format 3")) {
		t.Fatalf("Backup: %v %v (%d bytes)", figures, err, backup.Len())
	}
}

// The same request (same request id) sent twice writes once; the second reply is a replay.
func TestRetryWithTheSameRequestIDWritesOnce(t *testing.T) {
	t.Parallel()
	ws := shared.Workspace // a session of its own on the shared daemon
	c := connect(t, ws)
	ctx := testdaemon.Ctx(t, 30*time.Second)
	req := &pb.AppendRequest{SessionId: "r", Messages: []*pb.Message{sessiond.User("once")}}
	first, err := c.Append(ctx, req)
	if err != nil || req.GetRequestId() == "" {
		t.Fatalf("%v (request id %q)", err, req.GetRequestId())
	}
	again, err := c.Append(ctx, req)
	if err != nil || !again.GetReplayed() || again.GetFirstPosition() != first.GetFirstPosition() {
		t.Fatalf("retry: %v %v", again, err)
	}
	loaded, err := c.Load(ctx, &pb.LoadRequest{SessionId: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded.Messages) != 1 {
		t.Fatalf("written %d times", len(loaded.Messages))
	}
}

func errorsAs(err error, target **sessiond.Error) bool { return errors.As(err, target) }

func stringsContains(s, sub string) bool { return strings.Contains(s, sub) }
