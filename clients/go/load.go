package sessiond

import (
	"context"
	"io"
	"iter"
	"os"

	pb "github.com/claw-sessiond/claw-sessiond/clients/go/api/sessiondv1"
	"google.golang.org/grpc/codes"
)

// Loaded is a whole Load reply: the chunks of the stream put together.
type Loaded struct {
	Session     *pb.Session
	Repairs     []*pb.Repair
	InFlight    []*pb.InFlightCall
	Messages    []*pb.Message
	ScopeStates []*pb.ScopeState
	// Complete: the reply holds the whole visible history (no last/after filter cut it).
	Complete      bool
	StartPosition int64
}

// Load returns a session's metadata, totals and visible history (get-or-create: an unknown
// session comes back empty and is not written). Interrupted tool calls are repaired in the
// same transaction. The chunked reply is read whole; a stream broken before its last chunk is
// loaded again (a Load is safe to repeat). An empty Workdir is the current folder.
func (c *Client) Load(ctx context.Context, req *pb.LoadRequest) (*Loaded, error) {
	if req.Workdir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, newError(codes.InvalidArgument, ReasonInvalidWorkdir,
				"the current folder cannot be read; set LoadRequest.Workdir: "+err.Error(), err)
		}
		req.Workdir = wd
	}
	r := c.newRetrier()
	for {
		stub, conn, err := c.stub()
		if err != nil {
			return nil, wrap(err)
		}
		out, err := c.loadOnce(ctx, stub, req)
		if err == nil {
			return out, nil
		}
		if final := r.again(ctx, conn, err, true); final != nil {
			return nil, final
		}
	}
}

func (c *Client) loadOnce(ctx context.Context, stub pb.SessionServiceClient, req *pb.LoadRequest) (*Loaded, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := stub.Load(ctx, req)
	if err != nil {
		return nil, err
	}
	var out *Loaded
	for {
		chunk, err := stream.Recv()
		if err == io.EOF {
			return nil, malformed("a Load stream ended without its last chunk")
		}
		if err != nil {
			return nil, err
		}
		if out == nil {
			if chunk.GetSession() == nil {
				return nil, malformed("a Load stream whose first chunk has no session")
			}
			out = &Loaded{Session: chunk.GetSession(), Repairs: chunk.GetRepairs(), InFlight: chunk.GetInFlight(),
				ScopeStates: chunk.GetScopeStates(), Complete: chunk.GetComplete(), StartPosition: chunk.GetStartPosition()}
		}
		out.Messages = append(out.Messages, chunk.GetMessages()...)
		if chunk.GetDone() {
			return out, nil
		}
	}
}

// Export yields every event of one session ("" : of all sessions) as JSON lines, in event
// order. Breaking out of the loop releases the stream.
func (c *Client) Export(ctx context.Context, sessionID string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		stub, _, err := c.stub()
		if err != nil {
			yield("", wrap(err))
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stream, err := stub.Export(ctx, &pb.ExportRequest{SessionId: sessionID})
		if err != nil {
			yield("", wrap(err))
			return
		}
		for {
			resp, err := stream.Recv()
			if err == io.EOF {
				return
			}
			if err != nil {
				yield("", wrap(err))
				return
			}
			if !yield(resp.GetLine(), nil) {
				return
			}
		}
	}
}
