package sessiond_test

import (
	"bufio"
	"errors"
	"fmt"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sessiond "github.com/claw-sessiond/claw-sessiond/clients/go"
	pb "github.com/claw-sessiond/claw-sessiond/clients/go/api/sessiondv1"
	"github.com/claw-sessiond/claw-sessiond/clients/go/internal/testdaemon"
	"google.golang.org/grpc/codes"
)

// The reasons a daemon in trouble sends, provoked for real from a live daemon: a full disk
// (STORAGE_FULL), a graceful stop (SHUTTING_DOWN), another process holding the database's write
// lock (STORAGE_UNAVAILABLE) and a database file overwritten under the daemon (CORRUPT_DATABASE).

// smallFS mounts a 4 MiB tmpfs for the test (root only, as tests/storage/sqlite/test_diskfull.py
// does); unmounted after the test's daemons are stopped.
func smallFS(t *testing.T) string {
	t.Helper()
	giveUp := t.Skipf
	if os.Getenv("CLAW_FULL") == "1" {
		giveUp = t.Fatalf // the full tier runs as root: a skip there hides a gap
	}
	if os.Geteuid() != 0 {
		giveUp("mounting a small tmpfs needs root")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=4m,mode=0755", "tmpfs", mnt).CombinedOutput(); err != nil {
		giveUp("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() {
		if exec.Command("umount", mnt).Run() != nil {
			_ = exec.Command("umount", "-l", mnt).Run()
		}
	})
	return mnt
}

// fill writes a file so that about leave bytes stay free on its file system.
func fill(t *testing.T, path string, leave int64) {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(filepath.Dir(path), &st); err != nil {
		t.Fatal(err)
	}
	size := max(0, int64(st.Bavail)*st.Frsize-leave)
	if err := os.WriteFile(path, make([]byte, size), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Appends on a full disk come back as STORAGE_FULL (RESOURCE_EXHAUSTED, not retryable); the
// acknowledged ones are all stored and readable; once space is freed, writes succeed again.
func TestStorageFullFromALiveDaemon(t *testing.T) {
	t.Parallel()
	mnt := smallFS(t)
	ws := filepath.Join(mnt, "ws")
	if err := os.Mkdir(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	testdaemon.Start(t, ws)
	c := connect(t, ws)
	ctx := testdaemon.Ctx(t, 60*time.Second)
	app := func(text, id string) error {
		_, err := c.Append(ctx, &pb.AppendRequest{SessionId: "full", Workdir: ws, RequestId: id,
			Messages: []*pb.Message{sessiond.User(text)}})
		return err
	}
	var acked []string
	for i := range 5 {
		text := fmt.Sprint("early ", i)
		if err := app(text, ""); err != nil {
			t.Fatal(err)
		}
		acked = append(acked, text)
	}
	filler := filepath.Join(mnt, "filler")
	fill(t, filler, 1536*1024)
	body := strings.Repeat("x", 16*1024)
	var full *sessiond.Error
	for i := 0; i < 400 && full == nil; i++ {
		text := fmt.Sprintf("%d %s", i, body)
		err := app(text, fmt.Sprint("full-", i))
		if err == nil {
			acked = append(acked, text)
		} else if !errors.As(err, &full) {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	if full == nil {
		t.Fatal("the disk never filled up (400 appends of 16 KiB on a 4 MiB tmpfs)")
	}
	if !errors.Is(full, sessiond.ReasonStorageFull) || full.Code != codes.ResourceExhausted || sessiond.IsRetryable(full) ||
		full.Message == "" {
		t.Fatalf("a full disk: %v (retryable %v)", full, sessiond.IsRetryable(full))
	}
	stored := func() []string {
		t.Helper()
		loaded, err := c.Load(ctx, &pb.LoadRequest{SessionId: "full", Workdir: ws})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range loaded.Messages {
			out = append(out, m.GetContent())
		}
		return out
	}
	if got := stored(); fmt.Sprint(got) != fmt.Sprint(acked) {
		t.Fatalf("on a full disk %d messages are stored, %d were acknowledged", len(got), len(acked))
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := app("after freeing space", "after-free"); err != nil {
		t.Fatalf("after freeing space: %v", err)
	}
	if got := stored(); fmt.Sprint(got) != fmt.Sprint(append(acked, "after freeing space")) {
		t.Fatalf("after freeing space %d messages are stored, want %d", len(got), len(acked)+1)
	}
}

// A Watch open as the daemon stops gracefully is ended with SHUTTING_DOWN (UNAVAILABLE,
// retryable); with no retry window the client hands it over rather than resuming.
func TestShuttingDownFromAGracefulStop(t *testing.T) {
	t.Parallel()
	ws := testdaemon.Workspace(t)
	d := testdaemon.Start(t, ws)
	c := connect(t, ws, sessiond.WithRetryWindow(0))
	ctx := testdaemon.Ctx(t, 60*time.Second)
	if _, err := c.Append(ctx, &pb.AppendRequest{SessionId: "stop", Workdir: ws,
		Messages: []*pb.Message{sessiond.User("one")}}); err != nil {
		t.Fatal(err)
	}
	next, stop := iter.Pull2(c.Watch(ctx, "stop", 0))
	defer stop()
	if ev, err, _ := next(); err != nil || ev.GetPosition() != 1 {
		t.Fatalf("%v %v", ev, err)
	}
	stopped := make(chan struct{})
	go func() { d.Term(); close(stopped) }()
	defer func() { <-stopped }()
	ev, err, ok := next()
	var e *sessiond.Error
	if !ok || ev != nil || !errors.As(err, &e) || !errors.Is(err, sessiond.ReasonShuttingDown) ||
		e.Code != codes.Unavailable || !sessiond.IsRetryable(err) {
		t.Fatalf("the Watch open at a graceful stop: %v %v", ev, err)
	}
}

// Another process holding the SQLite write lock longer than --busy-timeout-ms: appends come back
// as STORAGE_UNAVAILABLE (UNAVAILABLE, retryable) and write nothing; a client with a retry window
// gets its append through once the lock is released, and the same request id again writes once.
func TestStorageUnavailableWhileAnotherProcessHoldsTheWriteLock(t *testing.T) {
	t.Parallel()
	ws := testdaemon.Workspace(t)
	testdaemon.Start(t, ws, "--busy-timeout-ms", "200")
	once := connect(t, ws, sessiond.WithRetryWindow(0))
	patient := connect(t, ws, sessiond.WithRetryWindow(30*time.Second))
	ctx := testdaemon.Ctx(t, 60*time.Second)
	req := func() *pb.AppendRequest {
		return &pb.AppendRequest{SessionId: "busy", Workdir: ws, RequestId: "busy-1", Messages: []*pb.Message{sessiond.User("b")}}
	}
	if _, err := once.Append(ctx, &pb.AppendRequest{SessionId: "busy", Workdir: ws, Messages: []*pb.Message{sessiond.User("a")}}); err != nil {
		t.Fatal(err)
	}
	holder := exec.Command(testdaemon.Python(t), "-c", "import sqlite3, sys\n"+
		"c = sqlite3.connect(sys.argv[1], isolation_level=None)\nc.execute('BEGIN EXCLUSIVE')\nprint('LOCKED', flush=True)\n"+
		"sys.stdin.readline()\nc.execute('ROLLBACK')\n", filepath.Join(ws, ".claw", "sessions.db"))
	release, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "LOCKED\n" {
		t.Fatalf("the lock holder said %q", line)
	}
	_, err = once.Append(ctx, req())
	var e *sessiond.Error
	if !errors.As(err, &e) || !errors.Is(err, sessiond.ReasonStorageUnavailable) || e.Code != codes.Unavailable ||
		!sessiond.IsRetryable(err) {
		t.Fatalf("an append while another process holds the write lock: %v", err)
	}
	time.AfterFunc(time.Second, func() { _, _ = release.Write([]byte("\n")) })
	first, err := patient.Append(ctx, req())
	if err != nil || first.GetReplayed() {
		t.Fatalf("the retried append after the lock was released: %v %v", first, err)
	}
	again, err := once.Append(ctx, req())
	if err != nil || !again.GetReplayed() || again.GetLastPosition() != first.GetLastPosition() {
		t.Fatalf("the same request id again: %v %v", again, err)
	}
	loaded, err := once.Load(ctx, &pb.LoadRequest{SessionId: "busy", Workdir: ws})
	if err != nil || len(loaded.Messages) != 2 {
		t.Fatalf("stored after the lock: %v %v", loaded, err)
	}
}

// The database file overwritten under a running daemon (its pages after the first): reads of
// what it holds come back as CORRUPT_DATABASE (UNAVAILABLE, not retryable: a retry cannot help).
func TestCorruptDatabaseFromALiveDaemon(t *testing.T) {
	t.Parallel()
	ws := testdaemon.Workspace(t)
	d := testdaemon.Start(t, ws)
	c := connect(t, ws, sessiond.WithRetryWindow(0))
	ctx := testdaemon.Ctx(t, 60*time.Second)
	const sessions = 20
	for i := range sessions {
		if _, err := c.Append(ctx, &pb.AppendRequest{SessionId: fmt.Sprint("c", i), Workdir: ws,
			Messages: []*pb.Message{sessiond.User(strings.Repeat("y", 8000))}}); err != nil {
			t.Fatal(err)
		}
	}
	d.Term() // the stop checkpoints: everything is in sessions.db, the WAL is empty
	testdaemon.Start(t, ws)
	db := filepath.Join(ws, ".claw", "sessions.db")
	f, err := os.OpenFile(db, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	junk := []byte(strings.Repeat("\xde\xad\xbe\xef", 1024))
	for off := int64(4096); off < st.Size(); off += 4096 {
		if _, err := f.WriteAt(junk, off); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	corrupt := 0
	for i := range sessions {
		_, err := c.Load(ctx, &pb.LoadRequest{SessionId: fmt.Sprint("c", i), Workdir: ws})
		if err == nil {
			continue
		}
		var e *sessiond.Error
		if !errors.As(err, &e) || !errors.Is(err, sessiond.ReasonCorruptDatabase) || e.Code != codes.Unavailable ||
			sessiond.IsRetryable(err) {
			t.Fatalf("load c%d of an overwritten database: %v", i, err)
		}
		corrupt++
	}
	if corrupt == 0 {
		t.Fatal("no Load of the overwritten database said CORRUPT_DATABASE")
	}
}
