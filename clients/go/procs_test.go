package sessiond_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sessiond "github.com/claw-sessiond/claw-sessiond/clients/go"
	pb "github.com/claw-sessiond/claw-sessiond/clients/go/api/sessiondv1"
	"github.com/claw-sessiond/claw-sessiond/clients/go/internal/testdaemon"
)

// Helper processes: the test binary run again with GO_CLAW_HELPER set (a separate Go process
// with its own connection, killed for real by the tests).
func TestMain(m *testing.M) {
	if name := os.Getenv("GO_CLAW_HELPER"); name != "" {
		if err := runHelper(name, os.Args[len(os.Args)-3:]); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(runTests(m))
}

// shared is the daemon of the tests that can share one (each uses its own session ids).
var shared *testdaemon.Shared

func runTests(m *testing.M) int {
	var err error
	if shared, err = testdaemon.StartShared(); err != nil {
		fmt.Fprintln(os.Stderr, "cannot start the shared claw-sessiond (is .venv/bin first on PATH?):", err)
		return 1
	}
	defer shared.Close()
	return m.Run()
}

func runHelper(name string, args []string) error {
	ws, session, arg := args[0], args[1], args[2]
	c, err := sessiond.New(sessiond.WithWorkspace(ws), sessiond.WithAutostart(false))
	if err != nil {
		return err
	}
	defer c.Close()
	ctx := context.Background()
	switch name {
	case "writer": // arg "tag:n": n appends, one message each, in order
		tag, count, _ := strings.Cut(arg, ":")
		n, _ := strconv.Atoi(count)
		for i := range n {
			if _, err := c.Append(ctx, &pb.AppendRequest{SessionId: session, Workdir: ws,
				Messages: []*pb.Message{sessiond.User(fmt.Sprintf("%s-%d", tag, i))}}); err != nil {
				return err
			}
		}
		return nil
	case "midtool", "stopped": // attach, append a tool call of the run, say READY
		run, err := c.Attach(ctx, session, sessiond.WithLabel("helper"))
		if err != nil {
			return err
		}
		if _, err := c.Append(ctx, &pb.AppendRequest{SessionId: session, Workdir: ws, RunId: run.ID, Messages: []*pb.Message{
			sessiond.User("run it"), sessiond.Assistant("", sessiond.Call(arg, "bash", `{"cmd":"sleep"}`))}}); err != nil {
			return err
		}
		fmt.Printf("READY %v\n", run.PIDVerified)
		if name == "midtool" {
			select {} // the tool runs until the test kills this process
		}
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // the test stops and resumes us first
		if _, err := c.Append(ctx, &pb.AppendRequest{SessionId: session, Workdir: ws, RunId: run.ID,
			Messages: []*pb.Message{sessiond.ToolResult(arg, "real result")}}); err != nil {
			return err
		}
		_, err = run.End(ctx)
		return err
	}
	return fmt.Errorf("unknown helper %q", name)
}

type helper struct {
	cmd    *exec.Cmd
	out    *bufio.Reader
	stdin  io.WriteCloser
	exited chan struct{}
}

func startHelper(t *testing.T, name, ws, session, arg string) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", ws, session, arg)
	cmd.Env = append(os.Environ(), "GO_CLAW_HELPER="+name)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	h := &helper{cmd: cmd, out: bufio.NewReader(stdout), stdin: stdin, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(h.exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-h.exited
	})
	return h
}

// readLine reads the helper's next line within 20 s.
func (h *helper) readLine(t *testing.T) string {
	t.Helper()
	got := make(chan string, 1)
	go func() { line, _ := h.out.ReadString('\n'); got <- strings.TrimSpace(line) }()
	select {
	case line := <-got:
		return line
	case <-time.After(20 * time.Second):
		t.Fatal("the helper said nothing in 20 s")
		return ""
	}
}

func (h *helper) wait(t *testing.T) {
	t.Helper()
	select {
	case <-h.exited:
		if code := h.cmd.ProcessState.ExitCode(); code != 0 {
			t.Fatalf("helper exited with %d", code)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("helper still running after 60 s")
	}
}

// Three Go processes and a Python one append to one session at once: every message is there,
// and each writer's messages are in the order it wrote them.
func TestGoAndPythonProcessesShareOneSession(t *testing.T) {
	t.Parallel()
	ws := shared.Workspace // a session of its own on the shared daemon
	const n = 40
	var helpers []*helper
	for _, tag := range []string{"go1", "go2", "go3"} {
		helpers = append(helpers, startHelper(t, "writer", ws, "shared", fmt.Sprintf("%s:%d", tag, n)))
	}
	py := exec.Command(testdaemon.Python(t), "-c", `
import sys
from claw_sessiond_client import SessionClient, Message
ws, n = sys.argv[1], int(sys.argv[2])
with SessionClient(workspace=ws, autostart=False) as c:
    for i in range(n):
        c.append("shared", Message.user(f"py-{i}"), workdir=ws)
`, ws, strconv.Itoa(n))
	py.Stderr = os.Stderr
	if err := py.Run(); err != nil {
		t.Fatalf("the Python writer failed: %v", err)
	}
	for _, h := range helpers {
		h.wait(t)
	}
	c := connect(t, ws)
	loaded, err := c.Load(testdaemon.Ctx(t, 30*time.Second), &pb.LoadRequest{SessionId: "shared", Workdir: ws})
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded.Messages) != 4*n {
		t.Fatalf("%d messages stored, want %d", len(loaded.Messages), 4*n)
	}
	next := map[string]int{}
	for i, m := range loaded.Messages {
		tag, num, _ := strings.Cut(m.GetContent(), "-")
		k, _ := strconv.Atoi(num)
		if k != next[tag] || m.GetPosition() != int64(i+1) {
			t.Fatalf("message %d is %q at position %d; want %s-%d", i, m.GetContent(), m.GetPosition(), tag, next[tag])
		}
		next[tag]++
	}
}

// A Go process killed with SIGKILL in the middle of a tool call: its run ends with it, and the
// next Load (by Python here) repairs the call with a synthetic result right after it.
func TestGoProcessKilledMidToolIsRepairedByPython(t *testing.T) {
	t.Parallel()
	ws := shared.Workspace // a session of its own on the shared daemon
	h := startHelper(t, "midtool", ws, "crash", "call_9")
	if line := h.readLine(t); line != "READY true" {
		t.Fatalf("helper: %q (want READY with its pid verified)", line)
	}
	c := connect(t, ws)
	ctx := testdaemon.Ctx(t, 30*time.Second)
	live, err := c.Load(ctx, &pb.LoadRequest{SessionId: "crash", Workdir: ws})
	if err != nil || len(live.InFlight) != 1 || len(live.Repairs) != 0 {
		t.Fatalf("while the helper lives its call is in flight: %v %v", live, err)
	}
	if err := h.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-h.exited
	out, err := exec.Command(testdaemon.Python(t), "-c", `
import sys
from claw_sessiond_client import SessionClient
with SessionClient(workspace=sys.argv[1], autostart=False) as c:
    s = c.load("crash", workdir=sys.argv[1])
    print(" ".join(f"{m.role}:{m.tool_call_id}:{m.synthetic_reason}" for m in s.messages))
`, ws).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v %s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "user:: assistant:: tool:call_9:interrupted" {
		t.Fatalf("Python's Load after the kill: %q", got)
	}
	after, err := c.Load(ctx, &pb.LoadRequest{SessionId: "crash", Workdir: ws})
	if err != nil || roles(after.Messages) != "USER ASSISTANT TOOL:call_9(synthetic)" {
		t.Fatalf("Go sees %s, %v", roles(after.Messages), err)
	}
}

// A Go process stopped with SIGSTOP mid-tool keeps its run (no Load repairs its call), and once
// resumed stores its real result.
func TestStoppedGoProcessKeepsItsRun(t *testing.T) {
	t.Parallel()
	ws := shared.Workspace // a session of its own on the shared daemon
	h := startHelper(t, "stopped", ws, "blocked", "call_b")
	if line := h.readLine(t); !strings.HasPrefix(line, "READY") {
		t.Fatalf("helper: %q", line)
	}
	if err := h.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	c := connect(t, ws)
	ctx := testdaemon.Ctx(t, 30*time.Second)
	for range 3 {
		time.Sleep(time.Second)
		loaded, err := c.Load(ctx, &pb.LoadRequest{SessionId: "blocked", Workdir: ws})
		if err != nil || len(loaded.Repairs) != 0 || len(loaded.InFlight) != 1 {
			t.Fatalf("a stopped process lost its run: %v %v", loaded, err)
		}
	}
	if err := h.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(h.stdin, "go on")
	h.wait(t)
	loaded, err := c.Load(ctx, &pb.LoadRequest{SessionId: "blocked", Workdir: ws})
	if err != nil || roles(loaded.Messages) != "USER ASSISTANT TOOL:call_b" || loaded.Messages[2].GetContent() != "real result" {
		t.Fatalf("after resuming: %s %v", roles(loaded.Messages), err)
	}
}

// In one process: a goroutine blocked in a long tool call while others run (the Go scheduler
// busy with them) keeps the run; another client's Loads repair nothing; its result is stored.
func TestBlockedGoroutineKeepsItsRun(t *testing.T) {
	t.Parallel()
	ws := shared.Workspace // a session of its own on the shared daemon
	c := connect(t, ws)
	observer := connect(t, ws)
	ctx := testdaemon.Ctx(t, 30*time.Second)
	run, err := c.Attach(ctx, "tool", sessiond.WithLabel("test"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Append(ctx, &pb.AppendRequest{SessionId: "tool", Workdir: ws, RunId: run.ID,
		Messages: []*pb.Message{sessiond.Assistant("", sessiond.Call("c1", "bash", "{}"))}}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	stop := time.Now().Add(2 * time.Second)
	for range 4 { // busy goroutines, more than the machine's cores
		go func() {
			for time.Now().Before(stop) {
			}
		}()
	}
	go func() { // the tool: blocked, not calling the client
		time.Sleep(3 * time.Second)
		close(done)
	}()
	for i := 0; ; i++ {
		select {
		case <-done:
		default:
			loaded, err := observer.Load(ctx, &pb.LoadRequest{SessionId: "tool", Workdir: ws})
			if err != nil || len(loaded.Repairs) != 0 {
				t.Fatalf("load %d repaired a live run's call: %v %v", i, loaded, err)
			}
			time.Sleep(200 * time.Millisecond)
			continue
		}
		break
	}
	if _, err := c.Append(ctx, &pb.AppendRequest{SessionId: "tool", Workdir: ws, RunId: run.ID,
		Messages: []*pb.Message{sessiond.ToolResult("c1", "done")}}); err != nil {
		t.Fatalf("the run was lost while its goroutine was blocked: %v", err)
	}
	if _, err := run.End(ctx); err != nil {
		t.Fatal(err)
	}
	// After EndRun, calls naming the run are UNKNOWN_RUN with cause "ended".
	_, err = c.Append(ctx, &pb.AppendRequest{SessionId: "tool", Workdir: ws, RunId: run.ID,
		Messages: []*pb.Message{sessiond.User("late")}})
	var e *sessiond.Error
	if !errorsAs(err, &e) || e.Reason != sessiond.ReasonUnknownRun || e.Metadata["cause"] != "ended" {
		t.Fatalf("append to an ended run: %v", err)
	}
	select {
	case <-run.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the run's stream did not end")
	}
}
