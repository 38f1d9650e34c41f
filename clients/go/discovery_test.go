package sessiond_test

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sessiond "github.com/claw-sessiond/claw-sessiond/clients/go"
	"github.com/claw-sessiond/claw-sessiond/clients/go/internal/testdaemon"
)

const otherUID = 65534 // nobody

// A workspace reached through a symbolic link, and from a subfolder, finds the one daemon.
func TestDiscoveryThroughASymlinkAndFromASubfolder(t *testing.T) {
	ws := testdaemon.Workspace(t)
	testdaemon.Start(t, ws)
	link := filepath.Join(testdaemon.Workspace(t), "link")
	if err := os.Symlink(ws, link); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(ws, "src", "pkg")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := testdaemon.Ctx(t, 30*time.Second)
	for _, start := range []string{link, filepath.Join(link, "src", "pkg"), sub} {
		c := connect(t, start)
		stats, err := c.GetStats(ctx)
		if err != nil {
			t.Fatalf("from %s: %v", start, err)
		}
		if ep := sessiond.ReadEndpoint(ws); ep == nil || int64(ep.PID) != stats.GetPid() {
			t.Fatalf("from %s: reached pid %d, not the workspace's daemon", start, stats.GetPid())
		}
	}
	// The current folder, without a workspace argument.
	t.Chdir(sub)
	c, err := sessiond.New(sessiond.WithAutostart(false))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Workspace() != ws {
		t.Fatalf("workspace found from %s: %s", sub, c.Workspace())
	}
	if _, err := c.GetStats(ctx); err != nil {
		t.Fatal(err)
	}
}

// A deep workspace's daemon listens under its XDG_RUNTIME_DIR: a client with another
// XDG_RUNTIME_DIR finds it through the endpoint file, and one with the same value finds it by the
// path rule alone (endpoint file removed), so both rules agree with the daemon's.
func TestDiscoveryWithXDGRuntimeDirAndTheEndpointFile(t *testing.T) {
	base := testdaemon.Workspace(t)
	ws := filepath.Join(base, strings.Repeat("deep-folder-", 8))
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	var runs []string
	for range 2 { // short: the hashed socket path must fit in 107 bytes under it
		d, err := os.MkdirTemp("/tmp", "xdg")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		runs = append(runs, d)
	}
	runA, runB := runs[0], runs[1]
	d := testdaemon.StartEnv(t, ws, []string{"XDG_RUNTIME_DIR=" + runA})
	if !strings.HasPrefix(d.Socket, runA+"/claw-sessiond/") {
		t.Fatalf("the daemon listens at %s, not under %s", d.Socket, runA)
	}
	ctx := testdaemon.Ctx(t, 30*time.Second)
	t.Setenv("XDG_RUNTIME_DIR", runB)
	if _, err := connect(t, ws).GetStats(ctx); err != nil {
		t.Fatalf("through the endpoint file with another XDG_RUNTIME_DIR: %v", err)
	}
	if err := os.Remove(filepath.Join(ws, ".claw", "endpoint.json")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_RUNTIME_DIR", runA)
	if _, err := connect(t, ws).GetStats(ctx); err != nil {
		t.Fatalf("by the path rule: %v", err)
	}
}

// Another user's .claw above the starting folder stops discovery before anything is sent; root
// naming that very folder may use it.
func TestAnotherUsersClawAboveIsRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("this test needs root (it makes a folder owned by another uid); CI runs as root")
	}
	shared := testdaemon.Workspace(t)
	if err := os.Chmod(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	claw := filepath.Join(shared, ".claw")
	sub := filepath.Join(shared, "src")
	for _, dir := range []string{claw, sub} {
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(claw, otherUID, otherUID); err != nil {
		t.Fatal(err)
	}
	_, err := sessiond.New(sessiond.WithWorkspace(sub))
	var e *sessiond.Error
	if !errors.As(err, &e) || e.Reason != sessiond.ReasonUntrustedPeer ||
		!strings.Contains(e.Message, claw) || !strings.Contains(e.Message, "uid 65534") {
		t.Fatalf("want UNTRUSTED_PEER naming %s and its owner: %v", claw, err)
	}
	t.Chdir(sub)
	if _, err := sessiond.New(); !errors.Is(err, sessiond.ReasonUntrustedPeer) {
		t.Fatalf("from the current folder: %v", err)
	}
	c, err := sessiond.New(sessiond.WithWorkspace(shared), sessiond.WithAutostart(false))
	if err != nil || c.Workspace() != shared {
		t.Fatalf("root naming the folder itself: %v", err)
	}
	c.Close()
}

// The process listening on the socket runs as another user: refused (SO_PEERCRED) before
// anything is sent; so is a socket folder others can write in.
func TestPeerCheckRefusesAnotherUsersListener(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Fatal("this test needs root (a listener running as another uid); CI runs as root")
	}
	dir := testdaemon.Workspace(t)
	sock := filepath.Join(dir, "s.sock")
	// Bound by root, listening as uid 65534: SO_PEERCRED reports the listener's credentials.
	listener := exec.Command(testdaemon.Python(t), "-c", `
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
os.setresgid(65534, 65534, 65534); os.setresuid(65534, 65534, 65534)
s.listen(8)
print("LISTENING", flush=True)
conn, _ = s.accept()
conn.settimeout(3)
n = 0
try:
    while (chunk := conn.recv(65536)):
        n += len(chunk)
except OSError:
    pass
print(f"RECEIVED {n}", flush=True)
`, sock)
	out, err := listener.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := listener.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = listener.Process.Kill(); _ = listener.Wait() })
	lines := bufio.NewReader(out)
	if line, _ := lines.ReadString('\n'); line != "LISTENING\n" {
		t.Fatalf("the listener did not start: %q", line)
	}
	if err := os.Chmod(dir, 0o733); err != nil {
		t.Fatal(err)
	}
	ctx := testdaemon.Ctx(t, 30*time.Second)
	c := connectSocket(t, sock)
	// The folder is writable by others (0733): refused before connecting.
	if _, err := c.GetStats(ctx); !errors.Is(err, sessiond.ReasonUntrustedPeer) || !strings.Contains(err.Error(), "writable by group or others") {
		t.Fatalf("a folder others can write in: %v", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetStats(ctx)
	if !errors.Is(err, sessiond.ReasonUntrustedPeer) || !strings.Contains(err.Error(), "runs as uid 65534") ||
		sessiond.IsRetryable(err) {
		t.Fatalf("another user's listener: %v", err)
	}
	c.Close()
	if line, _ := lines.ReadString('\n'); line != "RECEIVED 0\n" { // bounded: the listener's 3 s timeout
		t.Fatalf("the listener says %q: the client sent bytes to another user's listener", line)
	}
}

func connectSocket(t *testing.T, sock string) *sessiond.Client {
	t.Helper()
	c, err := sessiond.New(sessiond.WithSocket(sock), sessiond.WithRetryWindow(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
