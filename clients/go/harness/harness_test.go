package harness_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sessiond "github.com/claw-sessiond/claw-sessiond/clients/go"
	pb "github.com/claw-sessiond/claw-sessiond/clients/go/api/sessiondv1"
	"github.com/claw-sessiond/claw-sessiond/clients/go/harness"
	"github.com/claw-sessiond/claw-sessiond/clients/go/internal/testdaemon"
)

func manager(t *testing.T, ws string) (*harness.Manager, *sessiond.Client) {
	t.Helper()
	c, err := sessiond.New(sessiond.WithWorkspace(ws), sessiond.WithAutostart(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return harness.NewManager(c), c
}

func shape(msgs []harness.Message) string {
	var parts []string
	for _, m := range msgs {
		s := m.Role
		for _, c := range m.ToolCalls {
			s += "[" + c.ID + "]"
		}
		if m.ToolCallID != "" {
			s += ":" + m.ToolCallID
		}
		if m.Interrupted {
			s += "(interrupted)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

// The seed's promises: the first GetOrCreate writes nothing; history, totals and CreatedAt
// survive a new manager (a restart); Clear empties the history and keeps the totals.
func TestPersistenceAndClearKeepsTotals(t *testing.T) {
	t.Parallel()
	ws := testdaemon.Workspace(t)
	testdaemon.Start(t, ws)
	m, c := manager(t, ws)
	ctx := testdaemon.Ctx(t, 30*time.Second)
	s, err := m.GetOrCreate(ctx, "seed", ws)
	if err != nil {
		t.Fatal(err)
	}
	if list, err := c.ListSessions(ctx, &pb.ListSessionsRequest{}); err != nil || len(list.GetSessions()) != 0 {
		t.Fatalf("the first GetOrCreate stored something: %v %v", list, err)
	}
	call := harness.ToolCall{ID: "call-1", Name: "read_file", Arguments: json.RawMessage(`{"path": "a.txt"}`)}
	if err := s.Append(ctx, harness.Message{Role: "user", Content: "你好"},
		harness.Message{Role: "assistant", ToolCalls: []harness.ToolCall{call}},
		harness.Message{Role: "tool", ToolCallID: "call-1", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordUsage(ctx, 50, 10, 7, "CNY"); err != nil {
		t.Fatal(err)
	}
	if err := s.Reload(ctx); err != nil { // CreatedAt as stored (the first Append created the session)
		t.Fatal(err)
	}
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	m2, _ := manager(t, ws)
	again, err := m2.GetOrCreate(ctx, "seed", ws)
	if err != nil {
		t.Fatal(err)
	}
	got := again.WorkingMemory()
	if shape(got) != "user assistant[call-1] tool:call-1" || got[0].Content != "你好" ||
		string(got[1].ToolCalls[0].Arguments) != `{"path": "a.txt"}` || !again.CreatedAt.Equal(s.CreatedAt) {
		t.Fatalf("after a restart: %s %+v", shape(got), got)
	}
	if tot := again.Totals(); tot.PromptTokens != 50 || tot.CompletionTokens != 10 || tot.CostMicros != 7 {
		t.Fatalf("totals: %+v", tot)
	}
	if err := again.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if err := again.Close(ctx); err != nil {
		t.Fatal(err)
	}
	m3, _ := manager(t, ws)
	third, err := m3.GetOrCreate(ctx, "seed", ws)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close(ctx)
	if len(third.WorkingMemory()) != 0 || third.Totals().PromptTokens != 50 {
		t.Fatalf("Clear must empty the history and keep the totals: %s %+v", shape(third.WorkingMemory()), third.Totals())
	}
	// A second process may not run the session at the same time.
	if _, err := m.GetOrCreate(ctx, "seed", ws); !errorsIs(err, sessiond.ReasonRunAlreadyOwned) {
		t.Fatalf("a second runner: %v", err)
	}
}

// Two calls of one assistant message left without results, with the user's next turn already
// after them: both get an interrupted result, in call order, right after the assistant message.
// An answered call is left alone.
func TestTwoMissingResultsAreRepairedInOrderRightAfterTheirMessage(t *testing.T) {
	t.Parallel()
	ws := testdaemon.Workspace(t)
	testdaemon.Start(t, ws)
	m, c := manager(t, ws)
	ctx := testdaemon.Ctx(t, 30*time.Second)
	if _, err := c.Append(ctx, &pb.AppendRequest{SessionId: "gap", Workdir: ws, Messages: []*pb.Message{
		sessiond.User("write three files"),
		sessiond.Assistant("", sessiond.Call("call-0", "write_file", "{}")),
		sessiond.ToolResult("call-0", "written"),
		sessiond.Assistant("", sessiond.Call("call-1", "write_file", "{}"), sessiond.Call("call-2", "write_file", "{}")),
		sessiond.User("next"),
	}}); err != nil {
		t.Fatal(err)
	}
	s, err := m.GetOrCreate(ctx, "gap", ws)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	want := "user assistant[call-0] tool:call-0 assistant[call-1][call-2] tool:call-1(interrupted) tool:call-2(interrupted) user"
	if got := shape(s.WorkingMemory()); got != want {
		t.Fatalf("working memory:\n got %s\nwant %s", got, want)
	}
}

// The path from the seed's .claw/sessions/<id>.json files: migrate-legacy brings history and
// totals over, and GetOrCreate shows them with the missing result repaired.
func TestLegacySessionFilesThroughMigrateLegacy(t *testing.T) {
	t.Parallel()
	ws := testdaemon.Workspace(t)
	d := testdaemon.Start(t, ws)
	folder := filepath.Join(ws, ".claw", "sessions")
	if err := os.MkdirAll(folder, 0o700); err != nil {
		t.Fatal(err)
	}
	legacy := `{"ID": "old-1", "WorkDir": "/srv/work", "CreatedAt": "2026-08-20T08:00:00Z",
  "UpdatedAt": "2026-08-20T08:01:00Z",
  "History": [
    {"Role": "user", "Content": "写两个文件"},
    {"Role": "assistant", "Content": "", "ToolCalls": [
      {"ID": "call-1", "Name": "write_file", "Arguments": {"path": "a.txt"}},
      {"ID": "call-2", "Name": "write_file", "Arguments": {"path": "b.txt"}}]}
  ],
  "TotalPromptTokens": 50, "TotalCompletionTokens": 10}`
	if err := os.WriteFile(filepath.Join(folder, "old-1.json"), []byte(legacy), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(testdaemon.Bin(t), "migrate-legacy", folder, "--socket", d.Socket).CombinedOutput()
	if err != nil {
		t.Fatalf("migrate-legacy: %v %s", err, out)
	}
	m, _ := manager(t, ws)
	ctx := testdaemon.Ctx(t, 30*time.Second)
	s, err := m.GetOrCreate(ctx, "old-1", ws)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if got := shape(s.WorkingMemory()); got != "user assistant[call-1][call-2] tool:call-1(interrupted) tool:call-2(interrupted)" {
		t.Fatalf("migrated session: %s", got)
	}
	if tot := s.Totals(); tot.PromptTokens != 50 || tot.CompletionTokens != 10 || !s.CreatedAt.Equal(time.Date(2026, 8, 20, 8, 0, 0, 0, time.UTC)) {
		t.Fatalf("totals or CreatedAt lost: %+v %v", tot, s.CreatedAt)
	}
}

// A corrupt store is a clear error from GetOrCreate, never an empty session written over it.
func TestCorruptStoreIsAClearError(t *testing.T) {
	t.Parallel()
	ws := testdaemon.Workspace(t)
	if err := os.Mkdir(filepath.Join(ws, ".claw"), 0o700); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(ws, ".claw", "sessions.db")
	garbage := []byte("not a database")
	if err := os.WriteFile(db, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := sessiond.New(sessiond.WithWorkspace(ws))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = harness.NewManager(c).GetOrCreate(testdaemon.Ctx(t, 60*time.Second), "s", ws)
	if err == nil || !strings.Contains(err.Error(), "not an SQLite database") {
		t.Fatalf("want a clear error about the store: %v", err)
	}
	if data, _ := os.ReadFile(db); string(data) != string(garbage) {
		t.Fatal("the corrupt store was overwritten")
	}
}

// The example harness killed with SIGKILL in the middle of its tool: on restart it shows the
// history with the interrupted result right after the call, and goes on.
func TestExampleHarnessKilledMidToolShowsTheRepairOnRestart(t *testing.T) {
	t.Parallel()
	ws := testdaemon.Workspace(t)
	testdaemon.Start(t, ws)
	bin := filepath.Join(t.TempDir(), "harness")
	if out, err := exec.Command("go", "build", "-o", bin, "../examples/harness").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v %s", err, out)
	}
	first := exec.Command(bin, ws, "demo")
	first.Env = append(os.Environ(), "CLAW_HARNESS_TOOL_S=120")
	stdout, err := first.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = first.Process.Kill(); _ = first.Wait() })
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case line := <-lines:
		if line != "tool started" {
			t.Fatalf("first run: %q", line)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the harness did not start its tool in 30 s")
	}
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	second := exec.CommandContext(testdaemon.Ctx(t, 60*time.Second), bin, ws, "demo")
	second.Stderr = os.Stderr
	out, err := second.Output()
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	var got []harness.Message
	var rest []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var m harness.Message
		if json.Unmarshal([]byte(line), &m) == nil && m.Role != "" {
			got = append(got, m)
		} else {
			rest = append(rest, line)
		}
	}
	if shape(got) != "user assistant[call_1] tool:call_1(interrupted)" || fmt.Sprint(rest) != "[resumed]" {
		t.Fatalf("restart printed %s then %v", shape(got), rest)
	}
}

func errorsIs(err error, r sessiond.Reason) bool { return err != nil && sessiond.ReasonOf(err) == r }
