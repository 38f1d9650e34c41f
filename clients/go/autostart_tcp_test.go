package sessiond_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sessiond "github.com/claw-sessiond/claw-sessiond/clients/go"
	pb "github.com/claw-sessiond/claw-sessiond/clients/go/api/sessiondv1"
	"github.com/claw-sessiond/claw-sessiond/clients/go/internal/testdaemon"
)

// stopPID ends a daemon the client started (found by its endpoint file) at the test's end.
func stopPID(t *testing.T, pid int) { t.Cleanup(func() { stopNow(pid) }) }

// stopNow: SIGTERM, then SIGKILL after 10 s.
func stopNow(pid int) {
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for i := 0; i < 200 && syscall.Kill(pid, 0) == nil; i++ {
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// The first call starts a daemon with the documented files (.claw/ mode 0700, the log, the lock
// with its pid); after kill -9 of that daemon the next call starts another.
func TestAutostartAndAgainAfterTheDaemonIsKilled(t *testing.T) {
	t.Parallel()
	ws := testdaemon.Workspace(t)
	c, err := sessiond.New(sessiond.WithWorkspace(ws))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testdaemon.Ctx(t, 90*time.Second)
	if _, err := c.Append(ctx, &pb.AppendRequest{SessionId: "a", Workdir: ws, Messages: []*pb.Message{sessiond.User("one")}}); err != nil {
		t.Fatal(err)
	}
	ep := sessiond.ReadEndpoint(ws)
	if ep == nil {
		t.Fatal("no endpoint file after auto-start")
	}
	stopPID(t, ep.PID)
	fi, err := os.Stat(filepath.Join(ws, ".claw"))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf(".claw: %v %v", fi, err)
	}
	for _, name := range []string{"sessiond.log", "sessiond.lock", "sessiond.stderr"} {
		if _, err := os.Lstat(filepath.Join(ws, ".claw", name)); err != nil {
			t.Fatalf("auto-start left no %s: %v", name, err)
		}
	}
	if err := syscall.Kill(ep.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 200 && syscall.Kill(ep.PID, 0) == nil; i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := c.Append(ctx, &pb.AppendRequest{SessionId: "a", Workdir: ws, Messages: []*pb.Message{sessiond.User("two")}}); err != nil {
		t.Fatalf("after kill -9 of the daemon: %v", err)
	}
	again := sessiond.ReadEndpoint(ws)
	if again == nil || again.PID == ep.PID {
		t.Fatalf("no new daemon: %v", again)
	}
	stopPID(t, again.PID)
	loaded, err := c.Load(ctx, &pb.LoadRequest{SessionId: "a", Workdir: ws})
	if err != nil || len(loaded.Messages) != 2 {
		t.Fatalf("%v %v", loaded, err)
	}
}

// A corrupt store: auto-start gives up at once with the daemon's own reason, not a hang.
func TestAutostartOnACorruptStoreSaysWhy(t *testing.T) {
	t.Parallel()
	ws := testdaemon.Workspace(t)
	if err := os.Mkdir(filepath.Join(ws, ".claw"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".claw", "sessions.db"), []byte("this is not a database, just text"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := sessiond.New(sessiond.WithWorkspace(ws))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_, err = c.Load(testdaemon.Ctx(t, 60*time.Second), &pb.LoadRequest{SessionId: "x", Workdir: ws})
	var e *sessiond.Error
	if !errors.As(err, &e) || e.Reason != sessiond.ReasonDaemonUnavailable || !contains(e.Message, "did not come up", "last log line", "sessions.db") {
		t.Fatalf("corrupt store: %v", err)
	}
	if time.Since(start) > 20*time.Second {
		t.Fatalf("gave up only after %s", time.Since(start))
	}
	t.Log(e.Message)
}

func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !stringsContains(s, p) {
			return false
		}
	}
	return true
}

// --tcp: TLS pinned to .claw/tcp-cert.pem and the token of .claw/tcp-token, read from the named
// workspace; a wrong token is UNAUTHENTICATED, another certificate UNTRUSTED_PEER.
func TestTCPWithTheWorkspacesCertificateAndToken(t *testing.T) {
	t.Parallel()
	ws := testdaemon.Workspace(t)
	d := testdaemon.Start(t, ws, "--tcp", "127.0.0.1:0")
	ctx := testdaemon.Ctx(t, 30*time.Second)
	c, err := sessiond.New(sessiond.WithTCP(d.TCP, "", ""), sessiond.WithWorkspace(ws))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Append(ctx, &pb.AppendRequest{SessionId: "t", Workdir: ws, Messages: []*pb.Message{sessiond.User("over tcp")}}); err != nil {
		t.Fatal(err)
	}
	bad, err := sessiond.New(sessiond.WithTCP(d.TCP, filepath.Join(ws, ".claw", "tcp-cert.pem"), "not-the-token"))
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if _, err := bad.GetStats(ctx); !errors.Is(err, sessiond.ReasonUnauthenticated) {
		t.Fatalf("wrong token: %v", err)
	}
	other := filepath.Join(ws, "other.pem")
	writeSelfSigned(t, other)
	impostor, err := sessiond.New(sessiond.WithTCP(d.TCP, other, "x"), sessiond.WithRetryWindow(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer impostor.Close()
	if _, err := impostor.GetStats(ctx); !errors.Is(err, sessiond.ReasonUntrustedPeer) {
		t.Fatalf("another certificate: %v", err)
	}
}

func writeSelfSigned(t *testing.T, path string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "claw-sessiond"},
		DNSNames: []string{"claw-sessiond"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A writer appending while its daemon is killed with SIGKILL at arbitrary moments (by another
// goroutine, so a kill may land in the middle of a request): the client starts another daemon and
// retries with the same request ids, so every append is stored exactly once, in order.
func TestAppendsSurviveADaemonKilledMidStream(t *testing.T) {
	t.Parallel()
	ws := testdaemon.Workspace(t)
	c, err := sessiond.New(sessiond.WithWorkspace(ws), sessiond.WithRetryWindow(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	t.Cleanup(func() { // the daemon the client started last, whatever happened
		if ep := sessiond.ReadEndpoint(ws); ep != nil {
			stopNow(ep.PID)
		}
	})
	ctx := testdaemon.Ctx(t, 120*time.Second)
	const n = 120
	var written atomic.Int64
	killerDone := make(chan int)
	go func() {
		killed := 0
		for _, at := range []int64{40, 80} {
			for i := 0; i < 1200 && written.Load() < at; i++ {
				time.Sleep(10 * time.Millisecond)
			}
			if ep := sessiond.ReadEndpoint(ws); ep != nil && syscall.Kill(ep.PID, syscall.SIGKILL) == nil {
				killed++
			}
		}
		killerDone <- killed
	}()
	for i := range n {
		if _, err := c.Append(ctx, &pb.AppendRequest{SessionId: "k", Workdir: ws,
			Messages: []*pb.Message{sessiond.User(fmt.Sprint(i))}}); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		written.Add(1)
	}
	killed := <-killerDone
	if killed != 2 {
		t.Fatalf("the daemon was killed %d times, want 2", killed)
	}
	loaded, err := c.Load(ctx, &pb.LoadRequest{SessionId: "k", Workdir: ws})
	if err != nil || len(loaded.Messages) != n {
		t.Fatalf("%d stored after 2 kills, want %d: %v", len(loaded.Messages), n, err)
	}
	for i, m := range loaded.Messages {
		if m.GetContent() != fmt.Sprint(i) {
			t.Fatalf("message %d is %q", i, m.GetContent())
		}
	}
}

// A TCP client follows a daemon restarted on the same port with a new certificate and token
// (both re-read from the named workspace after the failure).
func TestTCPClientFollowsARestartedDaemonsNewCertificate(t *testing.T) {
	t.Parallel()
	ws := testdaemon.Workspace(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	d := testdaemon.Start(t, ws, "--tcp", addr)
	c, err := sessiond.New(sessiond.WithTCP(addr, "", ""), sessiond.WithWorkspace(ws), sessiond.WithRetryWindow(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testdaemon.Ctx(t, 60*time.Second)
	if _, err := c.GetStats(ctx); err != nil {
		t.Fatal(err)
	}
	oldCert, _ := os.ReadFile(filepath.Join(ws, ".claw", "tcp-cert.pem"))
	d.Term()
	testdaemon.Start(t, ws, "--tcp", addr)
	newCert, _ := os.ReadFile(filepath.Join(ws, ".claw", "tcp-cert.pem"))
	if string(oldCert) == string(newCert) {
		t.Fatal("the restarted daemon kept its certificate")
	}
	if _, err := c.GetStats(ctx); err != nil {
		t.Fatalf("after the restart: %v", err)
	}
}
