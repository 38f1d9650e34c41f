package sessiond

import (
	"context"
	"io"
	"iter"
	"os"

	pb "github.com/claw-sessiond/claw-sessiond/clients/go/api/sessiondv1"
)

// Watch yields one session's history events after afterPosition, then follows new ones as they
// commit, in position order, one event at a time (it asks for batches and unpacks them). When
// the stream breaks for a transient reason, or the daemon says the watcher lagged
// (WATCH_LAGGED), it resumes after the last event it yielded, on the same incarnation, so
// nothing is skipped or yielded twice; it gives up (yielding the error) after the client's
// retry window without progress. Breaking out of the loop, or cancelling ctx, releases the
// stream.
func (c *Client) Watch(ctx context.Context, sessionID string, afterPosition int64) iter.Seq2[*pb.WatchResponse, error] {
	return func(yield func(*pb.WatchResponse, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		last, incarnation := afterPosition, ""
		r, lagged := c.newRetrier(), 0
		for {
			stub, conn, err := c.stub()
			if err != nil {
				yield(nil, wrap(err))
				return
			}
			req := &pb.WatchRequest{SessionId: sessionID, AfterPosition: last, Incarnation: incarnation,
				Batch: true, Pid: int64(os.Getpid())}
			err = c.watchOnce(ctx, stub, req, func(ev *pb.WatchResponse) bool {
				if ev.GetPosition() <= last && ev.GetIncarnation() == incarnation {
					return true // already yielded before a resume
				}
				last, incarnation = ev.GetPosition(), ev.GetIncarnation()
				r, lagged = c.newRetrier(), 0 // progress: a fresh window
				return yield(ev, nil)
			})
			if err == errStop {
				return
			}
			if err == nil {
				err = newError(14, ReasonDaemonUnavailable, "the Watch stream ended", nil)
			}
			if ReasonOf(wrap(err)) == ReasonWatchLagged && lagged < maxLaggedResumes {
				lagged++
				continue // resume at once after the last event yielded
			}
			if final := r.again(ctx, conn, err, true); final != nil {
				yield(nil, final)
				return
			}
		}
	}
}

func (c *Client) watchOnce(ctx context.Context, stub pb.SessionServiceClient, req *pb.WatchRequest,
	deliver func(*pb.WatchResponse) bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := stub.Watch(ctx, req)
	if err != nil {
		return err
	}
	for {
		resp, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		events := resp.GetEvents()
		if len(events) == 0 {
			events = []*pb.WatchResponse{resp}
		}
		for _, ev := range events {
			if !deliver(ev) {
				return errStop
			}
		}
	}
}

type stopError struct{}

func (stopError) Error() string { return "stopped by the caller" }

var errStop error = stopError{}

// WatchAll yields the history events of every session after afterEventID (0: from now on),
// in event id order, resuming after the last event yielded like Watch. The start marker is not
// yielded.
func (c *Client) WatchAll(ctx context.Context, afterEventID int64) iter.Seq2[*pb.WatchAllResponse, error] {
	return func(yield func(*pb.WatchAllResponse, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		last, resume := afterEventID, afterEventID > 0
		r, lagged := c.newRetrier(), 0
		for {
			stub, conn, err := c.stub()
			if err != nil {
				yield(nil, wrap(err))
				return
			}
			req := &pb.WatchAllRequest{AfterEventId: last, Resume: resume, Batch: true, Pid: int64(os.Getpid())}
			err = c.watchAllOnce(ctx, stub, req, func(ev *pb.WatchAllResponse) bool {
				if ev.GetStarted() {
					last, resume = ev.GetEventId(), true
					return true
				}
				if resume && ev.GetEventId() <= last {
					return true
				}
				last, resume = ev.GetEventId(), true
				r, lagged = c.newRetrier(), 0
				return yield(ev, nil)
			})
			if err == errStop {
				return
			}
			if err == nil {
				err = newError(14, ReasonDaemonUnavailable, "the WatchAll stream ended", nil)
			}
			if ReasonOf(wrap(err)) == ReasonWatchLagged && lagged < maxLaggedResumes {
				lagged++
				continue
			}
			if final := r.again(ctx, conn, err, true); final != nil {
				yield(nil, final)
				return
			}
		}
	}
}

func (c *Client) watchAllOnce(ctx context.Context, stub pb.SessionServiceClient, req *pb.WatchAllRequest,
	deliver func(*pb.WatchAllResponse) bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := stub.WatchAll(ctx, req)
	if err != nil {
		return err
	}
	for {
		resp, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		events := resp.GetEvents()
		if len(events) == 0 {
			events = []*pb.WatchAllResponse{resp}
		}
		for _, ev := range events {
			if !deliver(ev) {
				return errStop
			}
		}
	}
}

// maxLaggedResumes bounds the resumes after WATCH_LAGGED without an event yielded in between.
const maxLaggedResumes = 5
