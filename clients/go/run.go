package sessiond

import (
	"context"
	"os"
	"sync"
	"time"

	pb "github.com/claw-sessiond/claw-sessiond/clients/go/api/sessiondv1"
)

// Run is a live run: "this process is running this session" (docs/PROTOCOL.md "Runs"). Tool
// calls appended with its ID (AppendRequest.RunId) are in flight while it is live, and no Load
// repairs them.
//
// Its liveness is the open Attach stream, held by the gRPC transport's own goroutines and the
// kernel's socket: on the Unix socket the daemon sends no pings and times none out, so a
// goroutine blocked in a long tool call (or the whole process stopped with SIGSTOP) keeps the
// run, and a killed process loses it at once. Pings (WithPingTimeout) are the only part that
// depends on this process being scheduled; they are off by default.
type Run struct {
	ID          string
	SessionID   string
	PIDVerified bool
	// LeaseSeconds: over --tcp, the longest the connection may go without answering the
	// daemon's HTTP/2 pings (0 on the Unix socket).
	LeaseSeconds       int64
	PingTimeoutSeconds int64

	c      *Client
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	err    error
}

// AttachOption configures Attach.
type AttachOption func(*pb.AttachRequest)

// WithLabel sets the run's free-form label (for example "repl").
func WithLabel(label string) AttachOption { return func(r *pb.AttachRequest) { r.Label = label } }

// WithPingTimeout asks the daemon to end the run when no PingRun or Append naming it arrives
// for d (whole seconds, 1 s to 24 h); the Run then pings three times per bound.
func WithPingTimeout(d time.Duration) AttachOption {
	return func(r *pb.AttachRequest) { r.PingTimeoutSeconds = int64(d / time.Second) }
}

// Attach starts a run of sessionID for this process (its pid is declared and, on the Unix
// socket, verified by the daemon). ctx bounds the attaching only; the run lasts until End (or
// Close of the client, or this process's exit). A second run of one session is refused with
// ReasonRunAlreadyOwned (metadata run_id, pid).
func (c *Client) Attach(ctx context.Context, sessionID string, opts ...AttachOption) (*Run, error) {
	req := &pb.AttachRequest{SessionId: sessionID, Pid: int64(os.Getpid())}
	for _, o := range opts {
		o(req)
	}
	r := c.newRetrier()
	for {
		stub, conn, err := c.stub()
		if err != nil {
			return nil, wrap(err)
		}
		streamCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		stream, err := stub.Attach(streamCtx, req)
		var first *pb.AttachResponse
		if err == nil {
			first, err = recvFirst(ctx, stream.Recv)
		}
		if err == nil {
			if first.GetRunId() == "" {
				cancel()
				return nil, malformed("an Attach stream whose first message has no run id")
			}
			run := &Run{ID: first.GetRunId(), SessionID: sessionID, PIDVerified: first.GetPidVerified(),
				LeaseSeconds: first.GetLeaseSeconds(), PingTimeoutSeconds: first.GetPingTimeoutSeconds(),
				c: c, cancel: cancel, done: make(chan struct{})}
			go run.hold(stream.Recv)
			if run.PingTimeoutSeconds > 0 {
				go run.ping(time.Duration(run.PingTimeoutSeconds) * time.Second / 3)
			}
			return run, nil
		}
		cancel()
		if final := r.again(ctx, conn, err, true); final != nil {
			return nil, final
		}
	}
}

// recvFirst waits for the stream's first message, or ctx.
func recvFirst(ctx context.Context, recv func() (*pb.AttachResponse, error)) (*pb.AttachResponse, error) {
	type got struct {
		m   *pb.AttachResponse
		err error
	}
	ch := make(chan got, 1)
	go func() { m, err := recv(); ch <- got{m, err} }()
	select {
	case g := <-ch:
		return g.m, g.err
	case <-ctx.Done():
		return nil, ctxError(ctx, nil)
	}
}

// hold keeps reading the Attach stream until it ends; its status is the run's end.
func (r *Run) hold(recv func() (*pb.AttachResponse, error)) {
	for {
		if _, err := recv(); err != nil {
			r.mu.Lock()
			r.err = wrap(err)
			r.mu.Unlock()
			close(r.done)
			return
		}
	}
}

func (r *Run) ping(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-r.done:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), every)
			_, _ = r.c.PingRun(ctx, r.ID)
			cancel()
		}
	}
}

// Done is closed when the run's Attach stream has ended.
func (r *Run) Done() <-chan struct{} { return r.done }

// Err is why the run ended (nil while live): for a run the daemon ended, an *Error with
// ReasonUnknownRun and metadata "cause".
func (r *Run) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// End ends the run, confirmed (EndRun: once it returns, a Load repairs the run's unanswered
// calls and the session may be attached again), then closes its stream. Idempotent.
func (r *Run) End(ctx context.Context) (*pb.EndRunResponse, error) {
	defer r.cancel()
	resp, err := r.c.EndRun(ctx, r.ID)
	if err != nil && ReasonOf(err) == ReasonClientClosed {
		return nil, err
	}
	return resp, err
}

// Cancel closes the run's stream without EndRun (the daemon learns it asynchronously).
func (r *Run) Cancel() { r.cancel() }
