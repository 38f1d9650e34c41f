package sessiond_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	sessiond "github.com/claw-sessiond/claw-sessiond/clients/go"
	pb "github.com/claw-sessiond/claw-sessiond/clients/go/api/sessiondv1"
	"github.com/claw-sessiond/claw-sessiond/clients/go/internal/testdaemon"
)

// benchWorkspace is $CLAW_BENCH_WORKSPACE (a daemon bench/go-client started, shared with the
// Python rows of the same sitting), else a daemon of the benchmark's own.
func benchWorkspace(b *testing.B) string {
	if ws := os.Getenv("CLAW_BENCH_WORKSPACE"); ws != "" {
		return ws
	}
	ws := testdaemon.Workspace(b)
	testdaemon.Start(b, ws)
	return ws
}

// BenchmarkAppend: one unary Append of one user message, serial (the Python sync client's
// "serial Append" row).
func BenchmarkAppend(b *testing.B) {
	ws := benchWorkspace(b)
	c, err := sessiond.New(sessiond.WithWorkspace(ws), sessiond.WithAutostart(false))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := testdaemon.Ctx(b, 10*time.Minute)
	session := fmt.Sprintf("go-append-%d", time.Now().UnixNano())
	msgs := []*pb.Message{sessiond.User("hello from the benchmark")}
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.Append(ctx, &pb.AppendRequest{SessionId: session, Workdir: ws, Messages: msgs}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoad: Load of a session of 1,000 messages of 200 bytes.
func BenchmarkLoad(b *testing.B) {
	ws := benchWorkspace(b)
	c, err := sessiond.New(sessiond.WithWorkspace(ws), sessiond.WithAutostart(false))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := testdaemon.Ctx(b, 10*time.Minute)
	session := "bench-load-1000"
	loaded, err := c.Load(ctx, &pb.LoadRequest{SessionId: session, Workdir: ws})
	if err != nil {
		b.Fatal(err)
	}
	for n := len(loaded.Messages); n < 1000; n += 100 {
		batch := make([]*pb.Message, 100)
		for i := range batch {
			batch[i] = sessiond.User(fmt.Sprintf("%0200d", n+i))
		}
		if _, err := c.Append(ctx, &pb.AppendRequest{SessionId: session, Workdir: ws, Messages: batch}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		got, err := c.Load(ctx, &pb.LoadRequest{SessionId: session, Workdir: ws})
		if err != nil || len(got.Messages) != 1000 {
			b.Fatalf("%v (%d messages)", err, len(got.Messages))
		}
	}
}
