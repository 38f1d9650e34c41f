package sessiond

import (
	"context"

	"google.golang.org/grpc"
)

// Whether a daemon ever answered this client. With auto-start off, nothing listening at the
// socket means "no daemon runs" (a call fails at once, ReasonDaemonUnavailable) only for a client
// no daemon has answered yet; after an answer it is a daemon restarting (killed, stopped, being
// replaced), and calls retry within the retry window, as the Python and TypeScript clients do.

// servedOptions are the dial options that record an answer: a unary reply, or a message
// received on a stream (Load, Watch, WatchAll, AppendStream, Attach).
func (c *Client) servedOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
			invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			err := invoker(ctx, method, req, reply, cc, opts...)
			if err == nil {
				c.served.Store(true)
			}
			return err
		}),
		grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn,
			method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			s, err := streamer(ctx, desc, cc, method, opts...)
			if err != nil {
				return nil, err
			}
			return servedStream{ClientStream: s, c: c}, nil
		}),
	}
}

type servedStream struct {
	grpc.ClientStream
	c *Client
}

func (s servedStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err == nil {
		s.c.served.Store(true)
	}
	return err
}
