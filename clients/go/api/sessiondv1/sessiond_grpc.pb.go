// claw-sessiond: the session store for local AI-agent harnesses.
//
// One daemon per workspace is the single writer of `.claw/sessions.db`.
// Agent processes call this service over a Unix socket (`.claw/sessiond.sock`,
// or the path named in `.claw/endpoint.json`; see docs/PROTOCOL.md).
// The stored history is an append-only event log; Load returns the visible
// message list projected from it (everything after the last Clear).
//
// This file is the contract: a client in any language needs only it, the
// vendored `google/rpc` protos beside it, and docs/PROTOCOL.md (discovery).
//
// ERRORS. Every error status of a call carries, in the
// `grpc-status-details-bin` trailer, a `google.rpc.Status` whose details hold
// one `google.rpc.ErrorInfo` with domain "claw-sessiond", a `reason` and
// string metadata (for example `expected` and `actual` for SEQUENCE_CONFLICT).
// A server stream (Load, Watch, WatchAll, Export, Attach, Backup) ends with
// such a status too. AppendStream reports per-append errors in `AppendError`
// (same code, reason and metadata). A refused request wrote nothing.
//
// REASONS: every reason the daemon sends, its code, and RETRY: what sending
// the same request again (a mutation: with the same `request_id`, which makes
// any resend safe: it never writes twice) can do.
//   final     nothing was written and the same request gets the same answer
//             until the request or the session changes; not retryable.
//   later     transient: the same request may succeed later; retryable.
//   operator  fails until an operator acts (frees space, repairs the
//             store); not retryable.
//   resume    a stream ended and nothing is lost: open a new one from what
//             was received (not an error to give up on).
//   REASON                      CODE                 RETRY
//   INVALID_SESSION_ID          INVALID_ARGUMENT     final
//   INVALID_MESSAGE             INVALID_ARGUMENT     final (also: a request
//                                                    that does not decode)
//   ARGUMENTS_NOT_JSON          INVALID_ARGUMENT     final
//   DUPLICATE_TOOL_CALL_ID      INVALID_ARGUMENT     final
//   EMPTY_BATCH                 INVALID_ARGUMENT     final
//   FIELD_TOO_LARGE             INVALID_ARGUMENT     final
//   INVALID_USAGE               INVALID_ARGUMENT     final
//   INVALID_WORKDIR             INVALID_ARGUMENT     final
//   INVALID_EVENT               INVALID_ARGUMENT     final
//   INVALID_IMPORT              INVALID_ARGUMENT     final
//   REQUEST_ID_REUSED           INVALID_ARGUMENT     final (the id names another
//                                                    request: send a new id)
//   UNKNOWN_TOOL_CALL           FAILED_PRECONDITION  final
//   TOOL_CALL_ALREADY_ANSWERED  FAILED_PRECONDITION  final
//   CURRENCY_MISMATCH           FAILED_PRECONDITION  final
//   RUN_ALREADY_OWNED           FAILED_PRECONDITION  final until the owner's
//                                                    run ends (metadata
//                                                    `run_id`, `pid`)
//   UNKNOWN_RUN                 FAILED_PRECONDITION  final: the run is not live
//                                                    (metadata `run_id`, `cause`:
//                                                    RUN ENDS below); Attach
//                                                    again, then decide
//   SESSION_EXISTS              FAILED_PRECONDITION  final (Import, mode refuse)
//   SESSION_EXISTS              ALREADY_EXISTS       final (CreateSession,
//                                                    ForkSession; a retry with
//                                                    the same request id
//                                                    replays instead)
//   TOO_MANY_OPEN_CALLS         FAILED_PRECONDITION  final (until results are
//                                                    appended)
//   EDIT_SPLITS_CALL            FAILED_PRECONDITION  final
//   CLIENT_ID_EXISTS            ALREADY_EXISTS       final
//   SESSION_NOT_FOUND           NOT_FOUND            final
//   SEQUENCE_CONFLICT           ABORTED              final: reload, then decide
//                                                    (metadata `expected`,
//                                                    `actual`); never blindly
//                                                    retry
//   WATCH_LAGGED                ABORTED              resume: NOT final. A Watch
//                                                    or WatchAll whose client
//                                                    read nothing for
//                                                    --watch-stall-s (30 s);
//                                                    read the events before the
//                                                    status, then start a new
//                                                    stream after the last
//                                                    position (WatchAll: event
//                                                    id) received; nothing is
//                                                    lost (metadata `position`:
//                                                    the last one sent)
//   STORAGE_FULL                RESOURCE_EXHAUSTED   operator (free space)
//   TOO_MANY_STREAMS            RESOURCE_EXHAUSTED   later, when a stream ends
//                                                    (metadata `scope=peer`:
//                                                    this caller's share)
//   STORAGE_UNAVAILABLE         UNAVAILABLE          later
//   STORAGE_UNAVAILABLE         FAILED_PRECONDITION  final (Backup of a
//                                                    PostgreSQL store: use the
//                                                    server's backups)
//   SHUTTING_DOWN               UNAVAILABLE          later (to the next daemon)
//   CORRUPT_DATABASE            UNAVAILABLE          operator (repair the store)
//   UNAUTHENTICATED             UNAUTHENTICATED      final; reread the token
//                                                    (--tcp only; metadata
//                                                    `problem`)
//   INTERNAL                    INTERNAL             final: a bug (no input is
//                                                    known to cause it); a
//                                                    resend with the same
//                                                    request id writes nothing
//                                                    twice
// Statuses without ErrorInfo: UNAVAILABLE (a daemon that is starting or gone:
// later), CANCELLED (a call the stopping daemon had not started: later),
// DEADLINE_EXCEEDED (the client's deadline; a write may have committed: later,
// with the same request id), RESOURCE_EXHAUSTED (a request over the
// transport's receive limit, --max-request-bytes: final). A reason not in
// this table is a newer daemon's: treat it by its code.
//
// REQUEST IDS. Every mutation but Import and Delete takes a client-chosen
// `request_id` (up to 128 bytes). A retry with the same id inside the replay
// window returns the first result with `replayed` set and writes nothing; the
// same id with other content is INVALID_ARGUMENT, REQUEST_ID_REUSED. The
// window is the daemon's --request-id-retention-s, 24 h (86400 s) by default
// (0: forever); a record older than that may be pruned, and then the same id
// is a new request and is written again. Delete removes the session's
// records. Reads (Load, Watch, ListSessions, Export, ...) are always safe to
// retry. Attach, EndRun and PingRun take no request id: Attach of a session
// whose first Attach went through gets RUN_ALREADY_OWNED until that run ends
// (its stream, if the client lost it, ends it); EndRun is idempotent; PingRun
// only renews. Import and Delete take none either, and need none (see
// DeleteRequest and ImportRequest): each converges to the state one call
// leaves, so a retry is safe unless another client wrote the session between
// the two calls; only the retry's reply differs from the first's.
//
// LIMITS (defaults; daemon flags in parentheses): a session id 1-256 bytes; a
// request id and a trace id up to 128 bytes; one message's text up to 1 MiB
// (--max-message-bytes; at most 4,128,768 = 4 MiB - 64 KiB, so that a
// message fits one reply a default client reads); one entry with its item up to 16 MiB
// (--max-entry-bytes); a batch up to 1000 messages (--max-batch-messages); a
// request up to --max-request-bytes; unanswered tool calls per session up to
// 1000 (--max-open-tool-calls); Watch streams up to 4096 (--max-watchers).
// Replies of Load, Watch and Export are chunked so that each stays under 4 MiB
// (the default receive limit of gRPC clients) unless a single entry is larger;
// a client that stores entries over 4 MiB must raise its receive limit to the
// entry limit plus 1 MiB for Load and Watch, and a third more for Export
// (an item travels base64 in an export line).
//
// ORDER. Positions are assigned at commit and never reused. Watch, WatchAll
// and Export send events in position (commit) order. Load returns the
// conversation order: a tool result follows the assistant message whose call
// it answers, so after a repair the positions in a Load reply can read 1, 2,
// 4, 3 (the synthetic result at 4 answers a call made at 2, before the user
// message at 3). Clients that cache a history must key entries by position
// and take the order from Load.
//
// RUNS. A tool call appended with a run id (see Attach) is "in flight" while
// its run is live, and Load does not repair it; liveness (the connection and
// the kernel, not pings), EndRun and the one report of a run that is not
// live (FAILED_PRECONDITION, UNKNOWN_RUN, metadata `cause`) are described on
// AttachRequest.
//
// RUN ENDS: every `cause` of UNKNOWN_RUN (and of EndRunResponse.cause).
//   ended            EndRun ended it
//   stream_closed    its Attach stream ended: cancelled, channel closed,
//                    process exited, connection lost
//   process_gone     the process whose pid the daemon verified is gone
//   ping_timeout     it asked for pings and none came within its bound
//   daemon_stopping  the daemon stopped (runs live in its memory)
//   unknown          this daemon does not know the run id: never issued,
//                    issued before a restart, or long ended (the last 4096
//                    ends are remembered)
//   other_session    the run is live but runs another session
//   lease_lost       PostgreSQL only: the run's daemon lost its lease on the
//                    shared database (hung or cut off for longer than
//                    --lease-s); the other daemons treat the run as ended and
//                    its later writes are refused
// A client sees the same causes in every language; a cause not in this list
// is a newer daemon's: treat it as `unknown`.

// Code generated by protoc-gen-go-grpc. DO NOT EDIT.
// versions:
// - protoc-gen-go-grpc v1.5.1
// - protoc             v7.35.1
// source: claw/sessiond/v1/sessiond.proto

package sessiondv1

import (
	context "context"
	grpc "google.golang.org/grpc"
	codes "google.golang.org/grpc/codes"
	status "google.golang.org/grpc/status"
)

// This is a compile-time assertion to ensure that this generated file
// is compatible with the grpc package it is being compiled against.
// Requires gRPC-Go v1.64.0 or later.
const _ = grpc.SupportPackageIsVersion9

const (
	SessionService_Load_FullMethodName           = "/claw.sessiond.v1.SessionService/Load"
	SessionService_Append_FullMethodName         = "/claw.sessiond.v1.SessionService/Append"
	SessionService_AppendStream_FullMethodName   = "/claw.sessiond.v1.SessionService/AppendStream"
	SessionService_RecordUsage_FullMethodName    = "/claw.sessiond.v1.SessionService/RecordUsage"
	SessionService_Clear_FullMethodName          = "/claw.sessiond.v1.SessionService/Clear"
	SessionService_RecordEvent_FullMethodName    = "/claw.sessiond.v1.SessionService/RecordEvent"
	SessionService_Attach_FullMethodName         = "/claw.sessiond.v1.SessionService/Attach"
	SessionService_Watch_FullMethodName          = "/claw.sessiond.v1.SessionService/Watch"
	SessionService_ListSessions_FullMethodName   = "/claw.sessiond.v1.SessionService/ListSessions"
	SessionService_GetUsage_FullMethodName       = "/claw.sessiond.v1.SessionService/GetUsage"
	SessionService_Delete_FullMethodName         = "/claw.sessiond.v1.SessionService/Delete"
	SessionService_Export_FullMethodName         = "/claw.sessiond.v1.SessionService/Export"
	SessionService_Import_FullMethodName         = "/claw.sessiond.v1.SessionService/Import"
	SessionService_GetStats_FullMethodName       = "/claw.sessiond.v1.SessionService/GetStats"
	SessionService_Backup_FullMethodName         = "/claw.sessiond.v1.SessionService/Backup"
	SessionService_Search_FullMethodName         = "/claw.sessiond.v1.SessionService/Search"
	SessionService_WatchAll_FullMethodName       = "/claw.sessiond.v1.SessionService/WatchAll"
	SessionService_GetUsageReport_FullMethodName = "/claw.sessiond.v1.SessionService/GetUsageReport"
	SessionService_EditTail_FullMethodName       = "/claw.sessiond.v1.SessionService/EditTail"
	SessionService_DeleteEntries_FullMethodName  = "/claw.sessiond.v1.SessionService/DeleteEntries"
	SessionService_CreateSession_FullMethodName  = "/claw.sessiond.v1.SessionService/CreateSession"
	SessionService_ForkSession_FullMethodName    = "/claw.sessiond.v1.SessionService/ForkSession"
	SessionService_UpdateSession_FullMethodName  = "/claw.sessiond.v1.SessionService/UpdateSession"
	SessionService_GetScopeStates_FullMethodName = "/claw.sessiond.v1.SessionService/GetScopeStates"
	SessionService_EndRun_FullMethodName         = "/claw.sessiond.v1.SessionService/EndRun"
	SessionService_PingRun_FullMethodName        = "/claw.sessiond.v1.SessionService/PingRun"
)

// SessionServiceClient is the client API for SessionService service.
//
// For semantics around ctx use and closing/ending streaming RPCs, please refer to https://pkg.go.dev/google.golang.org/grpc/?tab=doc#ClientConn.NewStream.
//
// The session store. Every mutation is durable (committed with
// synchronous=FULL) before its reply is sent.
type SessionServiceClient interface {
	// Get-or-create: returns metadata, usage totals and the visible history.
	// An unknown session comes back empty and is not written. Interrupted tool
	// calls (an assistant tool call with no tool result, not owned by a live
	// run) are repaired in the same transaction as the read. The reply is a
	// stream of chunks so that sessions larger than 4 MiB load with default
	// channel options: the first chunk carries `session`, `repairs` and
	// `in_flight`; every chunk may carry messages; the last has `done` set.
	Load(ctx context.Context, in *LoadRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[LoadResponse], error)
	// Adds one or more messages at the end of the history, all or none, in order.
	Append(ctx context.Context, in *AppendRequest, opts ...grpc.CallOption) (*AppendResponse, error)
	// Append over one long-lived stream, for writers that keep many appends in
	// flight. Each append is an ordinary AppendRequest with Append's semantics
	// (all or none, durable before its reply, idempotent by request id,
	// optimistic concurrency) and gets exactly one reply; replies come back in
	// request order. A writer sends whatever appends it has queued in one
	// AppendStreamRequest, and the daemon sends whatever replies are ready in
	// one AppendStreamResponse, so neither side pays a gRPC call (or a stream
	// message) per append. A failed append gets its error in its reply; the
	// stream goes on. See README "Benchmarks".
	AppendStream(ctx context.Context, opts ...grpc.CallOption) (grpc.BidiStreamingClient[AppendStreamRequest, AppendStreamResponse], error)
	// Adds token counts and cost to the session's running totals.
	RecordUsage(ctx context.Context, in *RecordUsageRequest, opts ...grpc.CallOption) (*RecordUsageResponse, error)
	// Empties the visible history. Usage totals are kept; the log keeps the past.
	Clear(ctx context.Context, in *ClearRequest, opts ...grpc.CallOption) (*ClearResponse, error)
	// Records a non-message event (permission denial, error) for audit. It
	// appears in Export, not in Load's messages.
	RecordEvent(ctx context.Context, in *RecordEventRequest, opts ...grpc.CallOption) (*RecordEventResponse, error)
	// Declares "this connection is running the session". The stream stays open
	// for the run's life; tool calls appended with this run's id are in flight
	// (not repaired) while it is open. The first reply carries the run id.
	Attach(ctx context.Context, in *AttachRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[AttachResponse], error)
	// Sends the session's history events from a position, then follows new
	// ones as they commit, in commit order.
	Watch(ctx context.Context, in *WatchRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[WatchResponse], error)
	// Lists sessions, optionally filtered by an id substring.
	ListSessions(ctx context.Context, in *ListSessionsRequest, opts ...grpc.CallOption) (*ListSessionsResponse, error)
	// Usage totals of one session broken down by model and pricing version.
	GetUsage(ctx context.Context, in *GetUsageRequest, opts ...grpc.CallOption) (*GetUsageResponse, error)
	// Hard-deletes a session: every event, usage row and request record.
	Delete(ctx context.Context, in *DeleteRequest, opts ...grpc.CallOption) (*DeleteResponse, error)
	// Streams every event of one session (or of all sessions) in event order.
	Export(ctx context.Context, in *ExportRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[ExportResponse], error)
	// Imports the events of one session, all or nothing.
	Import(ctx context.Context, in *ImportRequest, opts ...grpc.CallOption) (*ImportResponse, error)
	// Daemon and database figures (the same figures as /metrics).
	GetStats(ctx context.Context, in *GetStatsRequest, opts ...grpc.CallOption) (*GetStatsResponse, error)
	// A consistent copy of the whole database (SQLite's online backup API, one
	// snapshot), streamed in chunks of at most 1 MiB. The first reply carries the
	// figures of the copy; every reply carries the next bytes of the file.
	Backup(ctx context.Context, in *BackupRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[BackupResponse], error)
	// Full-text search over message content across sessions (SQLite FTS5),
	// best matches first (bm25). Searches the visible history unless
	// `include_cleared` is set. A malformed query is INVALID_ARGUMENT.
	Search(ctx context.Context, in *SearchRequest, opts ...grpc.CallOption) (*SearchResponse, error)
	// Follows the new history events of every session, in commit order (event
	// id order), starting after `after_event_id` (0: only what commits from now
	// on, unless `last` asks for the last N history events first).
	WatchAll(ctx context.Context, in *WatchAllRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[WatchAllResponse], error)
	// Usage and cost across sessions grouped by model, pricing version,
	// currency and UTC day (from the usage events).
	GetUsageReport(ctx context.Context, in *GetUsageReportRequest, opts ...grpc.CallOption) (*GetUsageReportResponse, error)
	// Edits the end of the history atomically: removes the last entries (or
	// every entry after a position) and appends replacements in their place, all
	// or nothing, only if the last position is still `expected_last_position`
	// (ABORTED otherwise). The removed entries stay in the log (hidden from the
	// projection; an `edit` event records which), and come back in the reply.
	// Costs O(entries touched), not O(history).
	EditTail(ctx context.Context, in *EditTailRequest, opts ...grpc.CallOption) (*EditTailResponse, error)
	// Removes visible entries anywhere in a history, chosen by client id, by
	// client id prefix or by a range of positions (exactly one of the three),
	// only if the last position is still `expected_last_position` (ABORTED
	// otherwise). As with EditTail, the removed entries stay in the log hidden
	// from the projection and an `edit` event at the next position records
	// which: Watch, WatchAll and Export show it as an edit with no
	// replacements. Positions are never reused. Costs O(entries touched), not
	// O(history).
	DeleteEntries(ctx context.Context, in *DeleteEntriesRequest, opts ...grpc.CallOption) (*DeleteEntriesResponse, error)
	// Creates an empty session with initial state, labels and tool policy;
	// ALREADY_EXISTS if the id is stored (exclusive create).
	CreateSession(ctx context.Context, in *CreateSessionRequest, opts ...grpc.CallOption) (*CreateSessionResponse, error)
	// Creates a new session whose history starts as a copy of another's visible
	// history up to a position (its state and labels too); the new session
	// records where it came from (`Session.forked_from`).
	ForkSession(ctx context.Context, in *ForkSessionRequest, opts ...grpc.CallOption) (*ForkSessionResponse, error)
	// Changes a session's state (by a delta), shared scope states, labels or
	// tool policy, atomically, with optimistic concurrency and a request id.
	UpdateSession(ctx context.Context, in *UpdateSessionRequest, opts ...grpc.CallOption) (*UpdateSessionResponse, error)
	// Reads shared scope states (see StateDelta.scope) without a session.
	GetScopeStates(ctx context.Context, in *GetScopeStatesRequest, opts ...grpc.CallOption) (*GetScopeStatesResponse, error)
	// Ends a run and returns once it is no longer live: its unanswered tool
	// calls are no longer in flight (the next Load repairs them) and the
	// session may be attached again at once. Its Attach stream ends with
	// FAILED_PRECONDITION, reason UNKNOWN_RUN (metadata cause "ended").
	// Idempotent: ending a run that is not live (already ended, dropped,
	// never issued) succeeds with `was_live` false, so a retry is safe.
	EndRun(ctx context.Context, in *EndRunRequest, opts ...grpc.CallOption) (*EndRunResponse, error)
	// Renews a run that asked for ping liveness (AttachRequest.
	// ping_timeout_seconds); any Append naming the run renews it too. A run
	// that is not live gets FAILED_PRECONDITION, reason UNKNOWN_RUN.
	PingRun(ctx context.Context, in *PingRunRequest, opts ...grpc.CallOption) (*PingRunResponse, error)
}

type sessionServiceClient struct {
	cc grpc.ClientConnInterface
}

func NewSessionServiceClient(cc grpc.ClientConnInterface) SessionServiceClient {
	return &sessionServiceClient{cc}
}

func (c *sessionServiceClient) Load(ctx context.Context, in *LoadRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[LoadResponse], error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	stream, err := c.cc.NewStream(ctx, &SessionService_ServiceDesc.Streams[0], SessionService_Load_FullMethodName, cOpts...)
	if err != nil {
		return nil, err
	}
	x := &grpc.GenericClientStream[LoadRequest, LoadResponse]{ClientStream: stream}
	if err := x.ClientStream.SendMsg(in); err != nil {
		return nil, err
	}
	if err := x.ClientStream.CloseSend(); err != nil {
		return nil, err
	}
	return x, nil
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type SessionService_LoadClient = grpc.ServerStreamingClient[LoadResponse]

func (c *sessionServiceClient) Append(ctx context.Context, in *AppendRequest, opts ...grpc.CallOption) (*AppendResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(AppendResponse)
	err := c.cc.Invoke(ctx, SessionService_Append_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *sessionServiceClient) AppendStream(ctx context.Context, opts ...grpc.CallOption) (grpc.BidiStreamingClient[AppendStreamRequest, AppendStreamResponse], error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	stream, err := c.cc.NewStream(ctx, &SessionService_ServiceDesc.Streams[1], SessionService_AppendStream_FullMethodName, cOpts...)
	if err != nil {
		return nil, err
	}
	x := &grpc.GenericClientStream[AppendStreamRequest, AppendStreamResponse]{ClientStream: stream}
	return x, nil
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type SessionService_AppendStreamClient = grpc.BidiStreamingClient[AppendStreamRequest, AppendStreamResponse]

func (c *sessionServiceClient) RecordUsage(ctx context.Context, in *RecordUsageRequest, opts ...grpc.CallOption) (*RecordUsageResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(RecordUsageResponse)
	err := c.cc.Invoke(ctx, SessionService_RecordUsage_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *sessionServiceClient) Clear(ctx context.Context, in *ClearRequest, opts ...grpc.CallOption) (*ClearResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(ClearResponse)
	err := c.cc.Invoke(ctx, SessionService_Clear_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *sessionServiceClient) RecordEvent(ctx context.Context, in *RecordEventRequest, opts ...grpc.CallOption) (*RecordEventResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(RecordEventResponse)
	err := c.cc.Invoke(ctx, SessionService_RecordEvent_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *sessionServiceClient) Attach(ctx context.Context, in *AttachRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[AttachResponse], error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	stream, err := c.cc.NewStream(ctx, &SessionService_ServiceDesc.Streams[2], SessionService_Attach_FullMethodName, cOpts...)
	if err != nil {
		return nil, err
	}
	x := &grpc.GenericClientStream[AttachRequest, AttachResponse]{ClientStream: stream}
	if err := x.ClientStream.SendMsg(in); err != nil {
		return nil, err
	}
	if err := x.ClientStream.CloseSend(); err != nil {
		return nil, err
	}
	return x, nil
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type SessionService_AttachClient = grpc.ServerStreamingClient[AttachResponse]

func (c *sessionServiceClient) Watch(ctx context.Context, in *WatchRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[WatchResponse], error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	stream, err := c.cc.NewStream(ctx, &SessionService_ServiceDesc.Streams[3], SessionService_Watch_FullMethodName, cOpts...)
	if err != nil {
		return nil, err
	}
	x := &grpc.GenericClientStream[WatchRequest, WatchResponse]{ClientStream: stream}
	if err := x.ClientStream.SendMsg(in); err != nil {
		return nil, err
	}
	if err := x.ClientStream.CloseSend(); err != nil {
		return nil, err
	}
	return x, nil
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type SessionService_WatchClient = grpc.ServerStreamingClient[WatchResponse]

func (c *sessionServiceClient) ListSessions(ctx context.Context, in *ListSessionsRequest, opts ...grpc.CallOption) (*ListSessionsResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(ListSessionsResponse)
	err := c.cc.Invoke(ctx, SessionService_ListSessions_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *sessionServiceClient) GetUsage(ctx context.Context, in *GetUsageRequest, opts ...grpc.CallOption) (*GetUsageResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(GetUsageResponse)
	err := c.cc.Invoke(ctx, SessionService_GetUsage_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *sessionServiceClient) Delete(ctx context.Context, in *DeleteRequest, opts ...grpc.CallOption) (*DeleteResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(DeleteResponse)
	err := c.cc.Invoke(ctx, SessionService_Delete_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *sessionServiceClient) Export(ctx context.Context, in *ExportRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[ExportResponse], error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	stream, err := c.cc.NewStream(ctx, &SessionService_ServiceDesc.Streams[4], SessionService_Export_FullMethodName, cOpts...)
	if err != nil {
		return nil, err
	}
	x := &grpc.GenericClientStream[ExportRequest, ExportResponse]{ClientStream: stream}
	if err := x.ClientStream.SendMsg(in); err != nil {
		return nil, err
	}
	if err := x.ClientStream.CloseSend(); err != nil {
		return nil, err
	}
	return x, nil
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type SessionService_ExportClient = grpc.ServerStreamingClient[ExportResponse]

func (c *sessionServiceClient) Import(ctx context.Context, in *ImportRequest, opts ...grpc.CallOption) (*ImportResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(ImportResponse)
	err := c.cc.Invoke(ctx, SessionService_Import_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *sessionServiceClient) GetStats(ctx context.Context, in *GetStatsRequest, opts ...grpc.CallOption) (*GetStatsResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(GetStatsResponse)
	err := c.cc.Invoke(ctx, SessionService_GetStats_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *sessionServiceClient) Backup(ctx context.Context, in *BackupRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[BackupResponse], error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	stream, err := c.cc.NewStream(ctx, &SessionService_ServiceDesc.Streams[5], SessionService_Backup_FullMethodName, cOpts...)
	if err != nil {
		return nil, err
	}
	x := &grpc.GenericClientStream[BackupRequest, BackupResponse]{ClientStream: stream}
	if err := x.ClientStream.SendMsg(in); err != nil {
		return nil, err
	}
	if err := x.ClientStream.CloseSend(); err != nil {
		return nil, err
	}
	return x, nil
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type SessionService_BackupClient = grpc.ServerStreamingClient[BackupResponse]

func (c *sessionServiceClient) Search(ctx context.Context, in *SearchRequest, opts ...grpc.CallOption) (*SearchResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(SearchResponse)
	err := c.cc.Invoke(ctx, SessionService_Search_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *sessionServiceClient) WatchAll(ctx context.Context, in *WatchAllRequest, opts ...grpc.CallOption) (grpc.ServerStreamingClient[WatchAllResponse], error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	stream, err := c.cc.NewStream(ctx, &SessionService_ServiceDesc.Streams[6], SessionService_WatchAll_FullMethodName, cOpts...)
	if err != nil {
		return nil, err
	}
	x := &grpc.GenericClientStream[WatchAllRequest, WatchAllResponse]{ClientStream: stream}
	if err := x.ClientStream.SendMsg(in); err != nil {
		return nil, err
	}
	if err := x.ClientStream.CloseSend(); err != nil {
		return nil, err
	}
	return x, nil
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type SessionService_WatchAllClient = grpc.ServerStreamingClient[WatchAllResponse]

func (c *sessionServiceClient) GetUsageReport(ctx context.Context, in *GetUsageReportRequest, opts ...grpc.CallOption) (*GetUsageReportResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(GetUsageReportResponse)
	err := c.cc.Invoke(ctx, SessionService_GetUsageReport_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *sessionServiceClient) EditTail(ctx context.Context, in *EditTailRequest, opts ...grpc.CallOption) (*EditTailResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(EditTailResponse)
	err := c.cc.Invoke(ctx, SessionService_EditTail_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *sessionServiceClient) DeleteEntries(ctx context.Context, in *DeleteEntriesRequest, opts ...grpc.CallOption) (*DeleteEntriesResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(DeleteEntriesResponse)
	err := c.cc.Invoke(ctx, SessionService_DeleteEntries_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *sessionServiceClient) CreateSession(ctx context.Context, in *CreateSessionRequest, opts ...grpc.CallOption) (*CreateSessionResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(CreateSessionResponse)
	err := c.cc.Invoke(ctx, SessionService_CreateSession_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *sessionServiceClient) ForkSession(ctx context.Context, in *ForkSessionRequest, opts ...grpc.CallOption) (*ForkSessionResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(ForkSessionResponse)
	err := c.cc.Invoke(ctx, SessionService_ForkSession_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *sessionServiceClient) UpdateSession(ctx context.Context, in *UpdateSessionRequest, opts ...grpc.CallOption) (*UpdateSessionResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(UpdateSessionResponse)
	err := c.cc.Invoke(ctx, SessionService_UpdateSession_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *sessionServiceClient) GetScopeStates(ctx context.Context, in *GetScopeStatesRequest, opts ...grpc.CallOption) (*GetScopeStatesResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(GetScopeStatesResponse)
	err := c.cc.Invoke(ctx, SessionService_GetScopeStates_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *sessionServiceClient) EndRun(ctx context.Context, in *EndRunRequest, opts ...grpc.CallOption) (*EndRunResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(EndRunResponse)
	err := c.cc.Invoke(ctx, SessionService_EndRun_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (c *sessionServiceClient) PingRun(ctx context.Context, in *PingRunRequest, opts ...grpc.CallOption) (*PingRunResponse, error) {
	cOpts := append([]grpc.CallOption{grpc.StaticMethod()}, opts...)
	out := new(PingRunResponse)
	err := c.cc.Invoke(ctx, SessionService_PingRun_FullMethodName, in, out, cOpts...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SessionServiceServer is the server API for SessionService service.
// All implementations must embed UnimplementedSessionServiceServer
// for forward compatibility.
//
// The session store. Every mutation is durable (committed with
// synchronous=FULL) before its reply is sent.
type SessionServiceServer interface {
	// Get-or-create: returns metadata, usage totals and the visible history.
	// An unknown session comes back empty and is not written. Interrupted tool
	// calls (an assistant tool call with no tool result, not owned by a live
	// run) are repaired in the same transaction as the read. The reply is a
	// stream of chunks so that sessions larger than 4 MiB load with default
	// channel options: the first chunk carries `session`, `repairs` and
	// `in_flight`; every chunk may carry messages; the last has `done` set.
	Load(*LoadRequest, grpc.ServerStreamingServer[LoadResponse]) error
	// Adds one or more messages at the end of the history, all or none, in order.
	Append(context.Context, *AppendRequest) (*AppendResponse, error)
	// Append over one long-lived stream, for writers that keep many appends in
	// flight. Each append is an ordinary AppendRequest with Append's semantics
	// (all or none, durable before its reply, idempotent by request id,
	// optimistic concurrency) and gets exactly one reply; replies come back in
	// request order. A writer sends whatever appends it has queued in one
	// AppendStreamRequest, and the daemon sends whatever replies are ready in
	// one AppendStreamResponse, so neither side pays a gRPC call (or a stream
	// message) per append. A failed append gets its error in its reply; the
	// stream goes on. See README "Benchmarks".
	AppendStream(grpc.BidiStreamingServer[AppendStreamRequest, AppendStreamResponse]) error
	// Adds token counts and cost to the session's running totals.
	RecordUsage(context.Context, *RecordUsageRequest) (*RecordUsageResponse, error)
	// Empties the visible history. Usage totals are kept; the log keeps the past.
	Clear(context.Context, *ClearRequest) (*ClearResponse, error)
	// Records a non-message event (permission denial, error) for audit. It
	// appears in Export, not in Load's messages.
	RecordEvent(context.Context, *RecordEventRequest) (*RecordEventResponse, error)
	// Declares "this connection is running the session". The stream stays open
	// for the run's life; tool calls appended with this run's id are in flight
	// (not repaired) while it is open. The first reply carries the run id.
	Attach(*AttachRequest, grpc.ServerStreamingServer[AttachResponse]) error
	// Sends the session's history events from a position, then follows new
	// ones as they commit, in commit order.
	Watch(*WatchRequest, grpc.ServerStreamingServer[WatchResponse]) error
	// Lists sessions, optionally filtered by an id substring.
	ListSessions(context.Context, *ListSessionsRequest) (*ListSessionsResponse, error)
	// Usage totals of one session broken down by model and pricing version.
	GetUsage(context.Context, *GetUsageRequest) (*GetUsageResponse, error)
	// Hard-deletes a session: every event, usage row and request record.
	Delete(context.Context, *DeleteRequest) (*DeleteResponse, error)
	// Streams every event of one session (or of all sessions) in event order.
	Export(*ExportRequest, grpc.ServerStreamingServer[ExportResponse]) error
	// Imports the events of one session, all or nothing.
	Import(context.Context, *ImportRequest) (*ImportResponse, error)
	// Daemon and database figures (the same figures as /metrics).
	GetStats(context.Context, *GetStatsRequest) (*GetStatsResponse, error)
	// A consistent copy of the whole database (SQLite's online backup API, one
	// snapshot), streamed in chunks of at most 1 MiB. The first reply carries the
	// figures of the copy; every reply carries the next bytes of the file.
	Backup(*BackupRequest, grpc.ServerStreamingServer[BackupResponse]) error
	// Full-text search over message content across sessions (SQLite FTS5),
	// best matches first (bm25). Searches the visible history unless
	// `include_cleared` is set. A malformed query is INVALID_ARGUMENT.
	Search(context.Context, *SearchRequest) (*SearchResponse, error)
	// Follows the new history events of every session, in commit order (event
	// id order), starting after `after_event_id` (0: only what commits from now
	// on, unless `last` asks for the last N history events first).
	WatchAll(*WatchAllRequest, grpc.ServerStreamingServer[WatchAllResponse]) error
	// Usage and cost across sessions grouped by model, pricing version,
	// currency and UTC day (from the usage events).
	GetUsageReport(context.Context, *GetUsageReportRequest) (*GetUsageReportResponse, error)
	// Edits the end of the history atomically: removes the last entries (or
	// every entry after a position) and appends replacements in their place, all
	// or nothing, only if the last position is still `expected_last_position`
	// (ABORTED otherwise). The removed entries stay in the log (hidden from the
	// projection; an `edit` event records which), and come back in the reply.
	// Costs O(entries touched), not O(history).
	EditTail(context.Context, *EditTailRequest) (*EditTailResponse, error)
	// Removes visible entries anywhere in a history, chosen by client id, by
	// client id prefix or by a range of positions (exactly one of the three),
	// only if the last position is still `expected_last_position` (ABORTED
	// otherwise). As with EditTail, the removed entries stay in the log hidden
	// from the projection and an `edit` event at the next position records
	// which: Watch, WatchAll and Export show it as an edit with no
	// replacements. Positions are never reused. Costs O(entries touched), not
	// O(history).
	DeleteEntries(context.Context, *DeleteEntriesRequest) (*DeleteEntriesResponse, error)
	// Creates an empty session with initial state, labels and tool policy;
	// ALREADY_EXISTS if the id is stored (exclusive create).
	CreateSession(context.Context, *CreateSessionRequest) (*CreateSessionResponse, error)
	// Creates a new session whose history starts as a copy of another's visible
	// history up to a position (its state and labels too); the new session
	// records where it came from (`Session.forked_from`).
	ForkSession(context.Context, *ForkSessionRequest) (*ForkSessionResponse, error)
	// Changes a session's state (by a delta), shared scope states, labels or
	// tool policy, atomically, with optimistic concurrency and a request id.
	UpdateSession(context.Context, *UpdateSessionRequest) (*UpdateSessionResponse, error)
	// Reads shared scope states (see StateDelta.scope) without a session.
	GetScopeStates(context.Context, *GetScopeStatesRequest) (*GetScopeStatesResponse, error)
	// Ends a run and returns once it is no longer live: its unanswered tool
	// calls are no longer in flight (the next Load repairs them) and the
	// session may be attached again at once. Its Attach stream ends with
	// FAILED_PRECONDITION, reason UNKNOWN_RUN (metadata cause "ended").
	// Idempotent: ending a run that is not live (already ended, dropped,
	// never issued) succeeds with `was_live` false, so a retry is safe.
	EndRun(context.Context, *EndRunRequest) (*EndRunResponse, error)
	// Renews a run that asked for ping liveness (AttachRequest.
	// ping_timeout_seconds); any Append naming the run renews it too. A run
	// that is not live gets FAILED_PRECONDITION, reason UNKNOWN_RUN.
	PingRun(context.Context, *PingRunRequest) (*PingRunResponse, error)
	mustEmbedUnimplementedSessionServiceServer()
}

// UnimplementedSessionServiceServer must be embedded to have
// forward compatible implementations.
//
// NOTE: this should be embedded by value instead of pointer to avoid a nil
// pointer dereference when methods are called.
type UnimplementedSessionServiceServer struct{}

func (UnimplementedSessionServiceServer) Load(*LoadRequest, grpc.ServerStreamingServer[LoadResponse]) error {
	return status.Errorf(codes.Unimplemented, "method Load not implemented")
}
func (UnimplementedSessionServiceServer) Append(context.Context, *AppendRequest) (*AppendResponse, error) {
	return nil, status.Errorf(codes.Unimplemented, "method Append not implemented")
}
func (UnimplementedSessionServiceServer) AppendStream(grpc.BidiStreamingServer[AppendStreamRequest, AppendStreamResponse]) error {
	return status.Errorf(codes.Unimplemented, "method AppendStream not implemented")
}
func (UnimplementedSessionServiceServer) RecordUsage(context.Context, *RecordUsageRequest) (*RecordUsageResponse, error) {
	return nil, status.Errorf(codes.Unimplemented, "method RecordUsage not implemented")
}
func (UnimplementedSessionServiceServer) Clear(context.Context, *ClearRequest) (*ClearResponse, error) {
	return nil, status.Errorf(codes.Unimplemented, "method Clear not implemented")
}
func (UnimplementedSessionServiceServer) RecordEvent(context.Context, *RecordEventRequest) (*RecordEventResponse, error) {
	return nil, status.Errorf(codes.Unimplemented, "method RecordEvent not implemented")
}
func (UnimplementedSessionServiceServer) Attach(*AttachRequest, grpc.ServerStreamingServer[AttachResponse]) error {
	return status.Errorf(codes.Unimplemented, "method Attach not implemented")
}
func (UnimplementedSessionServiceServer) Watch(*WatchRequest, grpc.ServerStreamingServer[WatchResponse]) error {
	return status.Errorf(codes.Unimplemented, "method Watch not implemented")
}
func (UnimplementedSessionServiceServer) ListSessions(context.Context, *ListSessionsRequest) (*ListSessionsResponse, error) {
	return nil, status.Errorf(codes.Unimplemented, "method ListSessions not implemented")
}
func (UnimplementedSessionServiceServer) GetUsage(context.Context, *GetUsageRequest) (*GetUsageResponse, error) {
	return nil, status.Errorf(codes.Unimplemented, "method GetUsage not implemented")
}
func (UnimplementedSessionServiceServer) Delete(context.Context, *DeleteRequest) (*DeleteResponse, error) {
	return nil, status.Errorf(codes.Unimplemented, "method Delete not implemented")
}
func (UnimplementedSessionServiceServer) Export(*ExportRequest, grpc.ServerStreamingServer[ExportResponse]) error {
	return status.Errorf(codes.Unimplemented, "method Export not implemented")
}
func (UnimplementedSessionServiceServer) Import(context.Context, *ImportRequest) (*ImportResponse, error) {
	return nil, status.Errorf(codes.Unimplemented, "method Import not implemented")
}
func (UnimplementedSessionServiceServer) GetStats(context.Context, *GetStatsRequest) (*GetStatsResponse, error) {
	return nil, status.Errorf(codes.Unimplemented, "method GetStats not implemented")
}
func (UnimplementedSessionServiceServer) Backup(*BackupRequest, grpc.ServerStreamingServer[BackupResponse]) error {
	return status.Errorf(codes.Unimplemented, "method Backup not implemented")
}
func (UnimplementedSessionServiceServer) Search(context.Context, *SearchRequest) (*SearchResponse, error) {
	return nil, status.Errorf(codes.Unimplemented, "method Search not implemented")
}
func (UnimplementedSessionServiceServer) WatchAll(*WatchAllRequest, grpc.ServerStreamingServer[WatchAllResponse]) error {
	return status.Errorf(codes.Unimplemented, "method WatchAll not implemented")
}
func (UnimplementedSessionServiceServer) GetUsageReport(context.Context, *GetUsageReportRequest) (*GetUsageReportResponse, error) {
	return nil, status.Errorf(codes.Unimplemented, "method GetUsageReport not implemented")
}
func (UnimplementedSessionServiceServer) EditTail(context.Context, *EditTailRequest) (*EditTailResponse, error) {
	return nil, status.Errorf(codes.Unimplemented, "method EditTail not implemented")
}
func (UnimplementedSessionServiceServer) DeleteEntries(context.Context, *DeleteEntriesRequest) (*DeleteEntriesResponse, error) {
	return nil, status.Errorf(codes.Unimplemented, "method DeleteEntries not implemented")
}
func (UnimplementedSessionServiceServer) CreateSession(context.Context, *CreateSessionRequest) (*CreateSessionResponse, error) {
	return nil, status.Errorf(codes.Unimplemented, "method CreateSession not implemented")
}
func (UnimplementedSessionServiceServer) ForkSession(context.Context, *ForkSessionRequest) (*ForkSessionResponse, error) {
	return nil, status.Errorf(codes.Unimplemented, "method ForkSession not implemented")
}
func (UnimplementedSessionServiceServer) UpdateSession(context.Context, *UpdateSessionRequest) (*UpdateSessionResponse, error) {
	return nil, status.Errorf(codes.Unimplemented, "method UpdateSession not implemented")
}
func (UnimplementedSessionServiceServer) GetScopeStates(context.Context, *GetScopeStatesRequest) (*GetScopeStatesResponse, error) {
	return nil, status.Errorf(codes.Unimplemented, "method GetScopeStates not implemented")
}
func (UnimplementedSessionServiceServer) EndRun(context.Context, *EndRunRequest) (*EndRunResponse, error) {
	return nil, status.Errorf(codes.Unimplemented, "method EndRun not implemented")
}
func (UnimplementedSessionServiceServer) PingRun(context.Context, *PingRunRequest) (*PingRunResponse, error) {
	return nil, status.Errorf(codes.Unimplemented, "method PingRun not implemented")
}
func (UnimplementedSessionServiceServer) mustEmbedUnimplementedSessionServiceServer() {}
func (UnimplementedSessionServiceServer) testEmbeddedByValue()                        {}

// UnsafeSessionServiceServer may be embedded to opt out of forward compatibility for this service.
// Use of this interface is not recommended, as added methods to SessionServiceServer will
// result in compilation errors.
type UnsafeSessionServiceServer interface {
	mustEmbedUnimplementedSessionServiceServer()
}

func RegisterSessionServiceServer(s grpc.ServiceRegistrar, srv SessionServiceServer) {
	// If the following call pancis, it indicates UnimplementedSessionServiceServer was
	// embedded by pointer and is nil.  This will cause panics if an
	// unimplemented method is ever invoked, so we test this at initialization
	// time to prevent it from happening at runtime later due to I/O.
	if t, ok := srv.(interface{ testEmbeddedByValue() }); ok {
		t.testEmbeddedByValue()
	}
	s.RegisterService(&SessionService_ServiceDesc, srv)
}

func _SessionService_Load_Handler(srv interface{}, stream grpc.ServerStream) error {
	m := new(LoadRequest)
	if err := stream.RecvMsg(m); err != nil {
		return err
	}
	return srv.(SessionServiceServer).Load(m, &grpc.GenericServerStream[LoadRequest, LoadResponse]{ServerStream: stream})
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type SessionService_LoadServer = grpc.ServerStreamingServer[LoadResponse]

func _SessionService_Append_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(AppendRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(SessionServiceServer).Append(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: SessionService_Append_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(SessionServiceServer).Append(ctx, req.(*AppendRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _SessionService_AppendStream_Handler(srv interface{}, stream grpc.ServerStream) error {
	return srv.(SessionServiceServer).AppendStream(&grpc.GenericServerStream[AppendStreamRequest, AppendStreamResponse]{ServerStream: stream})
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type SessionService_AppendStreamServer = grpc.BidiStreamingServer[AppendStreamRequest, AppendStreamResponse]

func _SessionService_RecordUsage_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(RecordUsageRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(SessionServiceServer).RecordUsage(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: SessionService_RecordUsage_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(SessionServiceServer).RecordUsage(ctx, req.(*RecordUsageRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _SessionService_Clear_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(ClearRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(SessionServiceServer).Clear(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: SessionService_Clear_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(SessionServiceServer).Clear(ctx, req.(*ClearRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _SessionService_RecordEvent_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(RecordEventRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(SessionServiceServer).RecordEvent(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: SessionService_RecordEvent_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(SessionServiceServer).RecordEvent(ctx, req.(*RecordEventRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _SessionService_Attach_Handler(srv interface{}, stream grpc.ServerStream) error {
	m := new(AttachRequest)
	if err := stream.RecvMsg(m); err != nil {
		return err
	}
	return srv.(SessionServiceServer).Attach(m, &grpc.GenericServerStream[AttachRequest, AttachResponse]{ServerStream: stream})
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type SessionService_AttachServer = grpc.ServerStreamingServer[AttachResponse]

func _SessionService_Watch_Handler(srv interface{}, stream grpc.ServerStream) error {
	m := new(WatchRequest)
	if err := stream.RecvMsg(m); err != nil {
		return err
	}
	return srv.(SessionServiceServer).Watch(m, &grpc.GenericServerStream[WatchRequest, WatchResponse]{ServerStream: stream})
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type SessionService_WatchServer = grpc.ServerStreamingServer[WatchResponse]

func _SessionService_ListSessions_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(ListSessionsRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(SessionServiceServer).ListSessions(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: SessionService_ListSessions_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(SessionServiceServer).ListSessions(ctx, req.(*ListSessionsRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _SessionService_GetUsage_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(GetUsageRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(SessionServiceServer).GetUsage(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: SessionService_GetUsage_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(SessionServiceServer).GetUsage(ctx, req.(*GetUsageRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _SessionService_Delete_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(DeleteRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(SessionServiceServer).Delete(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: SessionService_Delete_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(SessionServiceServer).Delete(ctx, req.(*DeleteRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _SessionService_Export_Handler(srv interface{}, stream grpc.ServerStream) error {
	m := new(ExportRequest)
	if err := stream.RecvMsg(m); err != nil {
		return err
	}
	return srv.(SessionServiceServer).Export(m, &grpc.GenericServerStream[ExportRequest, ExportResponse]{ServerStream: stream})
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type SessionService_ExportServer = grpc.ServerStreamingServer[ExportResponse]

func _SessionService_Import_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(ImportRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(SessionServiceServer).Import(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: SessionService_Import_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(SessionServiceServer).Import(ctx, req.(*ImportRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _SessionService_GetStats_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(GetStatsRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(SessionServiceServer).GetStats(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: SessionService_GetStats_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(SessionServiceServer).GetStats(ctx, req.(*GetStatsRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _SessionService_Backup_Handler(srv interface{}, stream grpc.ServerStream) error {
	m := new(BackupRequest)
	if err := stream.RecvMsg(m); err != nil {
		return err
	}
	return srv.(SessionServiceServer).Backup(m, &grpc.GenericServerStream[BackupRequest, BackupResponse]{ServerStream: stream})
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type SessionService_BackupServer = grpc.ServerStreamingServer[BackupResponse]

func _SessionService_Search_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(SearchRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(SessionServiceServer).Search(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: SessionService_Search_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(SessionServiceServer).Search(ctx, req.(*SearchRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _SessionService_WatchAll_Handler(srv interface{}, stream grpc.ServerStream) error {
	m := new(WatchAllRequest)
	if err := stream.RecvMsg(m); err != nil {
		return err
	}
	return srv.(SessionServiceServer).WatchAll(m, &grpc.GenericServerStream[WatchAllRequest, WatchAllResponse]{ServerStream: stream})
}

// This type alias is provided for backwards compatibility with existing code that references the prior non-generic stream type by name.
type SessionService_WatchAllServer = grpc.ServerStreamingServer[WatchAllResponse]

func _SessionService_GetUsageReport_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(GetUsageReportRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(SessionServiceServer).GetUsageReport(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: SessionService_GetUsageReport_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(SessionServiceServer).GetUsageReport(ctx, req.(*GetUsageReportRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _SessionService_EditTail_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(EditTailRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(SessionServiceServer).EditTail(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: SessionService_EditTail_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(SessionServiceServer).EditTail(ctx, req.(*EditTailRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _SessionService_DeleteEntries_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(DeleteEntriesRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(SessionServiceServer).DeleteEntries(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: SessionService_DeleteEntries_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(SessionServiceServer).DeleteEntries(ctx, req.(*DeleteEntriesRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _SessionService_CreateSession_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(CreateSessionRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(SessionServiceServer).CreateSession(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: SessionService_CreateSession_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(SessionServiceServer).CreateSession(ctx, req.(*CreateSessionRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _SessionService_ForkSession_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(ForkSessionRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(SessionServiceServer).ForkSession(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: SessionService_ForkSession_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(SessionServiceServer).ForkSession(ctx, req.(*ForkSessionRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _SessionService_UpdateSession_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(UpdateSessionRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(SessionServiceServer).UpdateSession(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: SessionService_UpdateSession_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(SessionServiceServer).UpdateSession(ctx, req.(*UpdateSessionRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _SessionService_GetScopeStates_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(GetScopeStatesRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(SessionServiceServer).GetScopeStates(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: SessionService_GetScopeStates_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(SessionServiceServer).GetScopeStates(ctx, req.(*GetScopeStatesRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _SessionService_EndRun_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(EndRunRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(SessionServiceServer).EndRun(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: SessionService_EndRun_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(SessionServiceServer).EndRun(ctx, req.(*EndRunRequest))
	}
	return interceptor(ctx, in, info, handler)
}

func _SessionService_PingRun_Handler(srv interface{}, ctx context.Context, dec func(interface{}) error, interceptor grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(PingRunRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	if interceptor == nil {
		return srv.(SessionServiceServer).PingRun(ctx, in)
	}
	info := &grpc.UnaryServerInfo{
		Server:     srv,
		FullMethod: SessionService_PingRun_FullMethodName,
	}
	handler := func(ctx context.Context, req interface{}) (interface{}, error) {
		return srv.(SessionServiceServer).PingRun(ctx, req.(*PingRunRequest))
	}
	return interceptor(ctx, in, info, handler)
}

// SessionService_ServiceDesc is the grpc.ServiceDesc for SessionService service.
// It's only intended for direct use with grpc.RegisterService,
// and not to be introspected or modified (even as a copy)
var SessionService_ServiceDesc = grpc.ServiceDesc{
	ServiceName: "claw.sessiond.v1.SessionService",
	HandlerType: (*SessionServiceServer)(nil),
	Methods: []grpc.MethodDesc{
		{
			MethodName: "Append",
			Handler:    _SessionService_Append_Handler,
		},
		{
			MethodName: "RecordUsage",
			Handler:    _SessionService_RecordUsage_Handler,
		},
		{
			MethodName: "Clear",
			Handler:    _SessionService_Clear_Handler,
		},
		{
			MethodName: "RecordEvent",
			Handler:    _SessionService_RecordEvent_Handler,
		},
		{
			MethodName: "ListSessions",
			Handler:    _SessionService_ListSessions_Handler,
		},
		{
			MethodName: "GetUsage",
			Handler:    _SessionService_GetUsage_Handler,
		},
		{
			MethodName: "Delete",
			Handler:    _SessionService_Delete_Handler,
		},
		{
			MethodName: "Import",
			Handler:    _SessionService_Import_Handler,
		},
		{
			MethodName: "GetStats",
			Handler:    _SessionService_GetStats_Handler,
		},
		{
			MethodName: "Search",
			Handler:    _SessionService_Search_Handler,
		},
		{
			MethodName: "GetUsageReport",
			Handler:    _SessionService_GetUsageReport_Handler,
		},
		{
			MethodName: "EditTail",
			Handler:    _SessionService_EditTail_Handler,
		},
		{
			MethodName: "DeleteEntries",
			Handler:    _SessionService_DeleteEntries_Handler,
		},
		{
			MethodName: "CreateSession",
			Handler:    _SessionService_CreateSession_Handler,
		},
		{
			MethodName: "ForkSession",
			Handler:    _SessionService_ForkSession_Handler,
		},
		{
			MethodName: "UpdateSession",
			Handler:    _SessionService_UpdateSession_Handler,
		},
		{
			MethodName: "GetScopeStates",
			Handler:    _SessionService_GetScopeStates_Handler,
		},
		{
			MethodName: "EndRun",
			Handler:    _SessionService_EndRun_Handler,
		},
		{
			MethodName: "PingRun",
			Handler:    _SessionService_PingRun_Handler,
		},
	},
	Streams: []grpc.StreamDesc{
		{
			StreamName:    "Load",
			Handler:       _SessionService_Load_Handler,
			ServerStreams: true,
		},
		{
			StreamName:    "AppendStream",
			Handler:       _SessionService_AppendStream_Handler,
			ServerStreams: true,
			ClientStreams: true,
		},
		{
			StreamName:    "Attach",
			Handler:       _SessionService_Attach_Handler,
			ServerStreams: true,
		},
		{
			StreamName:    "Watch",
			Handler:       _SessionService_Watch_Handler,
			ServerStreams: true,
		},
		{
			StreamName:    "Export",
			Handler:       _SessionService_Export_Handler,
			ServerStreams: true,
		},
		{
			StreamName:    "Backup",
			Handler:       _SessionService_Backup_Handler,
			ServerStreams: true,
		},
		{
			StreamName:    "WatchAll",
			Handler:       _SessionService_WatchAll_Handler,
			ServerStreams: true,
		},
	},
	Metadata: "claw/sessiond/v1/sessiond.proto",
}
