package sessiond

import (
	"context"
	"sync"

	pb "github.com/claw-sessiond/claw-sessiond/clients/go/api/sessiondv1"
	"google.golang.org/grpc/codes"
)

// AppendStream keeps many appends in flight over one AppendStream call: Append may be called
// from many goroutines; each append travels as one stream message and gets its own reply (in
// order), without a gRPC call per append. If the stream breaks, the appends still waiting are sent again by
// unary Append with their request ids (the daemon writes each at most once).
//
// Bounds: at most maxStreamInFlight appends wait for replies at a time (Append blocks beyond
// that).
type AppendStream struct {
	c      *Client
	ctx    context.Context
	cancel context.CancelFunc
	send   func(*pb.AppendStreamRequest) error

	slots   chan struct{}
	sendMu  sync.Mutex // keeps waiting in the order of the stream
	mu      sync.Mutex
	waiting []*pendingAppend // sent, in order, awaiting replies
	broken  error
}

const (
	maxStreamInFlight = 1024
)

type pendingAppend struct {
	req  *pb.AppendRequest
	done chan struct{}
	resp *pb.AppendResponse
	err  error
}

// OpenAppendStream opens an AppendStream; Close it when done. ctx bounds the stream's life.
func (c *Client) OpenAppendStream(ctx context.Context) (*AppendStream, error) {
	stub, _, err := c.stub()
	if err != nil {
		return nil, wrap(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	stream, err := stub.AppendStream(ctx)
	if err != nil {
		cancel()
		return nil, wrap(err)
	}
	s := &AppendStream{c: c, ctx: ctx, cancel: cancel, send: stream.Send, slots: make(chan struct{}, maxStreamInFlight)}
	go s.receive(stream.Recv)
	return s, nil
}

// Append sends one append over the stream and waits for its reply (or ctx).
func (s *AppendStream) Append(ctx context.Context, req *pb.AppendRequest) (*pb.AppendResponse, error) {
	withID(&req.RequestId)
	select {
	case s.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctxError(ctx, nil)
	}
	p := &pendingAppend{req: req, done: make(chan struct{})}
	s.sendMu.Lock()
	s.mu.Lock()
	if s.broken != nil {
		s.mu.Unlock()
		s.sendMu.Unlock()
		<-s.slots
		return s.c.Append(ctx, req)
	}
	s.waiting = append(s.waiting, p)
	s.mu.Unlock()
	err := s.send(&pb.AppendStreamRequest{Appends: []*pb.AppendRequest{req}})
	s.sendMu.Unlock()
	if err != nil {
		s.fail(err)
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		return nil, ctxError(ctx, nil)
	}
	if p.err == errStreamBroken {
		return s.c.Append(ctx, req)
	}
	if p.err != nil {
		return nil, p.err
	}
	return p.resp, checkAppend(p.resp, len(req.GetMessages()))
}

var errStreamBroken = newError(codes.Unavailable, ReasonDaemonUnavailable, "the AppendStream broke", nil)

func (s *AppendStream) receive(recv func() (*pb.AppendStreamResponse, error)) {
	for {
		resp, err := recv()
		if err != nil {
			s.fail(err)
			return
		}
		for _, reply := range resp.GetReplies() {
			s.mu.Lock()
			if len(s.waiting) == 0 {
				s.mu.Unlock()
				s.fail(malformed("an AppendStream reply with no append waiting"))
				return
			}
			p := s.waiting[0]
			s.waiting = s.waiting[1:]
			s.mu.Unlock()
			switch {
			case reply.GetError() != nil:
				e := reply.GetError()
				p.err = fromParts(codes.Code(e.GetCode()), e.GetMessage(), e.GetReason(), e.GetMetadata())
			case reply.GetResult() != nil:
				p.resp = reply.GetResult()
			default:
				p.err = malformed("an AppendStream reply with neither result nor error")
			}
			close(p.done)
			<-s.slots
		}
	}
}

// fail hands every waiting append back to unary Append (same request id).
func (s *AppendStream) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken == nil {
		s.broken = wrap(err)
	}
	for _, p := range s.waiting {
		p.err = errStreamBroken
		close(p.done)
		<-s.slots
	}
	s.waiting = nil
}

// Close ends the stream (appends still waiting are finished by unary Append).
func (s *AppendStream) Close() error {
	s.cancel()
	return nil
}
