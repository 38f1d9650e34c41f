package sessiond_test

import (
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
// (STORAGE_FULL) and a graceful stop (SHUTTING_DOWN). CORRUPT_DATABASE and STORAGE_UNAVAILABLE
// on a live SQLite daemon cannot be caused on demand: their mapping is tested in
// retryable_internal_test.go, a corrupt store at start in TestAutostartOnACorruptStoreSaysWhy.

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
