// Package testdaemon starts real claw-sessiond daemons for the Go client's tests: the
// claw-sessiond command named by $CLAW_GO_DAEMON_BIN, else the one on PATH (the test runner
// tests/e2e/test_go_client.py puts the project's .venv/bin first). A test fails, never skips,
// without one.
package testdaemon

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Daemon is one daemon process serving a workspace.
type Daemon struct {
	Workspace string
	Socket    string
	TCP       string
	Cmd       *exec.Cmd
	exited    chan struct{}
}

// Bin is the claw-sessiond command.
func Bin(t testing.TB) string {
	if bin := os.Getenv("CLAW_GO_DAEMON_BIN"); bin != "" {
		return bin
	}
	bin, err := exec.LookPath("claw-sessiond")
	if err != nil {
		t.Fatalf("no claw-sessiond on PATH and no $CLAW_GO_DAEMON_BIN: run these tests with the project's "+
			".venv/bin first on PATH (tests/e2e/test_go_client.py does): %v", err)
	}
	return bin
}

// Python is an interpreter with claw_sessiond_client ($CLAW_PYTHON, else python3 beside claw-sessiond).
func Python(t testing.TB) string {
	if py := os.Getenv("CLAW_PYTHON"); py != "" {
		return py
	}
	return filepath.Join(filepath.Dir(Bin(t)), "python")
}

// Workspace makes a fresh workspace folder (resolved: no symbolic links in its path).
func Workspace(t testing.TB) string {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Start runs `claw-sessiond serve --workspace ws args...` and waits (at most 30 s) until its
// endpoint file names it; the test's cleanup stops it by pid (SIGTERM, then SIGKILL after 10 s).
func Start(t testing.TB, ws string, args ...string) *Daemon {
	t.Helper()
	return StartEnv(t, ws, nil, args...)
}

// StartEnv is Start with variables added to the daemon's environment.
func StartEnv(t testing.TB, ws string, env []string, args ...string) *Daemon {
	t.Helper()
	argv := append([]string{"serve", "--workspace", ws, "--log-level", "info",
		"--log-file", filepath.Join(ws, "daemon.log")}, args...)
	cmd := exec.Command(Bin(t), argv...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { Stop(cmd, exited) })
	d := &Daemon{Workspace: ws, Cmd: cmd, exited: exited}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			t.Fatalf("claw-sessiond serve --workspace %s exited at start: %v", ws, cmd.ProcessState)
		default:
		}
		var ep struct {
			Socket string  `json:"socket"`
			PID    int     `json:"pid"`
			TCP    *string `json:"tcp"`
		}
		if data, err := os.ReadFile(filepath.Join(ws, ".claw", "endpoint.json")); err == nil &&
			json.Unmarshal(data, &ep) == nil && ep.PID == cmd.Process.Pid {
			d.Socket = ep.Socket
			if ep.TCP != nil {
				d.TCP = *ep.TCP
			}
			return d
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("claw-sessiond for %s wrote no endpoint file in 30 s", ws)
	return nil
}

// Shared is one daemon for the tests of a package that can share it (distinct session ids),
// started by TestMain with StartShared and stopped there after the tests.
type Shared struct {
	Workspace string
	stop      func()
}

// StartShared starts a daemon in a fresh folder (removed by Close) and waits for its endpoint file.
func StartShared() (*Shared, error) {
	dir, err := os.MkdirTemp("", "claw-go-shared")
	if err != nil {
		return nil, err
	}
	ws, _ := filepath.EvalSymlinks(dir)
	bin := os.Getenv("CLAW_GO_DAEMON_BIN")
	if bin == "" {
		if bin, err = exec.LookPath("claw-sessiond"); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(bin, "serve", "--workspace", ws, "--log-level", "warning")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	sh := &Shared{Workspace: ws, stop: func() { Stop(cmd, exited); _ = os.RemoveAll(dir) }}
	for i := 0; i < 600; i++ {
		var ep struct {
			PID int `json:"pid"`
		}
		if data, err := os.ReadFile(filepath.Join(ws, ".claw", "endpoint.json")); err == nil &&
			json.Unmarshal(data, &ep) == nil && ep.PID == cmd.Process.Pid {
			return sh, nil
		}
		select {
		case <-exited:
			sh.stop()
			return nil, os.ErrProcessDone
		case <-time.After(50 * time.Millisecond):
		}
	}
	sh.stop()
	return nil, os.ErrDeadlineExceeded
}

// Close stops the shared daemon (SIGTERM, SIGKILL after 10 s) and removes its folder.
func (s *Shared) Close() { s.stop() }

// Stop ends a process by pid: SIGTERM, then SIGKILL after 10 s.
func Stop(cmd *exec.Cmd, exited <-chan struct{}) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
}

// Kill9 kills the daemon with SIGKILL and waits for it to be gone.
func (d *Daemon) Kill9(t testing.TB) {
	_ = d.Cmd.Process.Kill()
	select {
	case <-d.exited:
	case <-time.After(10 * time.Second):
		t.Fatalf("daemon %d still there 10 s after SIGKILL", d.Cmd.Process.Pid)
	}
}

// Log is the daemon's log so far.
func (d *Daemon) Log() string {
	data, _ := os.ReadFile(filepath.Join(d.Workspace, "daemon.log"))
	return string(data)
}

// Term stops the daemon gracefully (SIGTERM) and waits for it.
func (d *Daemon) Term() { Stop(d.Cmd, d.exited) }

// Ctx is a context bounded by d (and by the test's end).
func Ctx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
