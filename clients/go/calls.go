package sessiond

import (
	"context"
	"fmt"
	"io"

	pb "github.com/claw-sessiond/claw-sessiond/clients/go/api/sessiondv1"
	"google.golang.org/grpc/codes"
)

// Every unary RPC of SessionService. A mutation without a request id gets a fresh one, so the
// client's own retries (and a caller's, with the same request value) never write twice.

func withID(id *string) {
	if *id == "" {
		*id = NewRequestID()
	}
}

func malformed(what string) error {
	return newError(codes.Internal, ReasonInternal, what+": the write is not known to be stored", nil)
}

// Append adds messages at the end of the session's history, all or none, in order.
func (c *Client) Append(ctx context.Context, req *pb.AppendRequest) (*pb.AppendResponse, error) {
	withID(&req.RequestId)
	resp, err := unary(ctx, c, req, true, pb.SessionServiceClient.Append)
	if err != nil {
		return nil, err
	}
	return resp, checkAppend(resp, len(req.GetMessages()))
}

// checkAppend: a reply is success only if it says what was done (docs/PROTOCOL.md).
func checkAppend(resp *pb.AppendResponse, sent int) error {
	span := resp.GetLastPosition() - resp.GetFirstPosition() + 1
	if resp.GetFirstPosition() < 1 || span < 1 || (!resp.GetReplayed() && span != int64(sent)) {
		return malformed(fmt.Sprintf("an Append reply names positions %d..%d for %d messages",
			resp.GetFirstPosition(), resp.GetLastPosition(), sent))
	}
	return nil
}

// RecordUsage adds token counts and cost to the session's totals; the reply holds the new totals.
func (c *Client) RecordUsage(ctx context.Context, req *pb.RecordUsageRequest) (*pb.Usage, error) {
	withID(&req.RequestId)
	resp, err := unary(ctx, c, req, true, pb.SessionServiceClient.RecordUsage)
	if err != nil {
		return nil, err
	}
	if resp.GetUsage() == nil {
		return nil, malformed("a RecordUsage reply without totals")
	}
	return resp.GetUsage(), nil
}

// Clear empties the visible history; usage totals are kept.
func (c *Client) Clear(ctx context.Context, req *pb.ClearRequest) (*pb.ClearResponse, error) {
	withID(&req.RequestId)
	return unary(ctx, c, req, true, pb.SessionServiceClient.Clear)
}

// RecordEvent records a non-message event (permission denial, error) for audit.
func (c *Client) RecordEvent(ctx context.Context, req *pb.RecordEventRequest) (*pb.RecordEventResponse, error) {
	withID(&req.RequestId)
	return unary(ctx, c, req, true, pb.SessionServiceClient.RecordEvent)
}

// ListSessions lists one page of stored sessions.
func (c *Client) ListSessions(ctx context.Context, req *pb.ListSessionsRequest) (*pb.ListSessionsResponse, error) {
	return unary(ctx, c, req, true, pb.SessionServiceClient.ListSessions)
}

// GetUsage returns one session's totals by model and pricing version.
func (c *Client) GetUsage(ctx context.Context, sessionID string) (*pb.GetUsageResponse, error) {
	return unary(ctx, c, &pb.GetUsageRequest{SessionId: sessionID}, true, pb.SessionServiceClient.GetUsage)
}

// Delete hard-deletes a session. It carries no request id: it is retried only when it was
// never sent (nothing listened) or the daemon refused it while stopping.
func (c *Client) Delete(ctx context.Context, sessionID string) (*pb.DeleteResponse, error) {
	return unary(ctx, c, &pb.DeleteRequest{SessionId: sessionID}, false, pb.SessionServiceClient.Delete)
}

// Import imports the events of one session (Export lines), all or nothing; retried like Delete.
func (c *Client) Import(ctx context.Context, req *pb.ImportRequest) (*pb.ImportResponse, error) {
	return unary(ctx, c, req, false, pb.SessionServiceClient.Import)
}

// GetStats returns the daemon's and database's figures.
func (c *Client) GetStats(ctx context.Context) (*pb.GetStatsResponse, error) {
	return unary(ctx, c, &pb.GetStatsRequest{}, true, pb.SessionServiceClient.GetStats)
}

// Search is full-text search over message content across sessions.
func (c *Client) Search(ctx context.Context, req *pb.SearchRequest) (*pb.SearchResponse, error) {
	return unary(ctx, c, req, true, pb.SessionServiceClient.Search)
}

// GetUsageReport returns usage across sessions grouped by model, pricing version, currency and day.
func (c *Client) GetUsageReport(ctx context.Context, req *pb.GetUsageReportRequest) (*pb.GetUsageReportResponse, error) {
	return unary(ctx, c, req, true, pb.SessionServiceClient.GetUsageReport)
}

// EditTail replaces the end of the history atomically (see the proto).
func (c *Client) EditTail(ctx context.Context, req *pb.EditTailRequest) (*pb.EditTailResponse, error) {
	withID(&req.RequestId)
	return unary(ctx, c, req, true, pb.SessionServiceClient.EditTail)
}

// DeleteEntries removes visible entries anywhere in the history by client ids, prefix or position
// range, recorded as an edit event (see the proto).
func (c *Client) DeleteEntries(ctx context.Context, req *pb.DeleteEntriesRequest) (*pb.DeleteEntriesResponse, error) {
	withID(&req.RequestId)
	return unary(ctx, c, req, true, pb.SessionServiceClient.DeleteEntries)
}

// CreateSession creates an empty session with state, labels and tool policy (ALREADY_EXISTS if stored).
func (c *Client) CreateSession(ctx context.Context, req *pb.CreateSessionRequest) (*pb.Session, error) {
	withID(&req.RequestId)
	resp, err := unary(ctx, c, req, true, pb.SessionServiceClient.CreateSession)
	if err != nil {
		return nil, err
	}
	return resp.GetSession(), nil
}

// ForkSession creates a session whose history starts as a copy of another's up to a position.
func (c *Client) ForkSession(ctx context.Context, req *pb.ForkSessionRequest) (*pb.ForkSessionResponse, error) {
	withID(&req.RequestId)
	return unary(ctx, c, req, true, pb.SessionServiceClient.ForkSession)
}

// UpdateSession changes state (by deltas), shared scope states, labels or tool policy.
func (c *Client) UpdateSession(ctx context.Context, req *pb.UpdateSessionRequest) (*pb.UpdateSessionResponse, error) {
	withID(&req.RequestId)
	return unary(ctx, c, req, true, pb.SessionServiceClient.UpdateSession)
}

// GetScopeStates reads shared scope states without a session.
func (c *Client) GetScopeStates(ctx context.Context, scopes ...string) (*pb.GetScopeStatesResponse, error) {
	return unary(ctx, c, &pb.GetScopeStatesRequest{Scopes: scopes}, true, pb.SessionServiceClient.GetScopeStates)
}

// PingRun renews a run that asked for ping liveness.
func (c *Client) PingRun(ctx context.Context, runID string) (*pb.PingRunResponse, error) {
	return unary(ctx, c, &pb.PingRunRequest{RunId: runID}, true, pb.SessionServiceClient.PingRun)
}

// EndRun ends a run and returns once it is no longer live (idempotent).
func (c *Client) EndRun(ctx context.Context, runID string) (*pb.EndRunResponse, error) {
	return unary(ctx, c, &pb.EndRunRequest{RunId: runID}, true, pb.SessionServiceClient.EndRun)
}

// Backup writes a consistent copy of the whole database to w. A failure part-way is returned
// (not retried: w already holds part of a copy).
func (c *Client) Backup(ctx context.Context, w io.Writer) (*pb.BackupFigures, error) {
	stub, _, err := c.stub()
	if err != nil {
		return nil, wrap(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := stub.Backup(ctx, &pb.BackupRequest{})
	if err != nil {
		return nil, wrap(err)
	}
	var figures *pb.BackupFigures
	for {
		resp, err := stream.Recv()
		if err == io.EOF {
			return figures, nil
		}
		if err != nil {
			return nil, wrap(err)
		}
		if resp.GetFigures() != nil {
			figures = resp.GetFigures()
		}
		if _, err := w.Write(resp.GetData()); err != nil {
			return nil, err
		}
	}
}
