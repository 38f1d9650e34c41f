// Package sessiond is the Go client of claw-sessiond, the session store for local AI-agent
// harnesses: discovery (docs/PROTOCOL.md), auto-start, the peer check, the error model, request
// ids with safe retry, and every RPC of protos/claw/sessiond/v1/sessiond.proto.
//
// A Client holds no global state; every call takes a context.Context. Errors are *Error values
// (errors.As) carrying the daemon's Reason (errors.Is with a Reason constant) and whether the
// request may be retried (IsRetryable).
package sessiond

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	pb "github.com/claw-sessiond/claw-sessiond/clients/go/api/sessiondv1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// maxRecvBytes: replies carry entries up to --max-entry-bytes (16 MiB) plus a third for an
// Export line's base64; the Python client accepts 64 MiB too.
const maxRecvBytes = 64 << 20

// Client talks to one workspace's daemon. It is safe for concurrent use; Close it when done.
type Client struct {
	o         options
	workspace string // "" when connecting by address alone

	mu      sync.Mutex
	conn    *grpc.ClientConn
	socket  string // the Unix socket the current connection dials
	closed  bool
	peerErr error // the last peer check's refusal (nothing was sent)
	tcp     *tcpState
	served  atomic.Bool // a daemon answered once (served.go)
}

// New returns a Client for the workspace (WithWorkspace, $CLAW_SESSIOND_WORKSPACE, or found
// upward from the current folder), a socket (WithSocket) or a TCP address (WithTCP). It
// refuses another user's .claw before anything is sent (ReasonUntrustedPeer). It connects
// lazily: the first call finds (or starts) the daemon.
func New(opts ...Option) (*Client, error) {
	o := options{autostart: true, retryWindow: DefaultRetryWindow}
	for _, opt := range opts {
		opt(&o)
	}
	c := &Client{o: o}
	switch {
	case o.tcpAddr != "":
		if o.workspace != "" {
			ws, err := filepath.Abs(o.workspace)
			if err != nil {
				return nil, err
			}
			c.workspace = ws
		}
		t, err := newTCPState(o, c.workspace)
		if err != nil {
			return nil, err
		}
		c.tcp = t
	case o.socket != "":
		c.socket = o.socket
	default:
		ws, err := resolveWorkspace(o.workspace)
		if err != nil {
			return nil, err
		}
		c.workspace = ws
		c.socket = discoverSocket(ws)
	}
	return c, nil
}

// Workspace is the workspace folder the client talks to ("" when connected by address).
func (c *Client) Workspace() string { return c.workspace }

// Close closes the connection; runs attached through this client end (cause stream_closed).
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.conn != nil {
		err := c.conn.Close()
		c.conn = nil
		return err
	}
	return nil
}

// stub returns the service stub on the current connection, creating it if needed.
func (c *Client) stub() (pb.SessionServiceClient, *grpc.ClientConn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, nil, errClosed
	}
	if c.conn == nil {
		conn, err := c.dialLocked()
		if err != nil {
			return nil, nil, err
		}
		c.conn = conn
	}
	return pb.NewSessionServiceClient(c.conn), c.conn, nil
}

func (c *Client) dialLocked() (*grpc.ClientConn, error) {
	params := grpc.ConnectParams{Backoff: backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6,
		Jitter: 0.2, MaxDelay: time.Second}, MinConnectTimeout: 5 * time.Second}
	common := []grpc.DialOption{
		grpc.WithConnectParams(params),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxRecvBytes)),
		// No keepalive pings: on the Unix socket a run's liveness is the connection alone.
	}
	common = append(common, c.servedOptions()...)
	if c.tcp != nil {
		return c.tcp.dial(common)
	}
	socket := c.socket
	dialer := func(ctx context.Context, _ string) (net.Conn, error) {
		conn, err := dialUnixChecked(ctx, socket, c.workspace)
		var refusal *Error
		if errors.As(err, &refusal) && refusal.Reason == ReasonUntrustedPeer {
			c.mu.Lock()
			c.peerErr = refusal
			c.mu.Unlock()
		}
		return conn, err
	}
	opts := append(common, grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithContextDialer(dialer))
	return grpc.NewClient("passthrough:///claw-sessiond", opts...)
}

// reset drops a connection that found nothing listening, and reads the endpoint file again
// (the daemon may have moved).
func (c *Client) reset(conn *grpc.ClientConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != conn || c.conn == nil {
		return
	}
	_ = c.conn.Close()
	c.conn = nil
	if c.workspace != "" && c.o.socket == "" && c.tcp == nil {
		c.socket = discoverSocket(c.workspace)
	}
	if c.tcp != nil {
		_ = c.tcp.reload()
	}
}

func (c *Client) takePeerErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	err := c.peerErr
	c.peerErr = nil
	return err
}

// NewRequestID returns a fresh random request id (32 hexadecimal digits).
func NewRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// nothingListens: the error came from a connection that could not be made (the request was
// never sent), as opposed to one the daemon answered.
func nothingListens(e *Error) bool {
	return e.Code == codes.Unavailable && e.Reason == ReasonDaemonUnavailable
}

// retrier decides, call by call, whether to send the same request again.
type retrier struct {
	c        *Client
	deadline time.Time
	pause    time.Duration
	started  bool // auto-start ran once for this call
}

func (c *Client) newRetrier() *retrier {
	return &retrier{c: c, deadline: time.Now().Add(c.o.retryWindow), pause: 50 * time.Millisecond}
}

// again returns nil to retry (after waiting), or the error to return. sentSafe: the request may
// be sent twice (a read, or a mutation with a request id).
func (r *retrier) again(ctx context.Context, conn *grpc.ClientConn, err error, sentSafe bool) error {
	if ctx.Err() != nil {
		return ctxError(ctx, err)
	}
	if perr := r.c.takePeerErr(); perr != nil {
		return perr
	}
	e := wrap(err).(*Error)
	if r.c.tcp != nil && isHandshakeError(e) {
		if r.c.tcp.reload() && time.Now().Before(r.deadline) {
			r.c.dropConn() // a restarted daemon's new certificate: follow it
			return nil
		}
		return untrusted(fmt.Sprintf("the TLS handshake with %s failed: the listener is not the daemon whose "+
			"certificate was given (or the daemon restarted with a new one); nothing was sent: %s", r.c.tcp.addr, e.Message))
	}
	if e.Reason == ReasonClientClosed || !e.Retryable || e.Reason == ReasonTooManyStreams {
		return e
	}
	if !sentSafe && !(nothingListens(e) && isDialError(e.Message)) && e.Reason != ReasonShuttingDown {
		return e
	}
	if nothingListens(e) {
		r.c.reset(conn)
		if done, ferr := r.c.noDaemon(ctx, r); done {
			return ferr
		}
	}
	if time.Now().After(r.deadline) {
		return e
	}
	t := time.NewTimer(r.pause)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctxError(ctx, e)
	case <-t.C:
	}
	r.pause = min(r.pause*2, 500*time.Millisecond)
	return nil
}

// noDaemon handles "nothing listens": auto-start (once per call) or, when no daemon holds the
// workspace lock, auto-start is off and no daemon ever answered this client, fail at once. done
// reports that err is final.
func (c *Client) noDaemon(ctx context.Context, r *retrier) (done bool, err error) {
	if c.workspace == "" || c.tcp != nil || c.o.socket != "" {
		return false, nil
	}
	if lockHeld(c.workspace) {
		return false, nil // a daemon is starting or stopping: wait for it
	}
	if !c.o.autostart {
		if c.served.Load() {
			return false, nil // it answered before: a restart, waited for within the retry window
		}
		return true, newError(codes.Unavailable, ReasonDaemonUnavailable, fmt.Sprintf(
			"no claw-sessiond runs for %s (nothing listens at %s); start one: claw-sessiond serve --workspace %s",
			c.workspace, c.currentSocket(), c.workspace), nil)
	}
	if r.started {
		return false, nil
	}
	r.started = true
	if err := c.autostart(ctx); err != nil {
		return true, err
	}
	r.deadline = time.Now().Add(c.o.retryWindow)
	return false, nil
}

func (c *Client) currentSocket() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.socket
}

func ctxError(ctx context.Context, last error) error {
	// A cancelled context has no daemon reason: errors.Is(err, context.Canceled) tells it.
	code := codes.Canceled
	reason := Reason("")
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		code, reason = codes.DeadlineExceeded, ReasonDeadlineExceeded
	}
	e := newError(code, reason, ctx.Err().Error(), ctx.Err())
	if code == codes.Canceled {
		e.Retryable = false
	}
	if last != nil {
		e.Message += "; last error: " + last.Error()
	}
	return e
}

// unary sends req with f, retrying transient errors within the retry window. safe: sending it
// twice is harmless (a read, or a mutation carrying a request id).
func unary[Req any, Resp any](ctx context.Context, c *Client, req Req, safe bool,
	f func(pb.SessionServiceClient, context.Context, Req, ...grpc.CallOption) (Resp, error)) (Resp, error) {
	r := c.newRetrier()
	for {
		var zero Resp
		stub, conn, err := c.stub()
		if err != nil {
			return zero, wrap(err)
		}
		resp, err := f(stub, ctx, req)
		if err == nil {
			return resp, nil
		}
		if final := r.again(ctx, conn, err, safe); final != nil {
			return zero, final
		}
	}
}

// health checks that the daemon at the current connection serves.
func (c *Client) health(ctx context.Context) error {
	_, conn, err := c.stub()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return err
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return errors.New("not serving")
	}
	return nil
}

func isDialError(msg string) bool { return strings.Contains(msg, "while dialing") }
