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
// (--max-entry-bytes); a batch up to 10000 messages (--max-batch-messages); a
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

// Code generated by protoc-gen-go. DO NOT EDIT.
// versions:
// 	protoc-gen-go v1.36.12
// 	protoc        v7.35.1
// source: claw/sessiond/v1/sessiond.proto

package sessiondv1

import (
	protoreflect "google.golang.org/protobuf/reflect/protoreflect"
	protoimpl "google.golang.org/protobuf/runtime/protoimpl"
	timestamppb "google.golang.org/protobuf/types/known/timestamppb"
	reflect "reflect"
	sync "sync"
	unsafe "unsafe"
)

const (
	// Verify that this generated code is sufficiently up-to-date.
	_ = protoimpl.EnforceVersion(20 - protoimpl.MinVersion)
	// Verify that runtime/protoimpl is sufficiently up-to-date.
	_ = protoimpl.EnforceVersion(protoimpl.MaxVersion - 20)
)

// Who wrote a message.
type Role int32

const (
	// Never valid in a request.
	Role_ROLE_UNSPECIFIED Role = 0
	// Instructions for the model.
	Role_ROLE_SYSTEM Role = 1
	// A person's (or a calling program's) turn.
	Role_ROLE_USER Role = 2
	// The model's turn; may carry tool calls.
	Role_ROLE_ASSISTANT Role = 3
	// A tool result answering one tool call (`tool_call_id`).
	Role_ROLE_TOOL Role = 4
	// An entry with no conversation role: a reasoning item, a hosted tool call
	// (web search, code interpreter, computer use, MCP), a compaction item, a
	// state-only framework event. Requires `Message.item`; kept in order,
	// ignored by tool-call pairing and repair, not searched.
	Role_ROLE_OTHER Role = 5
)

// Enum value maps for Role.
var (
	Role_name = map[int32]string{
		0: "ROLE_UNSPECIFIED",
		1: "ROLE_SYSTEM",
		2: "ROLE_USER",
		3: "ROLE_ASSISTANT",
		4: "ROLE_TOOL",
		5: "ROLE_OTHER",
	}
	Role_value = map[string]int32{
		"ROLE_UNSPECIFIED": 0,
		"ROLE_SYSTEM":      1,
		"ROLE_USER":        2,
		"ROLE_ASSISTANT":   3,
		"ROLE_TOOL":        4,
		"ROLE_OTHER":       5,
	}
)

func (x Role) Enum() *Role {
	p := new(Role)
	*p = x
	return p
}

func (x Role) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (Role) Descriptor() protoreflect.EnumDescriptor {
	return file_claw_sessiond_v1_sessiond_proto_enumTypes[0].Descriptor()
}

func (Role) Type() protoreflect.EnumType {
	return &file_claw_sessiond_v1_sessiond_proto_enumTypes[0]
}

func (x Role) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use Role.Descriptor instead.
func (Role) EnumDescriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{0}
}

// What Load does with a tool call that has no result and no live owner.
type RepairMode int32

const (
	// The session's mode (CreateSession / UpdateSession), else SYNTHESIZE.
	RepairMode_REPAIR_MODE_UNSPECIFIED RepairMode = 0
	// Write a synthetic "interrupted" tool result (today's behaviour).
	RepairMode_REPAIR_MODE_SYNTHESIZE RepairMode = 1
	// Hide the open call from the projection (an entry left with no text and
	// no calls is hidden whole); the log keeps it; nothing is written.
	RepairMode_REPAIR_MODE_DROP RepairMode = 2
	// Leave it open and visible.
	RepairMode_REPAIR_MODE_OFF RepairMode = 3
)

// Enum value maps for RepairMode.
var (
	RepairMode_name = map[int32]string{
		0: "REPAIR_MODE_UNSPECIFIED",
		1: "REPAIR_MODE_SYNTHESIZE",
		2: "REPAIR_MODE_DROP",
		3: "REPAIR_MODE_OFF",
	}
	RepairMode_value = map[string]int32{
		"REPAIR_MODE_UNSPECIFIED": 0,
		"REPAIR_MODE_SYNTHESIZE":  1,
		"REPAIR_MODE_DROP":        2,
		"REPAIR_MODE_OFF":         3,
	}
)

func (x RepairMode) Enum() *RepairMode {
	p := new(RepairMode)
	*p = x
	return p
}

func (x RepairMode) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (RepairMode) Descriptor() protoreflect.EnumDescriptor {
	return file_claw_sessiond_v1_sessiond_proto_enumTypes[1].Descriptor()
}

func (RepairMode) Type() protoreflect.EnumType {
	return &file_claw_sessiond_v1_sessiond_proto_enumTypes[1]
}

func (x RepairMode) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use RepairMode.Descriptor instead.
func (RepairMode) EnumDescriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{1}
}

// Why the daemon wrote a message itself.
type SyntheticReason int32

const (
	// Not synthetic: a client wrote this message.
	SyntheticReason_SYNTHETIC_REASON_UNSPECIFIED SyntheticReason = 0
	// The tool call's run ended before its result was stored. The tool was not
	// re-run; the model should decide what to do next.
	SyntheticReason_SYNTHETIC_REASON_INTERRUPTED SyntheticReason = 1
)

// Enum value maps for SyntheticReason.
var (
	SyntheticReason_name = map[int32]string{
		0: "SYNTHETIC_REASON_UNSPECIFIED",
		1: "SYNTHETIC_REASON_INTERRUPTED",
	}
	SyntheticReason_value = map[string]int32{
		"SYNTHETIC_REASON_UNSPECIFIED": 0,
		"SYNTHETIC_REASON_INTERRUPTED": 1,
	}
)

func (x SyntheticReason) Enum() *SyntheticReason {
	p := new(SyntheticReason)
	*p = x
	return p
}

func (x SyntheticReason) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (SyntheticReason) Descriptor() protoreflect.EnumDescriptor {
	return file_claw_sessiond_v1_sessiond_proto_enumTypes[2].Descriptor()
}

func (SyntheticReason) Type() protoreflect.EnumType {
	return &file_claw_sessiond_v1_sessiond_proto_enumTypes[2]
}

func (x SyntheticReason) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use SyntheticReason.Descriptor instead.
func (SyntheticReason) EnumDescriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{2}
}

// Kinds of audit events recorded with RecordEvent.
type EventKind int32

const (
	// Never valid.
	EventKind_EVENT_KIND_UNSPECIFIED EventKind = 0
	// A tool call was refused by the permission layer.
	EventKind_EVENT_KIND_PERMISSION_DENIAL EventKind = 1
	// The harness hit an error (model API, tool crash, ...).
	EventKind_EVENT_KIND_ERROR EventKind = 2
)

// Enum value maps for EventKind.
var (
	EventKind_name = map[int32]string{
		0: "EVENT_KIND_UNSPECIFIED",
		1: "EVENT_KIND_PERMISSION_DENIAL",
		2: "EVENT_KIND_ERROR",
	}
	EventKind_value = map[string]int32{
		"EVENT_KIND_UNSPECIFIED":       0,
		"EVENT_KIND_PERMISSION_DENIAL": 1,
		"EVENT_KIND_ERROR":             2,
	}
)

func (x EventKind) Enum() *EventKind {
	p := new(EventKind)
	*p = x
	return p
}

func (x EventKind) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (EventKind) Descriptor() protoreflect.EnumDescriptor {
	return file_claw_sessiond_v1_sessiond_proto_enumTypes[3].Descriptor()
}

func (EventKind) Type() protoreflect.EnumType {
	return &file_claw_sessiond_v1_sessiond_proto_enumTypes[3]
}

func (x EventKind) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use EventKind.Descriptor instead.
func (EventKind) EnumDescriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{3}
}

// Conflict policy for Import.
type ImportMode int32

const (
	// Refuse if the session exists (FAILED_PRECONDITION).
	ImportMode_IMPORT_MODE_UNSPECIFIED ImportMode = 0
	// Delete the existing session first.
	ImportMode_IMPORT_MODE_REPLACE ImportMode = 1
	// Append the imported events after the existing ones.
	ImportMode_IMPORT_MODE_MERGE ImportMode = 2
)

// Enum value maps for ImportMode.
var (
	ImportMode_name = map[int32]string{
		0: "IMPORT_MODE_UNSPECIFIED",
		1: "IMPORT_MODE_REPLACE",
		2: "IMPORT_MODE_MERGE",
	}
	ImportMode_value = map[string]int32{
		"IMPORT_MODE_UNSPECIFIED": 0,
		"IMPORT_MODE_REPLACE":     1,
		"IMPORT_MODE_MERGE":       2,
	}
)

func (x ImportMode) Enum() *ImportMode {
	p := new(ImportMode)
	*p = x
	return p
}

func (x ImportMode) String() string {
	return protoimpl.X.EnumStringOf(x.Descriptor(), protoreflect.EnumNumber(x))
}

func (ImportMode) Descriptor() protoreflect.EnumDescriptor {
	return file_claw_sessiond_v1_sessiond_proto_enumTypes[4].Descriptor()
}

func (ImportMode) Type() protoreflect.EnumType {
	return &file_claw_sessiond_v1_sessiond_proto_enumTypes[4]
}

func (x ImportMode) Number() protoreflect.EnumNumber {
	return protoreflect.EnumNumber(x)
}

// Deprecated: Use ImportMode.Descriptor instead.
func (ImportMode) EnumDescriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{4}
}

// One tool invocation requested by an assistant message.
type ToolCall struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Call id, unique within the session's visible history (for example "call_1").
	Id string `protobuf:"bytes,1,opt,name=id,proto3" json:"id,omitempty"`
	// Tool name (for example "bash").
	Name string `protobuf:"bytes,2,opt,name=name,proto3" json:"name,omitempty"`
	// Arguments as JSON text. Must parse as JSON unless the append's tool policy
	// allows unparsed calls (then stored as given and `arguments_not_json` is
	// set). Comes back exactly as given.
	Arguments string `protobuf:"bytes,3,opt,name=arguments,proto3" json:"arguments,omitempty"`
	// The call awaits something outside the run (a person's approval, a
	// long-running tool): it is never repaired, dropped or counted as
	// interrupted until a result answers it (or a cancelling result, see
	// Message.cancelled), whether or not its process lives.
	Pending bool `protobuf:"varint,4,opt,name=pending,proto3" json:"pending,omitempty"`
	// Set by the daemon: `arguments` did not parse as JSON (stored because the
	// policy allowed it).
	ArgumentsNotJson bool `protobuf:"varint,5,opt,name=arguments_not_json,json=argumentsNotJson,proto3" json:"arguments_not_json,omitempty"`
	unknownFields    protoimpl.UnknownFields
	sizeCache        protoimpl.SizeCache
}

func (x *ToolCall) Reset() {
	*x = ToolCall{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[0]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ToolCall) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ToolCall) ProtoMessage() {}

func (x *ToolCall) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[0]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ToolCall.ProtoReflect.Descriptor instead.
func (*ToolCall) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{0}
}

func (x *ToolCall) GetId() string {
	if x != nil {
		return x.Id
	}
	return ""
}

func (x *ToolCall) GetName() string {
	if x != nil {
		return x.Name
	}
	return ""
}

func (x *ToolCall) GetArguments() string {
	if x != nil {
		return x.Arguments
	}
	return ""
}

func (x *ToolCall) GetPending() bool {
	if x != nil {
		return x.Pending
	}
	return false
}

func (x *ToolCall) GetArgumentsNotJson() bool {
	if x != nil {
		return x.ArgumentsNotJson
	}
	return false
}

// Tool-call rules chosen by the caller, per session or per append. Every
// field unset means the session's policy; a session with none set has
// today's behaviour (synthesize; orphan results, non-JSON and id-less calls
// refused).
type ToolPolicy struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Repair mode for the calls of this append (or the session's default).
	Repair RepairMode `protobuf:"varint,1,opt,name=repair,proto3,enum=claw.sessiond.v1.RepairMode" json:"repair,omitempty"`
	// Store a tool result whose call is unknown (flagged `orphan`, never paired).
	AllowOrphanResults bool `protobuf:"varint,2,opt,name=allow_orphan_results,json=allowOrphanResults,proto3" json:"allow_orphan_results,omitempty"`
	// Store calls whose arguments are not JSON, and calls without an id (never
	// paired, never repaired; flagged).
	AllowUnparsedCalls bool `protobuf:"varint,3,opt,name=allow_unparsed_calls,json=allowUnparsedCalls,proto3" json:"allow_unparsed_calls,omitempty"`
	unknownFields      protoimpl.UnknownFields
	sizeCache          protoimpl.SizeCache
}

func (x *ToolPolicy) Reset() {
	*x = ToolPolicy{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[1]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ToolPolicy) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ToolPolicy) ProtoMessage() {}

func (x *ToolPolicy) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[1]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ToolPolicy.ProtoReflect.Descriptor instead.
func (*ToolPolicy) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{1}
}

func (x *ToolPolicy) GetRepair() RepairMode {
	if x != nil {
		return x.Repair
	}
	return RepairMode_REPAIR_MODE_UNSPECIFIED
}

func (x *ToolPolicy) GetAllowOrphanResults() bool {
	if x != nil {
		return x.AllowOrphanResults
	}
	return false
}

func (x *ToolPolicy) GetAllowUnparsedCalls() bool {
	if x != nil {
		return x.AllowUnparsedCalls
	}
	return false
}

// Token usage and cost carried by one entry; added to the session's totals
// (and per-model usage) in the same transaction as the append.
type EntryUsage struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Prompt tokens of this entry.
	InputTokens int64 `protobuf:"varint,1,opt,name=input_tokens,json=inputTokens,proto3" json:"input_tokens,omitempty"`
	// Completion tokens of this entry.
	OutputTokens int64 `protobuf:"varint,2,opt,name=output_tokens,json=outputTokens,proto3" json:"output_tokens,omitempty"`
	// Prompt tokens read from a provider cache.
	CacheReadTokens int64 `protobuf:"varint,3,opt,name=cache_read_tokens,json=cacheReadTokens,proto3" json:"cache_read_tokens,omitempty"`
	// Prompt tokens written to a provider cache.
	CacheWriteTokens int64 `protobuf:"varint,4,opt,name=cache_write_tokens,json=cacheWriteTokens,proto3" json:"cache_write_tokens,omitempty"`
	// Millionths of `currency`.
	CostMicros int64 `protobuf:"varint,5,opt,name=cost_micros,json=costMicros,proto3" json:"cost_micros,omitempty"`
	// ISO 4217; required when cost_micros > 0.
	Currency string `protobuf:"bytes,6,opt,name=currency,proto3" json:"currency,omitempty"`
	// Model id that produced the tokens.
	Model string `protobuf:"bytes,7,opt,name=model,proto3" json:"model,omitempty"`
	// Version of the price table the cost was computed with.
	PricingVersion string `protobuf:"bytes,8,opt,name=pricing_version,json=pricingVersion,proto3" json:"pricing_version,omitempty"`
	unknownFields  protoimpl.UnknownFields
	sizeCache      protoimpl.SizeCache
}

func (x *EntryUsage) Reset() {
	*x = EntryUsage{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[2]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *EntryUsage) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*EntryUsage) ProtoMessage() {}

func (x *EntryUsage) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[2]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use EntryUsage.ProtoReflect.Descriptor instead.
func (*EntryUsage) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{2}
}

func (x *EntryUsage) GetInputTokens() int64 {
	if x != nil {
		return x.InputTokens
	}
	return 0
}

func (x *EntryUsage) GetOutputTokens() int64 {
	if x != nil {
		return x.OutputTokens
	}
	return 0
}

func (x *EntryUsage) GetCacheReadTokens() int64 {
	if x != nil {
		return x.CacheReadTokens
	}
	return 0
}

func (x *EntryUsage) GetCacheWriteTokens() int64 {
	if x != nil {
		return x.CacheWriteTokens
	}
	return 0
}

func (x *EntryUsage) GetCostMicros() int64 {
	if x != nil {
		return x.CostMicros
	}
	return 0
}

func (x *EntryUsage) GetCurrency() string {
	if x != nil {
		return x.Currency
	}
	return ""
}

func (x *EntryUsage) GetModel() string {
	if x != nil {
		return x.Model
	}
	return ""
}

func (x *EntryUsage) GetPricingVersion() string {
	if x != nil {
		return x.PricingVersion
	}
	return ""
}

// Marks a message the daemon wrote on its own (a repair).
type Synthetic struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Why it was written.
	Reason        SyntheticReason `protobuf:"varint,1,opt,name=reason,proto3,enum=claw.sessiond.v1.SyntheticReason" json:"reason,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *Synthetic) Reset() {
	*x = Synthetic{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[3]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Synthetic) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Synthetic) ProtoMessage() {}

func (x *Synthetic) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[3]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Synthetic.ProtoReflect.Descriptor instead.
func (*Synthetic) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{3}
}

func (x *Synthetic) GetReason() SyntheticReason {
	if x != nil {
		return x.Reason
	}
	return SyntheticReason_SYNTHETIC_REASON_UNSPECIFIED
}

// One entry of the history.
type Message struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Who wrote it. Required in requests.
	Role Role `protobuf:"varint,1,opt,name=role,proto3,enum=claw.sessiond.v1.Role" json:"role,omitempty"`
	// Text content. May be empty (for example an assistant message with only tool calls).
	Content string `protobuf:"bytes,2,opt,name=content,proto3" json:"content,omitempty"`
	// Tool calls requested by an assistant message (assistant only).
	ToolCalls []*ToolCall `protobuf:"bytes,3,rep,name=tool_calls,json=toolCalls,proto3" json:"tool_calls,omitempty"`
	// For a tool message: the id of the call it answers (required for tool, forbidden otherwise).
	ToolCallId string `protobuf:"bytes,4,opt,name=tool_call_id,json=toolCallId,proto3" json:"tool_call_id,omitempty"`
	// Optional author or tool name.
	Name string `protobuf:"bytes,5,opt,name=name,proto3" json:"name,omitempty"`
	// Set only by the daemon, on messages it wrote itself; ignored in requests.
	Synthetic *Synthetic `protobuf:"bytes,6,opt,name=synthetic,proto3" json:"synthetic,omitempty"`
	// Server-assigned position in the session's history (1, 2, 3, ...; never
	// reused, also not after Clear). Ignored in requests.
	Position int64 `protobuf:"varint,7,opt,name=position,proto3" json:"position,omitempty"`
	// Server-assigned time the message was stored (UTC). Ignored in requests.
	CreatedAt *timestamppb.Timestamp `protobuf:"bytes,8,opt,name=created_at,json=createdAt,proto3" json:"created_at,omitempty"`
	// Trace id of the call that stored it.
	TraceId string `protobuf:"bytes,9,opt,name=trace_id,json=traceId,proto3" json:"trace_id,omitempty"`
	// Format tag of `item`: 1-64 bytes of [a-z0-9._-], starting with a letter
	// or digit (for example "openai.responses", "openai.chat",
	// "anthropic.messages", "langchain", "adk.event", or the caller's own).
	// Empty: no item (a plain message).
	Format string `protobuf:"bytes,10,opt,name=format,proto3" json:"format,omitempty"`
	// The framework's own item (JSON or any bytes), stored and returned byte
	// for byte. Required with `format` and for ROLE_OTHER. At most
	// max_entry_bytes (default 16 MiB, see README "Limits").
	Item []byte `protobuf:"bytes,11,opt,name=item,proto3" json:"item,omitempty"`
	// Client id of the entry (1-256 bytes), unique within the session's visible
	// history when given (a duplicate is ALREADY_EXISTS, nothing written).
	ClientId string `protobuf:"bytes,12,opt,name=client_id,json=clientId,proto3" json:"client_id,omitempty"`
	// Per-entry metadata: a JSON object text, returned exactly as given.
	Metadata string `protobuf:"bytes,13,opt,name=metadata,proto3" json:"metadata,omitempty"`
	// Usage of this entry (added to the session's totals on append).
	Usage *EntryUsage `protobuf:"bytes,14,opt,name=usage,proto3" json:"usage,omitempty"`
	// Tool message only: the call was cancelled (it did not run); answers a
	// pending call like a result.
	Cancelled bool `protobuf:"varint,15,opt,name=cancelled,proto3" json:"cancelled,omitempty"`
	// Set by the daemon: a tool result whose call is unknown (stored because
	// the policy allowed it); never paired.
	Orphan bool `protobuf:"varint,16,opt,name=orphan,proto3" json:"orphan,omitempty"`
	// Set by the daemon: this real result superseded the synthetic
	// "interrupted" result at this position (hidden from the projection; the
	// log keeps both).
	Supersedes    int64 `protobuf:"varint,17,opt,name=supersedes,proto3" json:"supersedes,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *Message) Reset() {
	*x = Message{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[4]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Message) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Message) ProtoMessage() {}

func (x *Message) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[4]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Message.ProtoReflect.Descriptor instead.
func (*Message) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{4}
}

func (x *Message) GetRole() Role {
	if x != nil {
		return x.Role
	}
	return Role_ROLE_UNSPECIFIED
}

func (x *Message) GetContent() string {
	if x != nil {
		return x.Content
	}
	return ""
}

func (x *Message) GetToolCalls() []*ToolCall {
	if x != nil {
		return x.ToolCalls
	}
	return nil
}

func (x *Message) GetToolCallId() string {
	if x != nil {
		return x.ToolCallId
	}
	return ""
}

func (x *Message) GetName() string {
	if x != nil {
		return x.Name
	}
	return ""
}

func (x *Message) GetSynthetic() *Synthetic {
	if x != nil {
		return x.Synthetic
	}
	return nil
}

func (x *Message) GetPosition() int64 {
	if x != nil {
		return x.Position
	}
	return 0
}

func (x *Message) GetCreatedAt() *timestamppb.Timestamp {
	if x != nil {
		return x.CreatedAt
	}
	return nil
}

func (x *Message) GetTraceId() string {
	if x != nil {
		return x.TraceId
	}
	return ""
}

func (x *Message) GetFormat() string {
	if x != nil {
		return x.Format
	}
	return ""
}

func (x *Message) GetItem() []byte {
	if x != nil {
		return x.Item
	}
	return nil
}

func (x *Message) GetClientId() string {
	if x != nil {
		return x.ClientId
	}
	return ""
}

func (x *Message) GetMetadata() string {
	if x != nil {
		return x.Metadata
	}
	return ""
}

func (x *Message) GetUsage() *EntryUsage {
	if x != nil {
		return x.Usage
	}
	return nil
}

func (x *Message) GetCancelled() bool {
	if x != nil {
		return x.Cancelled
	}
	return false
}

func (x *Message) GetOrphan() bool {
	if x != nil {
		return x.Orphan
	}
	return false
}

func (x *Message) GetSupersedes() int64 {
	if x != nil {
		return x.Supersedes
	}
	return 0
}

// Cumulative token usage and cost of a session. Survives Clear and restarts.
type Usage struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Prompt tokens, summed over every RecordUsage.
	InputTokens int64 `protobuf:"varint,1,opt,name=input_tokens,json=inputTokens,proto3" json:"input_tokens,omitempty"`
	// Completion tokens, summed.
	OutputTokens int64 `protobuf:"varint,2,opt,name=output_tokens,json=outputTokens,proto3" json:"output_tokens,omitempty"`
	// Prompt tokens served from a provider cache, summed.
	CacheReadTokens int64 `protobuf:"varint,3,opt,name=cache_read_tokens,json=cacheReadTokens,proto3" json:"cache_read_tokens,omitempty"`
	// Prompt tokens written to a provider cache, summed.
	CacheWriteTokens int64 `protobuf:"varint,4,opt,name=cache_write_tokens,json=cacheWriteTokens,proto3" json:"cache_write_tokens,omitempty"`
	// Cost in millionths of `currency` (exact; 1.5 USD is 1500000).
	CostMicros int64 `protobuf:"varint,5,opt,name=cost_micros,json=costMicros,proto3" json:"cost_micros,omitempty"`
	// ISO 4217 code of the cost (for example "USD"); empty while cost is 0.
	Currency      string `protobuf:"bytes,6,opt,name=currency,proto3" json:"currency,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *Usage) Reset() {
	*x = Usage{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[5]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Usage) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Usage) ProtoMessage() {}

func (x *Usage) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[5]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Usage.ProtoReflect.Descriptor instead.
func (*Usage) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{5}
}

func (x *Usage) GetInputTokens() int64 {
	if x != nil {
		return x.InputTokens
	}
	return 0
}

func (x *Usage) GetOutputTokens() int64 {
	if x != nil {
		return x.OutputTokens
	}
	return 0
}

func (x *Usage) GetCacheReadTokens() int64 {
	if x != nil {
		return x.CacheReadTokens
	}
	return 0
}

func (x *Usage) GetCacheWriteTokens() int64 {
	if x != nil {
		return x.CacheWriteTokens
	}
	return 0
}

func (x *Usage) GetCostMicros() int64 {
	if x != nil {
		return x.CostMicros
	}
	return 0
}

func (x *Usage) GetCurrency() string {
	if x != nil {
		return x.Currency
	}
	return ""
}

// Session metadata.
type Session struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Session id as given by the caller.
	Id string `protobuf:"bytes,1,opt,name=id,proto3" json:"id,omitempty"`
	// Working folder of the agent; Load's caller's value replaces the stored one.
	Workdir string `protobuf:"bytes,2,opt,name=workdir,proto3" json:"workdir,omitempty"`
	// When the session was first written (unset for a session not yet stored).
	CreatedAt *timestamppb.Timestamp `protobuf:"bytes,3,opt,name=created_at,json=createdAt,proto3" json:"created_at,omitempty"`
	// When the session last changed (unset for a session not yet stored).
	UpdatedAt *timestamppb.Timestamp `protobuf:"bytes,4,opt,name=updated_at,json=updatedAt,proto3" json:"updated_at,omitempty"`
	// Usage totals.
	Usage *Usage `protobuf:"bytes,5,opt,name=usage,proto3" json:"usage,omitempty"`
	// Highest position in the history (0 for a new session). Use it as
	// `expected_last_position` for optimistic concurrency.
	LastPosition int64 `protobuf:"varint,6,opt,name=last_position,json=lastPosition,proto3" json:"last_position,omitempty"`
	// True if the session has a row in the database.
	Stored bool `protobuf:"varint,7,opt,name=stored,proto3" json:"stored,omitempty"`
	// Number of messages in the visible history.
	MessageCount int64 `protobuf:"varint,8,opt,name=message_count,json=messageCount,proto3" json:"message_count,omitempty"`
	// The session's own state: a JSON object text ("{}" when empty).
	State string `protobuf:"bytes,9,opt,name=state,proto3" json:"state,omitempty"`
	// Labels (for example app and user); ListSessions filters on them.
	Labels map[string]string `protobuf:"bytes,10,rep,name=labels,proto3" json:"labels,omitempty" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	// The session's default tool policy.
	ToolPolicy *ToolPolicy `protobuf:"bytes,11,opt,name=tool_policy,json=toolPolicy,proto3" json:"tool_policy,omitempty"`
	// The session this one was forked from (empty if none) ...
	ForkedFrom string `protobuf:"bytes,12,opt,name=forked_from,json=forkedFrom,proto3" json:"forked_from,omitempty"`
	// ... and the last position of the source that was copied.
	ForkedAtPosition int64 `protobuf:"varint,13,opt,name=forked_at_position,json=forkedAtPosition,proto3" json:"forked_at_position,omitempty"`
	// Changes with every Delete and re-creation (see WatchResponse.incarnation).
	Incarnation   string `protobuf:"bytes,14,opt,name=incarnation,proto3" json:"incarnation,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *Session) Reset() {
	*x = Session{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[6]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Session) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Session) ProtoMessage() {}

func (x *Session) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[6]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Session.ProtoReflect.Descriptor instead.
func (*Session) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{6}
}

func (x *Session) GetId() string {
	if x != nil {
		return x.Id
	}
	return ""
}

func (x *Session) GetWorkdir() string {
	if x != nil {
		return x.Workdir
	}
	return ""
}

func (x *Session) GetCreatedAt() *timestamppb.Timestamp {
	if x != nil {
		return x.CreatedAt
	}
	return nil
}

func (x *Session) GetUpdatedAt() *timestamppb.Timestamp {
	if x != nil {
		return x.UpdatedAt
	}
	return nil
}

func (x *Session) GetUsage() *Usage {
	if x != nil {
		return x.Usage
	}
	return nil
}

func (x *Session) GetLastPosition() int64 {
	if x != nil {
		return x.LastPosition
	}
	return 0
}

func (x *Session) GetStored() bool {
	if x != nil {
		return x.Stored
	}
	return false
}

func (x *Session) GetMessageCount() int64 {
	if x != nil {
		return x.MessageCount
	}
	return 0
}

func (x *Session) GetState() string {
	if x != nil {
		return x.State
	}
	return ""
}

func (x *Session) GetLabels() map[string]string {
	if x != nil {
		return x.Labels
	}
	return nil
}

func (x *Session) GetToolPolicy() *ToolPolicy {
	if x != nil {
		return x.ToolPolicy
	}
	return nil
}

func (x *Session) GetForkedFrom() string {
	if x != nil {
		return x.ForkedFrom
	}
	return ""
}

func (x *Session) GetForkedAtPosition() int64 {
	if x != nil {
		return x.ForkedAtPosition
	}
	return 0
}

func (x *Session) GetIncarnation() string {
	if x != nil {
		return x.Incarnation
	}
	return ""
}

// A change to a JSON state: each key of `delta` is set to its value; a key
// whose value is null is removed. Top-level keys only (values replace whole).
type StateDelta struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Empty: the session's own state. Otherwise a shared scope (1-256 bytes,
	// for example "app:weather" or "user:weather/alice"): one state shared by
	// every session that names it.
	Scope string `protobuf:"bytes,1,opt,name=scope,proto3" json:"scope,omitempty"`
	// A JSON object text.
	Delta         string `protobuf:"bytes,2,opt,name=delta,proto3" json:"delta,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *StateDelta) Reset() {
	*x = StateDelta{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[7]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *StateDelta) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*StateDelta) ProtoMessage() {}

func (x *StateDelta) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[7]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use StateDelta.ProtoReflect.Descriptor instead.
func (*StateDelta) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{7}
}

func (x *StateDelta) GetScope() string {
	if x != nil {
		return x.Scope
	}
	return ""
}

func (x *StateDelta) GetDelta() string {
	if x != nil {
		return x.Delta
	}
	return ""
}

// The state of one shared scope.
type ScopeState struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The scope's name (see StateDelta.scope).
	Scope string `protobuf:"bytes,1,opt,name=scope,proto3" json:"scope,omitempty"`
	// JSON object text ("{}" for a scope never written).
	State string `protobuf:"bytes,2,opt,name=state,proto3" json:"state,omitempty"`
	// When the scope's state last changed (unset if never written).
	UpdatedAt     *timestamppb.Timestamp `protobuf:"bytes,3,opt,name=updated_at,json=updatedAt,proto3" json:"updated_at,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ScopeState) Reset() {
	*x = ScopeState{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[8]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ScopeState) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ScopeState) ProtoMessage() {}

func (x *ScopeState) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[8]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ScopeState.ProtoReflect.Descriptor instead.
func (*ScopeState) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{8}
}

func (x *ScopeState) GetScope() string {
	if x != nil {
		return x.Scope
	}
	return ""
}

func (x *ScopeState) GetState() string {
	if x != nil {
		return x.State
	}
	return ""
}

func (x *ScopeState) GetUpdatedAt() *timestamppb.Timestamp {
	if x != nil {
		return x.UpdatedAt
	}
	return nil
}

// One synthetic tool result written by a Load's repair.
type Repair struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The tool call that had no result.
	ToolCallId string `protobuf:"bytes,1,opt,name=tool_call_id,json=toolCallId,proto3" json:"tool_call_id,omitempty"`
	// Position of the assistant message that made the call.
	AssistantPosition int64 `protobuf:"varint,2,opt,name=assistant_position,json=assistantPosition,proto3" json:"assistant_position,omitempty"`
	// Position given to the synthetic tool message.
	Position      int64 `protobuf:"varint,3,opt,name=position,proto3" json:"position,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *Repair) Reset() {
	*x = Repair{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[9]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *Repair) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*Repair) ProtoMessage() {}

func (x *Repair) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[9]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use Repair.ProtoReflect.Descriptor instead.
func (*Repair) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{9}
}

func (x *Repair) GetToolCallId() string {
	if x != nil {
		return x.ToolCallId
	}
	return ""
}

func (x *Repair) GetAssistantPosition() int64 {
	if x != nil {
		return x.AssistantPosition
	}
	return 0
}

func (x *Repair) GetPosition() int64 {
	if x != nil {
		return x.Position
	}
	return 0
}

// A tool call without a result that a live run still owns (not repaired).
type InFlightCall struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The unanswered call.
	ToolCallId string `protobuf:"bytes,1,opt,name=tool_call_id,json=toolCallId,proto3" json:"tool_call_id,omitempty"`
	// Position of the assistant message that made it.
	AssistantPosition int64 `protobuf:"varint,2,opt,name=assistant_position,json=assistantPosition,proto3" json:"assistant_position,omitempty"`
	// Run that owns it (see Attach).
	RunId string `protobuf:"bytes,3,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	// Process id the owner declared in Attach.
	OwnerPid int64 `protobuf:"varint,4,opt,name=owner_pid,json=ownerPid,proto3" json:"owner_pid,omitempty"`
	// Host name of the daemon the owner attached to, when several daemons share a
	// PostgreSQL database (empty on SQLite: the run is this daemon's).
	OwnerHost string `protobuf:"bytes,5,opt,name=owner_host,json=ownerHost,proto3" json:"owner_host,omitempty"`
	// The label the owner gave in Attach (AttachRequest.label; empty if none).
	OwnerLabel    string `protobuf:"bytes,6,opt,name=owner_label,json=ownerLabel,proto3" json:"owner_label,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *InFlightCall) Reset() {
	*x = InFlightCall{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[10]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *InFlightCall) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*InFlightCall) ProtoMessage() {}

func (x *InFlightCall) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[10]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use InFlightCall.ProtoReflect.Descriptor instead.
func (*InFlightCall) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{10}
}

func (x *InFlightCall) GetToolCallId() string {
	if x != nil {
		return x.ToolCallId
	}
	return ""
}

func (x *InFlightCall) GetAssistantPosition() int64 {
	if x != nil {
		return x.AssistantPosition
	}
	return 0
}

func (x *InFlightCall) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

func (x *InFlightCall) GetOwnerPid() int64 {
	if x != nil {
		return x.OwnerPid
	}
	return 0
}

func (x *InFlightCall) GetOwnerHost() string {
	if x != nil {
		return x.OwnerHost
	}
	return ""
}

func (x *InFlightCall) GetOwnerLabel() string {
	if x != nil {
		return x.OwnerLabel
	}
	return ""
}

// Load: read a session's visible history (see SessionService.Load).
type LoadRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Session id: 1-256 bytes of UTF-8; no "/", "\", "..", NUL or control characters.
	SessionId string `protobuf:"bytes,1,opt,name=session_id,json=sessionId,proto3" json:"session_id,omitempty"`
	// The caller's absolute working folder. Required, except with no_repair (a
	// look-only Load: without it the reply has the stored one). Replaces the stored
	// one in the reply and, at the next mutation that carries it, in storage.
	Workdir string `protobuf:"bytes,2,opt,name=workdir,proto3" json:"workdir,omitempty"`
	// Trace id for the call (otherwise taken from `traceparent` metadata, or assigned).
	TraceId string `protobuf:"bytes,3,opt,name=trace_id,json=traceId,proto3" json:"trace_id,omitempty"`
	// Look only: repair nothing. Unanswered calls owned by live runs are still
	// listed in `in_flight`; the others (interrupted) stay open in `messages`
	// until a Load without this flag repairs them. Writes nothing at all.
	NoRepair bool `protobuf:"varint,4,opt,name=no_repair,json=noRepair,proto3" json:"no_repair,omitempty"`
	// Bounded reads (cost independent of history length); at most one of
	// these three may be set (before_position, client_ids and
	// client_id_prefix below say what each combines with). Only the last N
	// visible entries:
	Last int32 `protobuf:"varint,5,opt,name=last,proto3" json:"last,omitempty"`
	// Only entries with position greater than this:
	AfterPosition int64 `protobuf:"varint,6,opt,name=after_position,json=afterPosition,proto3" json:"after_position,omitempty"`
	// Only entries stored after this time:
	AfterTime *timestamppb.Timestamp `protobuf:"bytes,7,opt,name=after_time,json=afterTime,proto3" json:"after_time,omitempty"`
	// Also return these shared scopes' states (LoadResponse.scope_states).
	Scopes []string `protobuf:"bytes,8,rep,name=scopes,proto3" json:"scopes,omitempty"`
	// Point read through the index of client ids (cost O(ids), not O(history)):
	// only the visible entries whose client id is one of these, in position
	// order. Each id 1-256 bytes; at most max_batch_messages ids (10000 by
	// default); an id not stored is simply absent from the reply. Combines with
	// no other filter (last, after_position, after_time, client_id_prefix,
	// before_position): INVALID_ARGUMENT (INVALID_MESSAGE) otherwise.
	ClientIds []string `protobuf:"bytes,9,rep,name=client_ids,json=clientIds,proto3" json:"client_ids,omitempty"`
	// Range read through the index of client ids: only the visible entries
	// whose client id starts with this (1-256 bytes), in position order, at most
	// max_batch_messages of them (the lowest positions; `complete` is false
	// when more match: continue with after_position set to the last position
	// received). Combines with after_position and before_position only. Cost:
	// the entries whose client id has the prefix, not the history.
	ClientIdPrefix string `protobuf:"bytes,10,opt,name=client_id_prefix,json=clientIdPrefix,proto3" json:"client_id_prefix,omitempty"`
	// Only entries with a position less than this (> 0). Combines with `last`
	// (the last N visible entries before it: newest-first paging backwards),
	// with `after_position` (the range between the two), or with
	// client_id_prefix; not with after_time or client_ids.
	BeforePosition int64 `protobuf:"varint,11,opt,name=before_position,json=beforePosition,proto3" json:"before_position,omitempty"`
	// Only the stored items of this format (a format tag, as Message.format): the
	// reply's chunks carry, in `items`, the `item` bytes of the visible entries
	// whose `format` is this and whose item is not empty, in position order (the
	// order written), and no `messages`. Combines with every field above (the
	// window, the ids, no_repair: a repairing Load still repairs and reports it
	// in `repairs`; synthetic results carry no item). A reader that only wants a
	// framework's own items skips one Message per entry on both sides.
	ItemsFormat   string `protobuf:"bytes,12,opt,name=items_format,json=itemsFormat,proto3" json:"items_format,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *LoadRequest) Reset() {
	*x = LoadRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[11]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *LoadRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*LoadRequest) ProtoMessage() {}

func (x *LoadRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[11]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use LoadRequest.ProtoReflect.Descriptor instead.
func (*LoadRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{11}
}

func (x *LoadRequest) GetSessionId() string {
	if x != nil {
		return x.SessionId
	}
	return ""
}

func (x *LoadRequest) GetWorkdir() string {
	if x != nil {
		return x.Workdir
	}
	return ""
}

func (x *LoadRequest) GetTraceId() string {
	if x != nil {
		return x.TraceId
	}
	return ""
}

func (x *LoadRequest) GetNoRepair() bool {
	if x != nil {
		return x.NoRepair
	}
	return false
}

func (x *LoadRequest) GetLast() int32 {
	if x != nil {
		return x.Last
	}
	return 0
}

func (x *LoadRequest) GetAfterPosition() int64 {
	if x != nil {
		return x.AfterPosition
	}
	return 0
}

func (x *LoadRequest) GetAfterTime() *timestamppb.Timestamp {
	if x != nil {
		return x.AfterTime
	}
	return nil
}

func (x *LoadRequest) GetScopes() []string {
	if x != nil {
		return x.Scopes
	}
	return nil
}

func (x *LoadRequest) GetClientIds() []string {
	if x != nil {
		return x.ClientIds
	}
	return nil
}

func (x *LoadRequest) GetClientIdPrefix() string {
	if x != nil {
		return x.ClientIdPrefix
	}
	return ""
}

func (x *LoadRequest) GetBeforePosition() int64 {
	if x != nil {
		return x.BeforePosition
	}
	return 0
}

func (x *LoadRequest) GetItemsFormat() string {
	if x != nil {
		return x.ItemsFormat
	}
	return ""
}

// One chunk of a Load reply.
type LoadResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Metadata and usage (first chunk only).
	Session *Session `protobuf:"bytes,1,opt,name=session,proto3" json:"session,omitempty"`
	// Tool calls this Load repaired (first chunk only).
	Repairs []*Repair `protobuf:"bytes,2,rep,name=repairs,proto3" json:"repairs,omitempty"`
	// Unanswered tool calls owned by live runs (first chunk only).
	InFlight []*InFlightCall `protobuf:"bytes,3,rep,name=in_flight,json=inFlight,proto3" json:"in_flight,omitempty"`
	// A slice of the visible history, in conversation order.
	Messages []*Message `protobuf:"bytes,4,rep,name=messages,proto3" json:"messages,omitempty"`
	// Set on the last chunk.
	Done bool `protobuf:"varint,5,opt,name=done,proto3" json:"done,omitempty"`
	// The trace id of this call (first chunk only).
	TraceId string `protobuf:"bytes,6,opt,name=trace_id,json=traceId,proto3" json:"trace_id,omitempty"`
	// First chunk only: true if the reply holds the whole visible history
	// (false whenever a bounded read or a filter left entries out).
	Complete bool `protobuf:"varint,7,opt,name=complete,proto3" json:"complete,omitempty"`
	// First chunk only: position of the first entry returned (0 if none).
	StartPosition int64 `protobuf:"varint,8,opt,name=start_position,json=startPosition,proto3" json:"start_position,omitempty"`
	// First chunk only: the states of the requested scopes.
	ScopeStates []*ScopeState `protobuf:"bytes,9,rep,name=scope_states,json=scopeStates,proto3" json:"scope_states,omitempty"`
	// With LoadRequest.items_format: a slice of the items, in position order
	// (each chunk at most about 4 MiB, as with `messages`; an item is never split).
	Items         [][]byte `protobuf:"bytes,10,rep,name=items,proto3" json:"items,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *LoadResponse) Reset() {
	*x = LoadResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[12]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *LoadResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*LoadResponse) ProtoMessage() {}

func (x *LoadResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[12]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use LoadResponse.ProtoReflect.Descriptor instead.
func (*LoadResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{12}
}

func (x *LoadResponse) GetSession() *Session {
	if x != nil {
		return x.Session
	}
	return nil
}

func (x *LoadResponse) GetRepairs() []*Repair {
	if x != nil {
		return x.Repairs
	}
	return nil
}

func (x *LoadResponse) GetInFlight() []*InFlightCall {
	if x != nil {
		return x.InFlight
	}
	return nil
}

func (x *LoadResponse) GetMessages() []*Message {
	if x != nil {
		return x.Messages
	}
	return nil
}

func (x *LoadResponse) GetDone() bool {
	if x != nil {
		return x.Done
	}
	return false
}

func (x *LoadResponse) GetTraceId() string {
	if x != nil {
		return x.TraceId
	}
	return ""
}

func (x *LoadResponse) GetComplete() bool {
	if x != nil {
		return x.Complete
	}
	return false
}

func (x *LoadResponse) GetStartPosition() int64 {
	if x != nil {
		return x.StartPosition
	}
	return 0
}

func (x *LoadResponse) GetScopeStates() []*ScopeState {
	if x != nil {
		return x.ScopeStates
	}
	return nil
}

func (x *LoadResponse) GetItems() [][]byte {
	if x != nil {
		return x.Items
	}
	return nil
}

// Append: add entries to a session.
type AppendRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Session id (see LoadRequest).
	SessionId string `protobuf:"bytes,1,opt,name=session_id,json=sessionId,proto3" json:"session_id,omitempty"`
	// Messages to add, in order. 1 to max_batch_messages (default 10000).
	Messages []*Message `protobuf:"bytes,2,rep,name=messages,proto3" json:"messages,omitempty"`
	// If set (> 0), append only if the session's last position is still this;
	// otherwise ABORTED and nothing is written. Use -1 to require a new session.
	ExpectedLastPosition int64 `protobuf:"varint,3,opt,name=expected_last_position,json=expectedLastPosition,proto3" json:"expected_last_position,omitempty"`
	// Client-chosen id (up to 128 bytes). A retry with the same id returns the
	// first result and writes nothing; the same id with other content is
	// INVALID_ARGUMENT (REQUEST_ID_REUSED). The daemon remembers an id for
	// --request-id-retention-s, 24 h by default (REQUEST IDS in the header);
	// after that the same id is a new request.
	RequestId string `protobuf:"bytes,4,opt,name=request_id,json=requestId,proto3" json:"request_id,omitempty"`
	// If set, the session's stored workdir becomes this.
	Workdir string `protobuf:"bytes,5,opt,name=workdir,proto3" json:"workdir,omitempty"`
	// Run id from Attach: tool calls in this batch are owned by that run.
	RunId string `protobuf:"bytes,6,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	// Trace id (otherwise from `traceparent` metadata, or assigned).
	TraceId string `protobuf:"bytes,7,opt,name=trace_id,json=traceId,proto3" json:"trace_id,omitempty"`
	// Tool-call rules for this append (unset fields: the session's policy).
	ToolPolicy *ToolPolicy `protobuf:"bytes,8,opt,name=tool_policy,json=toolPolicy,proto3" json:"tool_policy,omitempty"`
	// State changes written atomically with the messages.
	StateDeltas   []*StateDelta `protobuf:"bytes,9,rep,name=state_deltas,json=stateDeltas,proto3" json:"state_deltas,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *AppendRequest) Reset() {
	*x = AppendRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[13]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *AppendRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*AppendRequest) ProtoMessage() {}

func (x *AppendRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[13]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use AppendRequest.ProtoReflect.Descriptor instead.
func (*AppendRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{13}
}

func (x *AppendRequest) GetSessionId() string {
	if x != nil {
		return x.SessionId
	}
	return ""
}

func (x *AppendRequest) GetMessages() []*Message {
	if x != nil {
		return x.Messages
	}
	return nil
}

func (x *AppendRequest) GetExpectedLastPosition() int64 {
	if x != nil {
		return x.ExpectedLastPosition
	}
	return 0
}

func (x *AppendRequest) GetRequestId() string {
	if x != nil {
		return x.RequestId
	}
	return ""
}

func (x *AppendRequest) GetWorkdir() string {
	if x != nil {
		return x.Workdir
	}
	return ""
}

func (x *AppendRequest) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

func (x *AppendRequest) GetTraceId() string {
	if x != nil {
		return x.TraceId
	}
	return ""
}

func (x *AppendRequest) GetToolPolicy() *ToolPolicy {
	if x != nil {
		return x.ToolPolicy
	}
	return nil
}

func (x *AppendRequest) GetStateDeltas() []*StateDelta {
	if x != nil {
		return x.StateDeltas
	}
	return nil
}

// The outcome of an Append.
type AppendResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Position of the first message written.
	FirstPosition int64 `protobuf:"varint,1,opt,name=first_position,json=firstPosition,proto3" json:"first_position,omitempty"`
	// Position of the last message written (the session's new last position).
	LastPosition int64 `protobuf:"varint,2,opt,name=last_position,json=lastPosition,proto3" json:"last_position,omitempty"`
	// True if this is the stored result of an earlier request with the same id.
	Replayed bool `protobuf:"varint,3,opt,name=replayed,proto3" json:"replayed,omitempty"`
	// Trace id of the call that wrote the messages.
	TraceId string `protobuf:"bytes,4,opt,name=trace_id,json=traceId,proto3" json:"trace_id,omitempty"`
	// Time the messages were stored.
	CreatedAt     *timestamppb.Timestamp `protobuf:"bytes,5,opt,name=created_at,json=createdAt,proto3" json:"created_at,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *AppendResponse) Reset() {
	*x = AppendResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[14]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *AppendResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*AppendResponse) ProtoMessage() {}

func (x *AppendResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[14]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use AppendResponse.ProtoReflect.Descriptor instead.
func (*AppendResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{14}
}

func (x *AppendResponse) GetFirstPosition() int64 {
	if x != nil {
		return x.FirstPosition
	}
	return 0
}

func (x *AppendResponse) GetLastPosition() int64 {
	if x != nil {
		return x.LastPosition
	}
	return 0
}

func (x *AppendResponse) GetReplayed() bool {
	if x != nil {
		return x.Replayed
	}
	return false
}

func (x *AppendResponse) GetTraceId() string {
	if x != nil {
		return x.TraceId
	}
	return ""
}

func (x *AppendResponse) GetCreatedAt() *timestamppb.Timestamp {
	if x != nil {
		return x.CreatedAt
	}
	return nil
}

// Appends sent together on AppendStream.
type AppendStreamRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Appends, in order (1 or more).
	Appends       []*AppendRequest `protobuf:"bytes,1,rep,name=appends,proto3" json:"appends,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *AppendStreamRequest) Reset() {
	*x = AppendStreamRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[15]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *AppendStreamRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*AppendStreamRequest) ProtoMessage() {}

func (x *AppendStreamRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[15]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use AppendStreamRequest.ProtoReflect.Descriptor instead.
func (*AppendStreamRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{15}
}

func (x *AppendStreamRequest) GetAppends() []*AppendRequest {
	if x != nil {
		return x.Appends
	}
	return nil
}

// Replies of AppendStream. Replies come in the order of the appends across
// the whole stream; how they are grouped into messages is up to the daemon.
type AppendStreamResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// One reply per append, in order.
	Replies       []*AppendReply `protobuf:"bytes,1,rep,name=replies,proto3" json:"replies,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *AppendStreamResponse) Reset() {
	*x = AppendStreamResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[16]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *AppendStreamResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*AppendStreamResponse) ProtoMessage() {}

func (x *AppendStreamResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[16]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use AppendStreamResponse.ProtoReflect.Descriptor instead.
func (*AppendStreamResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{16}
}

func (x *AppendStreamResponse) GetReplies() []*AppendReply {
	if x != nil {
		return x.Replies
	}
	return nil
}

// The outcome of one append of AppendStream.
type AppendReply struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Set if the append succeeded (or was replayed).
	Result *AppendResponse `protobuf:"bytes,1,opt,name=result,proto3" json:"result,omitempty"`
	// Set if it failed: what Append would have returned as its status.
	Error         *AppendError `protobuf:"bytes,2,opt,name=error,proto3" json:"error,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *AppendReply) Reset() {
	*x = AppendReply{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[17]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *AppendReply) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*AppendReply) ProtoMessage() {}

func (x *AppendReply) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[17]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use AppendReply.ProtoReflect.Descriptor instead.
func (*AppendReply) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{17}
}

func (x *AppendReply) GetResult() *AppendResponse {
	if x != nil {
		return x.Result
	}
	return nil
}

func (x *AppendReply) GetError() *AppendError {
	if x != nil {
		return x.Error
	}
	return nil
}

// A failed append of AppendStream: the status a unary Append would have had.
type AppendError struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// gRPC status code number (for example 10 for ABORTED).
	Code int32 `protobuf:"varint,1,opt,name=code,proto3" json:"code,omitempty"`
	// A message a person can act on.
	Message string `protobuf:"bytes,2,opt,name=message,proto3" json:"message,omitempty"`
	// The google.rpc.ErrorInfo reason (see the error table), for example "SEQUENCE_CONFLICT".
	Reason string `protobuf:"bytes,3,opt,name=reason,proto3" json:"reason,omitempty"`
	// The ErrorInfo metadata (for example expected and actual positions).
	Metadata      map[string]string `protobuf:"bytes,4,rep,name=metadata,proto3" json:"metadata,omitempty" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *AppendError) Reset() {
	*x = AppendError{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[18]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *AppendError) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*AppendError) ProtoMessage() {}

func (x *AppendError) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[18]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use AppendError.ProtoReflect.Descriptor instead.
func (*AppendError) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{18}
}

func (x *AppendError) GetCode() int32 {
	if x != nil {
		return x.Code
	}
	return 0
}

func (x *AppendError) GetMessage() string {
	if x != nil {
		return x.Message
	}
	return ""
}

func (x *AppendError) GetReason() string {
	if x != nil {
		return x.Reason
	}
	return ""
}

func (x *AppendError) GetMetadata() map[string]string {
	if x != nil {
		return x.Metadata
	}
	return nil
}

// RecordUsage: add token counts and cost to a session's totals.
type RecordUsageRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Session id (see LoadRequest).
	SessionId string `protobuf:"bytes,1,opt,name=session_id,json=sessionId,proto3" json:"session_id,omitempty"`
	// Prompt tokens to add (>= 0).
	InputTokens int64 `protobuf:"varint,2,opt,name=input_tokens,json=inputTokens,proto3" json:"input_tokens,omitempty"`
	// Completion tokens to add (>= 0).
	OutputTokens int64 `protobuf:"varint,3,opt,name=output_tokens,json=outputTokens,proto3" json:"output_tokens,omitempty"`
	// Cached prompt tokens read (>= 0).
	CacheReadTokens int64 `protobuf:"varint,4,opt,name=cache_read_tokens,json=cacheReadTokens,proto3" json:"cache_read_tokens,omitempty"`
	// Cached prompt tokens written (>= 0).
	CacheWriteTokens int64 `protobuf:"varint,5,opt,name=cache_write_tokens,json=cacheWriteTokens,proto3" json:"cache_write_tokens,omitempty"`
	// Cost to add, in millionths of `currency` (>= 0).
	CostMicros int64 `protobuf:"varint,6,opt,name=cost_micros,json=costMicros,proto3" json:"cost_micros,omitempty"`
	// ISO 4217 code; required when cost_micros > 0; must match the session's.
	Currency string `protobuf:"bytes,7,opt,name=currency,proto3" json:"currency,omitempty"`
	// Model id that produced the tokens (for example "gpt-4.1").
	Model string `protobuf:"bytes,8,opt,name=model,proto3" json:"model,omitempty"`
	// Version of the price table the cost was computed with.
	PricingVersion string `protobuf:"bytes,9,opt,name=pricing_version,json=pricingVersion,proto3" json:"pricing_version,omitempty"`
	// Idempotency key (see AppendRequest).
	RequestId string `protobuf:"bytes,10,opt,name=request_id,json=requestId,proto3" json:"request_id,omitempty"`
	// If set, the session's stored workdir becomes this.
	Workdir string `protobuf:"bytes,11,opt,name=workdir,proto3" json:"workdir,omitempty"`
	// Trace id.
	TraceId       string `protobuf:"bytes,12,opt,name=trace_id,json=traceId,proto3" json:"trace_id,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *RecordUsageRequest) Reset() {
	*x = RecordUsageRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[19]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *RecordUsageRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*RecordUsageRequest) ProtoMessage() {}

func (x *RecordUsageRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[19]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use RecordUsageRequest.ProtoReflect.Descriptor instead.
func (*RecordUsageRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{19}
}

func (x *RecordUsageRequest) GetSessionId() string {
	if x != nil {
		return x.SessionId
	}
	return ""
}

func (x *RecordUsageRequest) GetInputTokens() int64 {
	if x != nil {
		return x.InputTokens
	}
	return 0
}

func (x *RecordUsageRequest) GetOutputTokens() int64 {
	if x != nil {
		return x.OutputTokens
	}
	return 0
}

func (x *RecordUsageRequest) GetCacheReadTokens() int64 {
	if x != nil {
		return x.CacheReadTokens
	}
	return 0
}

func (x *RecordUsageRequest) GetCacheWriteTokens() int64 {
	if x != nil {
		return x.CacheWriteTokens
	}
	return 0
}

func (x *RecordUsageRequest) GetCostMicros() int64 {
	if x != nil {
		return x.CostMicros
	}
	return 0
}

func (x *RecordUsageRequest) GetCurrency() string {
	if x != nil {
		return x.Currency
	}
	return ""
}

func (x *RecordUsageRequest) GetModel() string {
	if x != nil {
		return x.Model
	}
	return ""
}

func (x *RecordUsageRequest) GetPricingVersion() string {
	if x != nil {
		return x.PricingVersion
	}
	return ""
}

func (x *RecordUsageRequest) GetRequestId() string {
	if x != nil {
		return x.RequestId
	}
	return ""
}

func (x *RecordUsageRequest) GetWorkdir() string {
	if x != nil {
		return x.Workdir
	}
	return ""
}

func (x *RecordUsageRequest) GetTraceId() string {
	if x != nil {
		return x.TraceId
	}
	return ""
}

// The outcome of a RecordUsage.
type RecordUsageResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The session's totals after this call.
	Usage *Usage `protobuf:"bytes,1,opt,name=usage,proto3" json:"usage,omitempty"`
	// True if this is the stored result of an earlier request with the same id.
	Replayed bool `protobuf:"varint,2,opt,name=replayed,proto3" json:"replayed,omitempty"`
	// Trace id.
	TraceId       string `protobuf:"bytes,3,opt,name=trace_id,json=traceId,proto3" json:"trace_id,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *RecordUsageResponse) Reset() {
	*x = RecordUsageResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[20]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *RecordUsageResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*RecordUsageResponse) ProtoMessage() {}

func (x *RecordUsageResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[20]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use RecordUsageResponse.ProtoReflect.Descriptor instead.
func (*RecordUsageResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{20}
}

func (x *RecordUsageResponse) GetUsage() *Usage {
	if x != nil {
		return x.Usage
	}
	return nil
}

func (x *RecordUsageResponse) GetReplayed() bool {
	if x != nil {
		return x.Replayed
	}
	return false
}

func (x *RecordUsageResponse) GetTraceId() string {
	if x != nil {
		return x.TraceId
	}
	return ""
}

// Clear: empty the visible history (optionally erasing it).
type ClearRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Session id (see LoadRequest).
	SessionId string `protobuf:"bytes,1,opt,name=session_id,json=sessionId,proto3" json:"session_id,omitempty"`
	// Idempotency key (see AppendRequest).
	RequestId string `protobuf:"bytes,2,opt,name=request_id,json=requestId,proto3" json:"request_id,omitempty"`
	// Optimistic concurrency (see AppendRequest).
	ExpectedLastPosition int64 `protobuf:"varint,3,opt,name=expected_last_position,json=expectedLastPosition,proto3" json:"expected_last_position,omitempty"`
	// If set, the session's stored workdir becomes this.
	Workdir string `protobuf:"bytes,4,opt,name=workdir,proto3" json:"workdir,omitempty"`
	// Trace id.
	TraceId string `protobuf:"bytes,5,opt,name=trace_id,json=traceId,proto3" json:"trace_id,omitempty"`
	// Erase: remove the history's events from the log (and their bytes from the
	// database files, as Delete does) instead of only hiding them. Usage
	// totals, state and labels are kept; positions are still never reused.
	Erase         bool `protobuf:"varint,6,opt,name=erase,proto3" json:"erase,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ClearRequest) Reset() {
	*x = ClearRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[21]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ClearRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ClearRequest) ProtoMessage() {}

func (x *ClearRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[21]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ClearRequest.ProtoReflect.Descriptor instead.
func (*ClearRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{21}
}

func (x *ClearRequest) GetSessionId() string {
	if x != nil {
		return x.SessionId
	}
	return ""
}

func (x *ClearRequest) GetRequestId() string {
	if x != nil {
		return x.RequestId
	}
	return ""
}

func (x *ClearRequest) GetExpectedLastPosition() int64 {
	if x != nil {
		return x.ExpectedLastPosition
	}
	return 0
}

func (x *ClearRequest) GetWorkdir() string {
	if x != nil {
		return x.Workdir
	}
	return ""
}

func (x *ClearRequest) GetTraceId() string {
	if x != nil {
		return x.TraceId
	}
	return ""
}

func (x *ClearRequest) GetErase() bool {
	if x != nil {
		return x.Erase
	}
	return false
}

// The outcome of a Clear.
type ClearResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Position of the clear event (the session's new last position).
	Position int64 `protobuf:"varint,1,opt,name=position,proto3" json:"position,omitempty"`
	// True if this is the stored result of an earlier request with the same id.
	Replayed bool `protobuf:"varint,2,opt,name=replayed,proto3" json:"replayed,omitempty"`
	// Trace id.
	TraceId string `protobuf:"bytes,3,opt,name=trace_id,json=traceId,proto3" json:"trace_id,omitempty"`
	// With `erase`: number of events removed from the log.
	EventsErased int64 `protobuf:"varint,4,opt,name=events_erased,json=eventsErased,proto3" json:"events_erased,omitempty"`
	// With `erase`: as DeleteResponse.erasure_pending.
	ErasurePending bool `protobuf:"varint,5,opt,name=erasure_pending,json=erasurePending,proto3" json:"erasure_pending,omitempty"`
	unknownFields  protoimpl.UnknownFields
	sizeCache      protoimpl.SizeCache
}

func (x *ClearResponse) Reset() {
	*x = ClearResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[22]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ClearResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ClearResponse) ProtoMessage() {}

func (x *ClearResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[22]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ClearResponse.ProtoReflect.Descriptor instead.
func (*ClearResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{22}
}

func (x *ClearResponse) GetPosition() int64 {
	if x != nil {
		return x.Position
	}
	return 0
}

func (x *ClearResponse) GetReplayed() bool {
	if x != nil {
		return x.Replayed
	}
	return false
}

func (x *ClearResponse) GetTraceId() string {
	if x != nil {
		return x.TraceId
	}
	return ""
}

func (x *ClearResponse) GetEventsErased() int64 {
	if x != nil {
		return x.EventsErased
	}
	return 0
}

func (x *ClearResponse) GetErasurePending() bool {
	if x != nil {
		return x.ErasurePending
	}
	return false
}

// RecordEvent: store an audit event.
type RecordEventRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Session id (see LoadRequest).
	SessionId string `protobuf:"bytes,1,opt,name=session_id,json=sessionId,proto3" json:"session_id,omitempty"`
	// What happened.
	Kind EventKind `protobuf:"varint,2,opt,name=kind,proto3,enum=claw.sessiond.v1.EventKind" json:"kind,omitempty"`
	// Structured details as a JSON object text (for example {"tool":"bash","reason":"denied by policy"}).
	Payload string `protobuf:"bytes,3,opt,name=payload,proto3" json:"payload,omitempty"`
	// Idempotency key.
	RequestId string `protobuf:"bytes,4,opt,name=request_id,json=requestId,proto3" json:"request_id,omitempty"`
	// Trace id.
	TraceId       string `protobuf:"bytes,5,opt,name=trace_id,json=traceId,proto3" json:"trace_id,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *RecordEventRequest) Reset() {
	*x = RecordEventRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[23]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *RecordEventRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*RecordEventRequest) ProtoMessage() {}

func (x *RecordEventRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[23]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use RecordEventRequest.ProtoReflect.Descriptor instead.
func (*RecordEventRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{23}
}

func (x *RecordEventRequest) GetSessionId() string {
	if x != nil {
		return x.SessionId
	}
	return ""
}

func (x *RecordEventRequest) GetKind() EventKind {
	if x != nil {
		return x.Kind
	}
	return EventKind_EVENT_KIND_UNSPECIFIED
}

func (x *RecordEventRequest) GetPayload() string {
	if x != nil {
		return x.Payload
	}
	return ""
}

func (x *RecordEventRequest) GetRequestId() string {
	if x != nil {
		return x.RequestId
	}
	return ""
}

func (x *RecordEventRequest) GetTraceId() string {
	if x != nil {
		return x.TraceId
	}
	return ""
}

// The outcome of a RecordEvent.
type RecordEventResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Global event id of the stored event.
	EventId int64 `protobuf:"varint,1,opt,name=event_id,json=eventId,proto3" json:"event_id,omitempty"`
	// True if this is the stored result of an earlier request with the same id.
	Replayed bool `protobuf:"varint,2,opt,name=replayed,proto3" json:"replayed,omitempty"`
	// Trace id.
	TraceId       string `protobuf:"bytes,3,opt,name=trace_id,json=traceId,proto3" json:"trace_id,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *RecordEventResponse) Reset() {
	*x = RecordEventResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[24]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *RecordEventResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*RecordEventResponse) ProtoMessage() {}

func (x *RecordEventResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[24]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use RecordEventResponse.ProtoReflect.Descriptor instead.
func (*RecordEventResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{24}
}

func (x *RecordEventResponse) GetEventId() int64 {
	if x != nil {
		return x.EventId
	}
	return 0
}

func (x *RecordEventResponse) GetReplayed() bool {
	if x != nil {
		return x.Replayed
	}
	return false
}

func (x *RecordEventResponse) GetTraceId() string {
	if x != nil {
		return x.TraceId
	}
	return ""
}

// Attach: declare that this connection runs a session.
//
// Run liveness (docs/PROTOCOL.md "Runs"). A run is live while its Attach
// stream is open: it ends when the client cancels the stream or closes its
// channel, when the client's process exits (the kernel closes its socket),
// on EndRun, and at daemon stop. A blocked client (busy event loop, SIGSTOP,
// a long synchronous tool) keeps its run: on the Unix socket the daemon never
// closes a connection for unanswered HTTP/2 pings. Two more checks:
//   - the declared pid, when the daemon could verify it with the kernel (the
//     process holds a connection to the daemon's Unix socket): the run ends
//     when that process is gone, checked before any Load repairs its calls;
//   - pings, only if asked for (`ping_timeout_seconds`), and over --tcp, where
//     a connection that answers no HTTP/2 ping for --lease-s seconds is closed.
//
// A run that ended is reported the same way everywhere: FAILED_PRECONDITION,
// reason UNKNOWN_RUN, ErrorInfo metadata `run_id` and `cause` (one of RUN
// ENDS in the header: ended, stream_closed, process_gone, ping_timeout,
// daemon_stopping, unknown, other_session, lease_lost), on any later call
// naming it, and as the status of its Attach stream when the daemon ended it.
type AttachRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Session id the caller is running.
	SessionId string `protobuf:"bytes,1,opt,name=session_id,json=sessionId,proto3" json:"session_id,omitempty"`
	// Process id of the caller, reported to others and, on the Unix socket,
	// checked with the kernel (0: not given, not checked).
	Pid int64 `protobuf:"varint,2,opt,name=pid,proto3" json:"pid,omitempty"`
	// Free-form label (for example "repl" or "sub-agent planner").
	Label string `protobuf:"bytes,3,opt,name=label,proto3" json:"label,omitempty"`
	// Optional ping bound in seconds (0: none; at most 86400): the run also
	// ends (cause ping_timeout) when no PingRun or Append naming it arrives
	// for this long. Event-loop dependent: ask for it only to bound how long
	// a hung client may keep its calls in flight.
	PingTimeoutSeconds int64 `protobuf:"varint,4,opt,name=ping_timeout_seconds,json=pingTimeoutSeconds,proto3" json:"ping_timeout_seconds,omitempty"`
	unknownFields      protoimpl.UnknownFields
	sizeCache          protoimpl.SizeCache
}

func (x *AttachRequest) Reset() {
	*x = AttachRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[25]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *AttachRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*AttachRequest) ProtoMessage() {}

func (x *AttachRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[25]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use AttachRequest.ProtoReflect.Descriptor instead.
func (*AttachRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{25}
}

func (x *AttachRequest) GetSessionId() string {
	if x != nil {
		return x.SessionId
	}
	return ""
}

func (x *AttachRequest) GetPid() int64 {
	if x != nil {
		return x.Pid
	}
	return 0
}

func (x *AttachRequest) GetLabel() string {
	if x != nil {
		return x.Label
	}
	return ""
}

func (x *AttachRequest) GetPingTimeoutSeconds() int64 {
	if x != nil {
		return x.PingTimeoutSeconds
	}
	return 0
}

// A message of the Attach stream.
type AttachResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Run id to pass as AppendRequest.run_id. Sent once, first.
	RunId string `protobuf:"bytes,1,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	// The longest this run's connection may go without answering the
	// daemon's HTTP/2 keepalive pings before the daemon closes it: --lease-s
	// over --tcp; 0 on the Unix socket (no pings: the kernel reports a closed
	// connection at once).
	LeaseSeconds int64 `protobuf:"varint,2,opt,name=lease_seconds,json=leaseSeconds,proto3" json:"lease_seconds,omitempty"`
	// True if the daemon verified `pid` with the kernel: the run also ends
	// when that process is gone.
	PidVerified bool `protobuf:"varint,3,opt,name=pid_verified,json=pidVerified,proto3" json:"pid_verified,omitempty"`
	// The ping bound of this run (AttachRequest.ping_timeout_seconds; 0: none).
	PingTimeoutSeconds int64 `protobuf:"varint,4,opt,name=ping_timeout_seconds,json=pingTimeoutSeconds,proto3" json:"ping_timeout_seconds,omitempty"`
	unknownFields      protoimpl.UnknownFields
	sizeCache          protoimpl.SizeCache
}

func (x *AttachResponse) Reset() {
	*x = AttachResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[26]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *AttachResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*AttachResponse) ProtoMessage() {}

func (x *AttachResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[26]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use AttachResponse.ProtoReflect.Descriptor instead.
func (*AttachResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{26}
}

func (x *AttachResponse) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

func (x *AttachResponse) GetLeaseSeconds() int64 {
	if x != nil {
		return x.LeaseSeconds
	}
	return 0
}

func (x *AttachResponse) GetPidVerified() bool {
	if x != nil {
		return x.PidVerified
	}
	return false
}

func (x *AttachResponse) GetPingTimeoutSeconds() int64 {
	if x != nil {
		return x.PingTimeoutSeconds
	}
	return 0
}

// Watch: follow one session's history events.
type WatchRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Session id to follow.
	SessionId string `protobuf:"bytes,1,opt,name=session_id,json=sessionId,proto3" json:"session_id,omitempty"`
	// Send history events with position greater than this (0 = from the start).
	AfterPosition int64 `protobuf:"varint,2,opt,name=after_position,json=afterPosition,proto3" json:"after_position,omitempty"`
	// The incarnation a resumed watch follows (from an earlier WatchResponse;
	// empty: whichever incarnation is stored, or the next one created). If the
	// stored session is another incarnation or absent, the watch ends NOT_FOUND.
	Incarnation string `protobuf:"bytes,3,opt,name=incarnation,proto3" json:"incarnation,omitempty"`
	// The client accepts batches: each reply then carries its events in
	// `WatchResponse.events` (one or more, in order; at most 512 events and
	// about 1 MiB encoded per reply), and its own event fields are unset.
	// Unset (older clients): one event per reply, as before.
	Batch bool `protobuf:"varint,4,opt,name=batch,proto3" json:"batch,omitempty"`
	// Process id of the caller (0: not given). On the Unix socket the daemon
	// checks it with the kernel and counts the stream against that process's
	// share of --max-watchers (--max-watchers-per-peer); a stream with no pid,
	// or one the kernel does not confirm, counts against one share that all
	// such streams have together. Ignored over TCP (a connection is a peer).
	Pid           int64 `protobuf:"varint,5,opt,name=pid,proto3" json:"pid,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *WatchRequest) Reset() {
	*x = WatchRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[27]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *WatchRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*WatchRequest) ProtoMessage() {}

func (x *WatchRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[27]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use WatchRequest.ProtoReflect.Descriptor instead.
func (*WatchRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{27}
}

func (x *WatchRequest) GetSessionId() string {
	if x != nil {
		return x.SessionId
	}
	return ""
}

func (x *WatchRequest) GetAfterPosition() int64 {
	if x != nil {
		return x.AfterPosition
	}
	return 0
}

func (x *WatchRequest) GetIncarnation() string {
	if x != nil {
		return x.Incarnation
	}
	return ""
}

func (x *WatchRequest) GetBatch() bool {
	if x != nil {
		return x.Batch
	}
	return false
}

func (x *WatchRequest) GetPid() int64 {
	if x != nil {
		return x.Pid
	}
	return 0
}

// An EditTail as a history event: which entries it removed.
type TailEdit struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Positions of the visible entries the edit removed (ascending).
	RemovedPositions []int64 `protobuf:"varint,1,rep,packed,name=removed_positions,json=removedPositions,proto3" json:"removed_positions,omitempty"`
	unknownFields    protoimpl.UnknownFields
	sizeCache        protoimpl.SizeCache
}

func (x *TailEdit) Reset() {
	*x = TailEdit{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[28]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *TailEdit) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*TailEdit) ProtoMessage() {}

func (x *TailEdit) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[28]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use TailEdit.ProtoReflect.Descriptor instead.
func (*TailEdit) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{28}
}

func (x *TailEdit) GetRemovedPositions() []int64 {
	if x != nil {
		return x.RemovedPositions
	}
	return nil
}

// One history event: a message or a clear.
type WatchResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The message stored at `position` (unset for a clear).
	Message *Message `protobuf:"bytes,1,opt,name=message,proto3" json:"message,omitempty"`
	// Position of this event.
	Position int64 `protobuf:"varint,2,opt,name=position,proto3" json:"position,omitempty"`
	// True if this event is a Clear.
	Cleared bool `protobuf:"varint,3,opt,name=cleared,proto3" json:"cleared,omitempty"`
	// The incarnation of the session this event belongs to: fixed when the
	// session is created, new after a Delete (or import replace) re-creates it.
	Incarnation string `protobuf:"bytes,4,opt,name=incarnation,proto3" json:"incarnation,omitempty"`
	// Set if this event is an EditTail (its replacements follow as messages).
	Edit *TailEdit `protobuf:"bytes,5,opt,name=edit,proto3" json:"edit,omitempty"`
	// With `cleared`: the clear erased the log (the positions before it will
	// never be sent again).
	Erased bool `protobuf:"varint,6,opt,name=erased,proto3" json:"erased,omitempty"`
	// Only when WatchRequest.batch is set: the events of this reply, in
	// position order, each one shaped as an unbatched reply (`events` unset).
	Events        []*WatchResponse `protobuf:"bytes,7,rep,name=events,proto3" json:"events,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *WatchResponse) Reset() {
	*x = WatchResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[29]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *WatchResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*WatchResponse) ProtoMessage() {}

func (x *WatchResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[29]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use WatchResponse.ProtoReflect.Descriptor instead.
func (*WatchResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{29}
}

func (x *WatchResponse) GetMessage() *Message {
	if x != nil {
		return x.Message
	}
	return nil
}

func (x *WatchResponse) GetPosition() int64 {
	if x != nil {
		return x.Position
	}
	return 0
}

func (x *WatchResponse) GetCleared() bool {
	if x != nil {
		return x.Cleared
	}
	return false
}

func (x *WatchResponse) GetIncarnation() string {
	if x != nil {
		return x.Incarnation
	}
	return ""
}

func (x *WatchResponse) GetEdit() *TailEdit {
	if x != nil {
		return x.Edit
	}
	return nil
}

func (x *WatchResponse) GetErased() bool {
	if x != nil {
		return x.Erased
	}
	return false
}

func (x *WatchResponse) GetEvents() []*WatchResponse {
	if x != nil {
		return x.Events
	}
	return nil
}

// ListSessions: one page of stored sessions.
type ListSessionsRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Only sessions whose id contains this text (empty: all).
	IdContains string `protobuf:"bytes,1,opt,name=id_contains,json=idContains,proto3" json:"id_contains,omitempty"`
	// Maximum number of sessions (default 100, at most 10000).
	Limit int32 `protobuf:"varint,2,opt,name=limit,proto3" json:"limit,omitempty"`
	// Continue after the page that returned this token (its `next_page_token`);
	// empty: the first page. Pages follow the same order and filter.
	PageToken string `protobuf:"bytes,3,opt,name=page_token,json=pageToken,proto3" json:"page_token,omitempty"`
	// Only sessions carrying every one of these labels with exactly these values.
	Labels        map[string]string `protobuf:"bytes,4,rep,name=labels,proto3" json:"labels,omitempty" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ListSessionsRequest) Reset() {
	*x = ListSessionsRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[30]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ListSessionsRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ListSessionsRequest) ProtoMessage() {}

func (x *ListSessionsRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[30]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ListSessionsRequest.ProtoReflect.Descriptor instead.
func (*ListSessionsRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{30}
}

func (x *ListSessionsRequest) GetIdContains() string {
	if x != nil {
		return x.IdContains
	}
	return ""
}

func (x *ListSessionsRequest) GetLimit() int32 {
	if x != nil {
		return x.Limit
	}
	return 0
}

func (x *ListSessionsRequest) GetPageToken() string {
	if x != nil {
		return x.PageToken
	}
	return ""
}

func (x *ListSessionsRequest) GetLabels() map[string]string {
	if x != nil {
		return x.Labels
	}
	return nil
}

// One row of ListSessions.
type SessionSummary struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Session id.
	Id string `protobuf:"bytes,1,opt,name=id,proto3" json:"id,omitempty"`
	// Number of messages in the visible history.
	MessageCount int64 `protobuf:"varint,2,opt,name=message_count,json=messageCount,proto3" json:"message_count,omitempty"`
	// Usage totals.
	Usage *Usage `protobuf:"bytes,3,opt,name=usage,proto3" json:"usage,omitempty"`
	// Last change.
	UpdatedAt *timestamppb.Timestamp `protobuf:"bytes,4,opt,name=updated_at,json=updatedAt,proto3" json:"updated_at,omitempty"`
	// Stored workdir.
	Workdir string `protobuf:"bytes,5,opt,name=workdir,proto3" json:"workdir,omitempty"`
	// Highest position.
	LastPosition int64 `protobuf:"varint,6,opt,name=last_position,json=lastPosition,proto3" json:"last_position,omitempty"`
	// The session's labels.
	Labels map[string]string `protobuf:"bytes,7,rep,name=labels,proto3" json:"labels,omitempty" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	// When the session was created.
	CreatedAt     *timestamppb.Timestamp `protobuf:"bytes,8,opt,name=created_at,json=createdAt,proto3" json:"created_at,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *SessionSummary) Reset() {
	*x = SessionSummary{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[31]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *SessionSummary) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*SessionSummary) ProtoMessage() {}

func (x *SessionSummary) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[31]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use SessionSummary.ProtoReflect.Descriptor instead.
func (*SessionSummary) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{31}
}

func (x *SessionSummary) GetId() string {
	if x != nil {
		return x.Id
	}
	return ""
}

func (x *SessionSummary) GetMessageCount() int64 {
	if x != nil {
		return x.MessageCount
	}
	return 0
}

func (x *SessionSummary) GetUsage() *Usage {
	if x != nil {
		return x.Usage
	}
	return nil
}

func (x *SessionSummary) GetUpdatedAt() *timestamppb.Timestamp {
	if x != nil {
		return x.UpdatedAt
	}
	return nil
}

func (x *SessionSummary) GetWorkdir() string {
	if x != nil {
		return x.Workdir
	}
	return ""
}

func (x *SessionSummary) GetLastPosition() int64 {
	if x != nil {
		return x.LastPosition
	}
	return 0
}

func (x *SessionSummary) GetLabels() map[string]string {
	if x != nil {
		return x.Labels
	}
	return nil
}

func (x *SessionSummary) GetCreatedAt() *timestamppb.Timestamp {
	if x != nil {
		return x.CreatedAt
	}
	return nil
}

// One page of ListSessions.
type ListSessionsResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Sessions, most recently updated first.
	Sessions []*SessionSummary `protobuf:"bytes,1,rep,name=sessions,proto3" json:"sessions,omitempty"`
	// Token for the next page; empty when this page is the last.
	NextPageToken string `protobuf:"bytes,2,opt,name=next_page_token,json=nextPageToken,proto3" json:"next_page_token,omitempty"`
	// Number of sessions that match `id_contains` (all pages).
	Total         int64 `protobuf:"varint,3,opt,name=total,proto3" json:"total,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ListSessionsResponse) Reset() {
	*x = ListSessionsResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[32]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ListSessionsResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ListSessionsResponse) ProtoMessage() {}

func (x *ListSessionsResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[32]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ListSessionsResponse.ProtoReflect.Descriptor instead.
func (*ListSessionsResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{32}
}

func (x *ListSessionsResponse) GetSessions() []*SessionSummary {
	if x != nil {
		return x.Sessions
	}
	return nil
}

func (x *ListSessionsResponse) GetNextPageToken() string {
	if x != nil {
		return x.NextPageToken
	}
	return ""
}

func (x *ListSessionsResponse) GetTotal() int64 {
	if x != nil {
		return x.Total
	}
	return 0
}

// GetUsage: one session's usage broken down by model.
type GetUsageRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Session id.
	SessionId     string `protobuf:"bytes,1,opt,name=session_id,json=sessionId,proto3" json:"session_id,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *GetUsageRequest) Reset() {
	*x = GetUsageRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[33]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *GetUsageRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*GetUsageRequest) ProtoMessage() {}

func (x *GetUsageRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[33]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use GetUsageRequest.ProtoReflect.Descriptor instead.
func (*GetUsageRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{33}
}

func (x *GetUsageRequest) GetSessionId() string {
	if x != nil {
		return x.SessionId
	}
	return ""
}

// Usage of one (model, pricing version, currency).
type ModelUsage struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Model id.
	Model string `protobuf:"bytes,1,opt,name=model,proto3" json:"model,omitempty"`
	// Pricing version.
	PricingVersion string `protobuf:"bytes,2,opt,name=pricing_version,json=pricingVersion,proto3" json:"pricing_version,omitempty"`
	// Totals for this model.
	Usage         *Usage `protobuf:"bytes,3,opt,name=usage,proto3" json:"usage,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ModelUsage) Reset() {
	*x = ModelUsage{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[34]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ModelUsage) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ModelUsage) ProtoMessage() {}

func (x *ModelUsage) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[34]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ModelUsage.ProtoReflect.Descriptor instead.
func (*ModelUsage) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{34}
}

func (x *ModelUsage) GetModel() string {
	if x != nil {
		return x.Model
	}
	return ""
}

func (x *ModelUsage) GetPricingVersion() string {
	if x != nil {
		return x.PricingVersion
	}
	return ""
}

func (x *ModelUsage) GetUsage() *Usage {
	if x != nil {
		return x.Usage
	}
	return nil
}

// Usage of one session.
type GetUsageResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Session totals.
	Total *Usage `protobuf:"bytes,1,opt,name=total,proto3" json:"total,omitempty"`
	// Per-model breakdown.
	ByModel       []*ModelUsage `protobuf:"bytes,2,rep,name=by_model,json=byModel,proto3" json:"by_model,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *GetUsageResponse) Reset() {
	*x = GetUsageResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[35]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *GetUsageResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*GetUsageResponse) ProtoMessage() {}

func (x *GetUsageResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[35]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use GetUsageResponse.ProtoReflect.Descriptor instead.
func (*GetUsageResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{35}
}

func (x *GetUsageResponse) GetTotal() *Usage {
	if x != nil {
		return x.Total
	}
	return nil
}

func (x *GetUsageResponse) GetByModel() []*ModelUsage {
	if x != nil {
		return x.ByModel
	}
	return nil
}

// Delete: erase a session.
//
// No request id, and none needed: a Delete converges. A retry after a Delete
// that committed (its reply lost) finds no session and answers OK with
// `events_deleted` 0 (a Delete of a missing session is not an error), so the
// stored state is the same as after one call. The one hazard is a session
// written again between the two calls (by another client, or the first
// client's own retried Append): the retry deletes that too, as any Delete
// would; a client that shares a session id must coordinate its Delete.
type DeleteRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Session id to erase.
	SessionId     string `protobuf:"bytes,1,opt,name=session_id,json=sessionId,proto3" json:"session_id,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *DeleteRequest) Reset() {
	*x = DeleteRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[36]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *DeleteRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*DeleteRequest) ProtoMessage() {}

func (x *DeleteRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[36]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use DeleteRequest.ProtoReflect.Descriptor instead.
func (*DeleteRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{36}
}

func (x *DeleteRequest) GetSessionId() string {
	if x != nil {
		return x.SessionId
	}
	return ""
}

// The outcome of a Delete.
type DeleteResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Number of events removed (0 if the session did not exist).
	EventsDeleted int64 `protobuf:"varint,1,opt,name=events_deleted,json=eventsDeleted,proto3" json:"events_deleted,omitempty"`
	// True if the deleted content may still be in the database files: the WAL
	// checkpoint that removes it could not complete (a reader holds an older
	// snapshot). The daemon retries in the background and logs
	// event=erasure_completed when done; GetStats.erasure_pending_sessions
	// counts the sessions still waiting.
	ErasurePending bool `protobuf:"varint,2,opt,name=erasure_pending,json=erasurePending,proto3" json:"erasure_pending,omitempty"`
	unknownFields  protoimpl.UnknownFields
	sizeCache      protoimpl.SizeCache
}

func (x *DeleteResponse) Reset() {
	*x = DeleteResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[37]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *DeleteResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*DeleteResponse) ProtoMessage() {}

func (x *DeleteResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[37]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use DeleteResponse.ProtoReflect.Descriptor instead.
func (*DeleteResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{37}
}

func (x *DeleteResponse) GetEventsDeleted() int64 {
	if x != nil {
		return x.EventsDeleted
	}
	return 0
}

func (x *DeleteResponse) GetErasurePending() bool {
	if x != nil {
		return x.ErasurePending
	}
	return false
}

// Export: stream events in the export format.
type ExportRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Session id to export; empty exports every session.
	SessionId     string `protobuf:"bytes,1,opt,name=session_id,json=sessionId,proto3" json:"session_id,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ExportRequest) Reset() {
	*x = ExportRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[38]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ExportRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ExportRequest) ProtoMessage() {}

func (x *ExportRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[38]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ExportRequest.ProtoReflect.Descriptor instead.
func (*ExportRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{38}
}

func (x *ExportRequest) GetSessionId() string {
	if x != nil {
		return x.SessionId
	}
	return ""
}

// One line of an export.
type ExportResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// One event as a line of the export format (JSON, no trailing newline).
	Line          string `protobuf:"bytes,1,opt,name=line,proto3" json:"line,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ExportResponse) Reset() {
	*x = ExportResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[39]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ExportResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ExportResponse) ProtoMessage() {}

func (x *ExportResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[39]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ExportResponse.ProtoReflect.Descriptor instead.
func (*ExportResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{39}
}

func (x *ExportResponse) GetLine() string {
	if x != nil {
		return x.Line
	}
	return ""
}

// Import: write one session's exported events.
//
// No request id, and none needed: an Import converges in every mode (all or
// nothing, so a failed one wrote nothing). A retry after an Import that
// committed (its reply lost) leaves the session as one call left it:
//   - refuse (the default): the retry writes nothing and answers
//     FAILED_PRECONDITION, SESSION_EXISTS (the session is the first call's,
//     or another client's: compare with Export, or retry with replace);
//   - replace: the retry erases the session and writes the same events again
//     (the same history, with a new incarnation: Watch streams of the first
//     call's end NOT_FOUND); what others wrote in between is erased;
//   - merge: every event is already stored (same type, time, trace id and
//     payload), so the retry writes nothing and answers `events_imported` 0.
type ImportRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Lines of the export format (one session's events, header first).
	Lines []string `protobuf:"bytes,1,rep,name=lines,proto3" json:"lines,omitempty"`
	// What to do if the session exists: refuse (default), replace or merge.
	Mode          ImportMode `protobuf:"varint,2,opt,name=mode,proto3,enum=claw.sessiond.v1.ImportMode" json:"mode,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ImportRequest) Reset() {
	*x = ImportRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[40]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ImportRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ImportRequest) ProtoMessage() {}

func (x *ImportRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[40]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ImportRequest.ProtoReflect.Descriptor instead.
func (*ImportRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{40}
}

func (x *ImportRequest) GetLines() []string {
	if x != nil {
		return x.Lines
	}
	return nil
}

func (x *ImportRequest) GetMode() ImportMode {
	if x != nil {
		return x.Mode
	}
	return ImportMode_IMPORT_MODE_UNSPECIFIED
}

// The outcome of an Import.
type ImportResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Session id imported.
	SessionId string `protobuf:"bytes,1,opt,name=session_id,json=sessionId,proto3" json:"session_id,omitempty"`
	// Number of events written.
	EventsImported int64 `protobuf:"varint,2,opt,name=events_imported,json=eventsImported,proto3" json:"events_imported,omitempty"`
	unknownFields  protoimpl.UnknownFields
	sizeCache      protoimpl.SizeCache
}

func (x *ImportResponse) Reset() {
	*x = ImportResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[41]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ImportResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ImportResponse) ProtoMessage() {}

func (x *ImportResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[41]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ImportResponse.ProtoReflect.Descriptor instead.
func (*ImportResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{41}
}

func (x *ImportResponse) GetSessionId() string {
	if x != nil {
		return x.SessionId
	}
	return ""
}

func (x *ImportResponse) GetEventsImported() int64 {
	if x != nil {
		return x.EventsImported
	}
	return 0
}

// GetStats takes no arguments.
type GetStatsRequest struct {
	state         protoimpl.MessageState `protogen:"open.v1"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *GetStatsRequest) Reset() {
	*x = GetStatsRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[42]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *GetStatsRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*GetStatsRequest) ProtoMessage() {}

func (x *GetStatsRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[42]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use GetStatsRequest.ProtoReflect.Descriptor instead.
func (*GetStatsRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{42}
}

// Daemon and database figures.
type GetStatsResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Sessions stored.
	Sessions int64 `protobuf:"varint,1,opt,name=sessions,proto3" json:"sessions,omitempty"`
	// Events stored.
	Events int64 `protobuf:"varint,2,opt,name=events,proto3" json:"events,omitempty"`
	// Size of sessions.db in bytes.
	DatabaseBytes int64 `protobuf:"varint,3,opt,name=database_bytes,json=databaseBytes,proto3" json:"database_bytes,omitempty"`
	// Size of sessions.db-wal in bytes.
	WalBytes int64 `protobuf:"varint,4,opt,name=wal_bytes,json=walBytes,proto3" json:"wal_bytes,omitempty"`
	// Schema version of the database.
	SchemaVersion int64 `protobuf:"varint,5,opt,name=schema_version,json=schemaVersion,proto3" json:"schema_version,omitempty"`
	// Appends committed since start.
	Appends int64 `protobuf:"varint,6,opt,name=appends,proto3" json:"appends,omitempty"`
	// Messages written since start.
	MessagesWritten int64 `protobuf:"varint,7,opt,name=messages_written,json=messagesWritten,proto3" json:"messages_written,omitempty"`
	// Tool calls repaired since start.
	Repairs int64 `protobuf:"varint,8,opt,name=repairs,proto3" json:"repairs,omitempty"`
	// Write transactions that failed since start.
	WriteFailures int64 `protobuf:"varint,9,opt,name=write_failures,json=writeFailures,proto3" json:"write_failures,omitempty"`
	// Group commits since start.
	Commits int64 `protobuf:"varint,10,opt,name=commits,proto3" json:"commits,omitempty"`
	// Open Watch streams.
	ActiveWatchers int64 `protobuf:"varint,11,opt,name=active_watchers,json=activeWatchers,proto3" json:"active_watchers,omitempty"`
	// Open Attach runs.
	ActiveRuns int64 `protobuf:"varint,12,opt,name=active_runs,json=activeRuns,proto3" json:"active_runs,omitempty"`
	// Process id of the daemon.
	Pid int64 `protobuf:"varint,13,opt,name=pid,proto3" json:"pid,omitempty"`
	// Seconds since the daemon started.
	UptimeSeconds float64 `protobuf:"fixed64,14,opt,name=uptime_seconds,json=uptimeSeconds,proto3" json:"uptime_seconds,omitempty"`
	// Daemon version.
	Version string `protobuf:"bytes,15,opt,name=version,proto3" json:"version,omitempty"`
	// RPCs finished since start, by method and status code (as on /metrics).
	Requests []*RequestCount `protobuf:"bytes,16,rep,name=requests,proto3" json:"requests,omitempty"`
	// Sessions erased since start (Delete and retention).
	SessionsDeleted int64 `protobuf:"varint,17,opt,name=sessions_deleted,json=sessionsDeleted,proto3" json:"sessions_deleted,omitempty"`
	// Sessions erased by the retention policy since start.
	RetentionSessionsDeleted int64 `protobuf:"varint,18,opt,name=retention_sessions_deleted,json=retentionSessionsDeleted,proto3" json:"retention_sessions_deleted,omitempty"`
	// Requests committed by group commits since start (sum of batch sizes;
	// divided by `commits` it is the mean batch size).
	CommitBatchRequests int64 `protobuf:"varint,19,opt,name=commit_batch_requests,json=commitBatchRequests,proto3" json:"commit_batch_requests,omitempty"`
	// Time spent in group-commit transactions since start, in seconds.
	CommitSeconds float64 `protobuf:"fixed64,20,opt,name=commit_seconds,json=commitSeconds,proto3" json:"commit_seconds,omitempty"`
	// Sessions erased (Delete, retention, import replace) whose bytes may still be
	// in sessions.db or sessions.db-wal (checkpoint waiting for readers).
	ErasurePendingSessions int64 `protobuf:"varint,21,opt,name=erasure_pending_sessions,json=erasurePendingSessions,proto3" json:"erasure_pending_sessions,omitempty"`
	// Idempotency records stored (request ids remembered for replay).
	RequestRecords int64 `protobuf:"varint,22,opt,name=request_records,json=requestRecords,proto3" json:"request_records,omitempty"`
	// Idempotency records pruned since start (older than the retry window).
	RequestRecordsPruned int64 `protobuf:"varint,23,opt,name=request_records_pruned,json=requestRecordsPruned,proto3" json:"request_records_pruned,omitempty"`
	// The store this daemon serves: "sqlite" or "postgresql".
	Backend string `protobuf:"bytes,24,opt,name=backend,proto3" json:"backend,omitempty"`
	// Which one: the SQLite file's path, or "host:port/database" (never a password).
	Database      string `protobuf:"bytes,25,opt,name=database,proto3" json:"database,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *GetStatsResponse) Reset() {
	*x = GetStatsResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[43]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *GetStatsResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*GetStatsResponse) ProtoMessage() {}

func (x *GetStatsResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[43]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use GetStatsResponse.ProtoReflect.Descriptor instead.
func (*GetStatsResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{43}
}

func (x *GetStatsResponse) GetSessions() int64 {
	if x != nil {
		return x.Sessions
	}
	return 0
}

func (x *GetStatsResponse) GetEvents() int64 {
	if x != nil {
		return x.Events
	}
	return 0
}

func (x *GetStatsResponse) GetDatabaseBytes() int64 {
	if x != nil {
		return x.DatabaseBytes
	}
	return 0
}

func (x *GetStatsResponse) GetWalBytes() int64 {
	if x != nil {
		return x.WalBytes
	}
	return 0
}

func (x *GetStatsResponse) GetSchemaVersion() int64 {
	if x != nil {
		return x.SchemaVersion
	}
	return 0
}

func (x *GetStatsResponse) GetAppends() int64 {
	if x != nil {
		return x.Appends
	}
	return 0
}

func (x *GetStatsResponse) GetMessagesWritten() int64 {
	if x != nil {
		return x.MessagesWritten
	}
	return 0
}

func (x *GetStatsResponse) GetRepairs() int64 {
	if x != nil {
		return x.Repairs
	}
	return 0
}

func (x *GetStatsResponse) GetWriteFailures() int64 {
	if x != nil {
		return x.WriteFailures
	}
	return 0
}

func (x *GetStatsResponse) GetCommits() int64 {
	if x != nil {
		return x.Commits
	}
	return 0
}

func (x *GetStatsResponse) GetActiveWatchers() int64 {
	if x != nil {
		return x.ActiveWatchers
	}
	return 0
}

func (x *GetStatsResponse) GetActiveRuns() int64 {
	if x != nil {
		return x.ActiveRuns
	}
	return 0
}

func (x *GetStatsResponse) GetPid() int64 {
	if x != nil {
		return x.Pid
	}
	return 0
}

func (x *GetStatsResponse) GetUptimeSeconds() float64 {
	if x != nil {
		return x.UptimeSeconds
	}
	return 0
}

func (x *GetStatsResponse) GetVersion() string {
	if x != nil {
		return x.Version
	}
	return ""
}

func (x *GetStatsResponse) GetRequests() []*RequestCount {
	if x != nil {
		return x.Requests
	}
	return nil
}

func (x *GetStatsResponse) GetSessionsDeleted() int64 {
	if x != nil {
		return x.SessionsDeleted
	}
	return 0
}

func (x *GetStatsResponse) GetRetentionSessionsDeleted() int64 {
	if x != nil {
		return x.RetentionSessionsDeleted
	}
	return 0
}

func (x *GetStatsResponse) GetCommitBatchRequests() int64 {
	if x != nil {
		return x.CommitBatchRequests
	}
	return 0
}

func (x *GetStatsResponse) GetCommitSeconds() float64 {
	if x != nil {
		return x.CommitSeconds
	}
	return 0
}

func (x *GetStatsResponse) GetErasurePendingSessions() int64 {
	if x != nil {
		return x.ErasurePendingSessions
	}
	return 0
}

func (x *GetStatsResponse) GetRequestRecords() int64 {
	if x != nil {
		return x.RequestRecords
	}
	return 0
}

func (x *GetStatsResponse) GetRequestRecordsPruned() int64 {
	if x != nil {
		return x.RequestRecordsPruned
	}
	return 0
}

func (x *GetStatsResponse) GetBackend() string {
	if x != nil {
		return x.Backend
	}
	return ""
}

func (x *GetStatsResponse) GetDatabase() string {
	if x != nil {
		return x.Database
	}
	return ""
}

// How many RPCs of one method ended with one status code.
type RequestCount struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// RPC method name (for example "Append").
	Method string `protobuf:"bytes,1,opt,name=method,proto3" json:"method,omitempty"`
	// Status code name (for example "OK", "NOT_FOUND").
	Code string `protobuf:"bytes,2,opt,name=code,proto3" json:"code,omitempty"`
	// Number of calls.
	Count         int64 `protobuf:"varint,3,opt,name=count,proto3" json:"count,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *RequestCount) Reset() {
	*x = RequestCount{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[44]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *RequestCount) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*RequestCount) ProtoMessage() {}

func (x *RequestCount) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[44]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use RequestCount.ProtoReflect.Descriptor instead.
func (*RequestCount) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{44}
}

func (x *RequestCount) GetMethod() string {
	if x != nil {
		return x.Method
	}
	return ""
}

func (x *RequestCount) GetCode() string {
	if x != nil {
		return x.Code
	}
	return ""
}

func (x *RequestCount) GetCount() int64 {
	if x != nil {
		return x.Count
	}
	return 0
}

// Backup takes no arguments.
type BackupRequest struct {
	state         protoimpl.MessageState `protogen:"open.v1"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *BackupRequest) Reset() {
	*x = BackupRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[45]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *BackupRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*BackupRequest) ProtoMessage() {}

func (x *BackupRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[45]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use BackupRequest.ProtoReflect.Descriptor instead.
func (*BackupRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{45}
}

// One chunk of a backup.
type BackupResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The next bytes of the copy (at most 1 MiB per reply).
	Data []byte `protobuf:"bytes,1,opt,name=data,proto3" json:"data,omitempty"`
	// Set in the first reply only: figures of the copy, read from it.
	Figures       *BackupFigures `protobuf:"bytes,2,opt,name=figures,proto3" json:"figures,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *BackupResponse) Reset() {
	*x = BackupResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[46]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *BackupResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*BackupResponse) ProtoMessage() {}

func (x *BackupResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[46]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use BackupResponse.ProtoReflect.Descriptor instead.
func (*BackupResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{46}
}

func (x *BackupResponse) GetData() []byte {
	if x != nil {
		return x.Data
	}
	return nil
}

func (x *BackupResponse) GetFigures() *BackupFigures {
	if x != nil {
		return x.Figures
	}
	return nil
}

// What a backup holds, read from the copy itself.
type BackupFigures struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Sessions in the copy.
	Sessions int64 `protobuf:"varint,1,opt,name=sessions,proto3" json:"sessions,omitempty"`
	// Events in the copy.
	Events int64 `protobuf:"varint,2,opt,name=events,proto3" json:"events,omitempty"`
	// Size of the copy in bytes (the sum of every reply's data).
	Bytes int64 `protobuf:"varint,3,opt,name=bytes,proto3" json:"bytes,omitempty"`
	// Schema version of the copy.
	SchemaVersion int64 `protobuf:"varint,4,opt,name=schema_version,json=schemaVersion,proto3" json:"schema_version,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *BackupFigures) Reset() {
	*x = BackupFigures{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[47]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *BackupFigures) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*BackupFigures) ProtoMessage() {}

func (x *BackupFigures) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[47]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use BackupFigures.ProtoReflect.Descriptor instead.
func (*BackupFigures) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{47}
}

func (x *BackupFigures) GetSessions() int64 {
	if x != nil {
		return x.Sessions
	}
	return 0
}

func (x *BackupFigures) GetEvents() int64 {
	if x != nil {
		return x.Events
	}
	return 0
}

func (x *BackupFigures) GetBytes() int64 {
	if x != nil {
		return x.Bytes
	}
	return 0
}

func (x *BackupFigures) GetSchemaVersion() int64 {
	if x != nil {
		return x.SchemaVersion
	}
	return 0
}

// Search: full-text search over message content.
type SearchRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The words to find (at most 1024 bytes). Plain words by default: every
	// word must occur (in any order); with `raw` it is an FTS5 query
	// (phrases, OR, NOT, prefix*, NEAR).
	Query string `protobuf:"bytes,1,opt,name=query,proto3" json:"query,omitempty"`
	// Treat `query` as FTS5 query syntax.
	Raw bool `protobuf:"varint,2,opt,name=raw,proto3" json:"raw,omitempty"`
	// Only this session (empty: every session).
	SessionId string `protobuf:"bytes,3,opt,name=session_id,json=sessionId,proto3" json:"session_id,omitempty"`
	// Only messages of this role (ROLE_UNSPECIFIED: any).
	Role Role `protobuf:"varint,4,opt,name=role,proto3,enum=claw.sessiond.v1.Role" json:"role,omitempty"`
	// Only messages stored at or after this time.
	Since *timestamppb.Timestamp `protobuf:"bytes,5,opt,name=since,proto3" json:"since,omitempty"`
	// Only messages stored before this time.
	Until *timestamppb.Timestamp `protobuf:"bytes,6,opt,name=until,proto3" json:"until,omitempty"`
	// Most hits to return (0: 20; at most 200).
	Limit int32 `protobuf:"varint,7,opt,name=limit,proto3" json:"limit,omitempty"`
	// Also search history hidden by a Clear (still in the log until deleted).
	IncludeCleared bool `protobuf:"varint,8,opt,name=include_cleared,json=includeCleared,proto3" json:"include_cleared,omitempty"`
	unknownFields  protoimpl.UnknownFields
	sizeCache      protoimpl.SizeCache
}

func (x *SearchRequest) Reset() {
	*x = SearchRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[48]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *SearchRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*SearchRequest) ProtoMessage() {}

func (x *SearchRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[48]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use SearchRequest.ProtoReflect.Descriptor instead.
func (*SearchRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{48}
}

func (x *SearchRequest) GetQuery() string {
	if x != nil {
		return x.Query
	}
	return ""
}

func (x *SearchRequest) GetRaw() bool {
	if x != nil {
		return x.Raw
	}
	return false
}

func (x *SearchRequest) GetSessionId() string {
	if x != nil {
		return x.SessionId
	}
	return ""
}

func (x *SearchRequest) GetRole() Role {
	if x != nil {
		return x.Role
	}
	return Role_ROLE_UNSPECIFIED
}

func (x *SearchRequest) GetSince() *timestamppb.Timestamp {
	if x != nil {
		return x.Since
	}
	return nil
}

func (x *SearchRequest) GetUntil() *timestamppb.Timestamp {
	if x != nil {
		return x.Until
	}
	return nil
}

func (x *SearchRequest) GetLimit() int32 {
	if x != nil {
		return x.Limit
	}
	return 0
}

func (x *SearchRequest) GetIncludeCleared() bool {
	if x != nil {
		return x.IncludeCleared
	}
	return false
}

// Search hits.
type SearchResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Best match first.
	Hits []*SearchHit `protobuf:"bytes,1,rep,name=hits,proto3" json:"hits,omitempty"`
	// True if more hits matched than `limit`.
	Truncated     bool `protobuf:"varint,2,opt,name=truncated,proto3" json:"truncated,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *SearchResponse) Reset() {
	*x = SearchResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[49]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *SearchResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*SearchResponse) ProtoMessage() {}

func (x *SearchResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[49]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use SearchResponse.ProtoReflect.Descriptor instead.
func (*SearchResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{49}
}

func (x *SearchResponse) GetHits() []*SearchHit {
	if x != nil {
		return x.Hits
	}
	return nil
}

func (x *SearchResponse) GetTruncated() bool {
	if x != nil {
		return x.Truncated
	}
	return false
}

// One message that matched a search.
type SearchHit struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Session the message belongs to.
	SessionId string `protobuf:"bytes,1,opt,name=session_id,json=sessionId,proto3" json:"session_id,omitempty"`
	// The message's position in its session.
	Position int64 `protobuf:"varint,2,opt,name=position,proto3" json:"position,omitempty"`
	// Role of the message.
	Role Role `protobuf:"varint,3,opt,name=role,proto3,enum=claw.sessiond.v1.Role" json:"role,omitempty"`
	// Stored time of the message.
	CreatedAt *timestamppb.Timestamp `protobuf:"bytes,4,opt,name=created_at,json=createdAt,proto3" json:"created_at,omitempty"`
	// bm25 rank: lower is a better match.
	Rank float64 `protobuf:"fixed64,5,opt,name=rank,proto3" json:"rank,omitempty"`
	// A short excerpt around the matches, in order; `match` parts are the
	// matched words.
	Snippet []*SnippetPart `protobuf:"bytes,6,rep,name=snippet,proto3" json:"snippet,omitempty"`
	// True if the message is in history hidden by a Clear.
	Cleared       bool `protobuf:"varint,7,opt,name=cleared,proto3" json:"cleared,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *SearchHit) Reset() {
	*x = SearchHit{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[50]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *SearchHit) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*SearchHit) ProtoMessage() {}

func (x *SearchHit) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[50]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use SearchHit.ProtoReflect.Descriptor instead.
func (*SearchHit) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{50}
}

func (x *SearchHit) GetSessionId() string {
	if x != nil {
		return x.SessionId
	}
	return ""
}

func (x *SearchHit) GetPosition() int64 {
	if x != nil {
		return x.Position
	}
	return 0
}

func (x *SearchHit) GetRole() Role {
	if x != nil {
		return x.Role
	}
	return Role_ROLE_UNSPECIFIED
}

func (x *SearchHit) GetCreatedAt() *timestamppb.Timestamp {
	if x != nil {
		return x.CreatedAt
	}
	return nil
}

func (x *SearchHit) GetRank() float64 {
	if x != nil {
		return x.Rank
	}
	return 0
}

func (x *SearchHit) GetSnippet() []*SnippetPart {
	if x != nil {
		return x.Snippet
	}
	return nil
}

func (x *SearchHit) GetCleared() bool {
	if x != nil {
		return x.Cleared
	}
	return false
}

// A piece of a search snippet.
type SnippetPart struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Text of this piece.
	Text string `protobuf:"bytes,1,opt,name=text,proto3" json:"text,omitempty"`
	// True if this piece is a matched word.
	Match         bool `protobuf:"varint,2,opt,name=match,proto3" json:"match,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *SnippetPart) Reset() {
	*x = SnippetPart{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[51]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *SnippetPart) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*SnippetPart) ProtoMessage() {}

func (x *SnippetPart) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[51]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use SnippetPart.ProtoReflect.Descriptor instead.
func (*SnippetPart) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{51}
}

func (x *SnippetPart) GetText() string {
	if x != nil {
		return x.Text
	}
	return ""
}

func (x *SnippetPart) GetMatch() bool {
	if x != nil {
		return x.Match
	}
	return false
}

// WatchAll: follow the history events of every session.
type WatchAllRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Send history events with an event id above this one (0: see `last`).
	AfterEventId int64 `protobuf:"varint,1,opt,name=after_event_id,json=afterEventId,proto3" json:"after_event_id,omitempty"`
	// With after_event_id 0: first send the last `last` history events (at most 1000).
	Last int32 `protobuf:"varint,2,opt,name=last,proto3" json:"last,omitempty"`
	// Resume exactly after `after_event_id`, even when it is 0 (a stream whose
	// start marker said 0: the database had no event yet).
	Resume bool `protobuf:"varint,3,opt,name=resume,proto3" json:"resume,omitempty"`
	// The client accepts batches (see WatchRequest.batch): each reply after
	// the start marker carries its events in `WatchAllResponse.events`.
	Batch bool `protobuf:"varint,4,opt,name=batch,proto3" json:"batch,omitempty"`
	// Process id of the caller (see WatchRequest.pid).
	Pid           int64 `protobuf:"varint,5,opt,name=pid,proto3" json:"pid,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *WatchAllRequest) Reset() {
	*x = WatchAllRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[52]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *WatchAllRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*WatchAllRequest) ProtoMessage() {}

func (x *WatchAllRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[52]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use WatchAllRequest.ProtoReflect.Descriptor instead.
func (*WatchAllRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{52}
}

func (x *WatchAllRequest) GetAfterEventId() int64 {
	if x != nil {
		return x.AfterEventId
	}
	return 0
}

func (x *WatchAllRequest) GetLast() int32 {
	if x != nil {
		return x.Last
	}
	return 0
}

func (x *WatchAllRequest) GetResume() bool {
	if x != nil {
		return x.Resume
	}
	return false
}

func (x *WatchAllRequest) GetBatch() bool {
	if x != nil {
		return x.Batch
	}
	return false
}

func (x *WatchAllRequest) GetPid() int64 {
	if x != nil {
		return x.Pid
	}
	return 0
}

// One event of WatchAll.
type WatchAllResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The event's id (resume with after_event_id set to the last one received).
	EventId int64 `protobuf:"varint,1,opt,name=event_id,json=eventId,proto3" json:"event_id,omitempty"`
	// Session of the event.
	SessionId string `protobuf:"bytes,2,opt,name=session_id,json=sessionId,proto3" json:"session_id,omitempty"`
	// Position of the event in its session.
	Position int64 `protobuf:"varint,3,opt,name=position,proto3" json:"position,omitempty"`
	// Set for a message event (synthetic repairs included).
	Message *Message `protobuf:"bytes,4,opt,name=message,proto3" json:"message,omitempty"`
	// True for a clear event.
	Cleared bool `protobuf:"varint,5,opt,name=cleared,proto3" json:"cleared,omitempty"`
	// Set only on the first reply of a stream that is not a resume: no
	// event, `event_id` is the id the stream follows after (resume from it even
	// if no event arrived yet).
	Started bool `protobuf:"varint,6,opt,name=started,proto3" json:"started,omitempty"`
	// Set for an EditTail event (see WatchResponse.edit).
	Edit *TailEdit `protobuf:"bytes,7,opt,name=edit,proto3" json:"edit,omitempty"`
	// With `cleared`: the clear erased the log.
	Erased bool `protobuf:"varint,8,opt,name=erased,proto3" json:"erased,omitempty"`
	// Only when WatchAllRequest.batch is set: the events of this reply, in
	// event id order, each one shaped as an unbatched reply (`events` unset).
	Events        []*WatchAllResponse `protobuf:"bytes,9,rep,name=events,proto3" json:"events,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *WatchAllResponse) Reset() {
	*x = WatchAllResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[53]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *WatchAllResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*WatchAllResponse) ProtoMessage() {}

func (x *WatchAllResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[53]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use WatchAllResponse.ProtoReflect.Descriptor instead.
func (*WatchAllResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{53}
}

func (x *WatchAllResponse) GetEventId() int64 {
	if x != nil {
		return x.EventId
	}
	return 0
}

func (x *WatchAllResponse) GetSessionId() string {
	if x != nil {
		return x.SessionId
	}
	return ""
}

func (x *WatchAllResponse) GetPosition() int64 {
	if x != nil {
		return x.Position
	}
	return 0
}

func (x *WatchAllResponse) GetMessage() *Message {
	if x != nil {
		return x.Message
	}
	return nil
}

func (x *WatchAllResponse) GetCleared() bool {
	if x != nil {
		return x.Cleared
	}
	return false
}

func (x *WatchAllResponse) GetStarted() bool {
	if x != nil {
		return x.Started
	}
	return false
}

func (x *WatchAllResponse) GetEdit() *TailEdit {
	if x != nil {
		return x.Edit
	}
	return nil
}

func (x *WatchAllResponse) GetErased() bool {
	if x != nil {
		return x.Erased
	}
	return false
}

func (x *WatchAllResponse) GetEvents() []*WatchAllResponse {
	if x != nil {
		return x.Events
	}
	return nil
}

// GetUsageReport: usage across sessions, grouped.
type GetUsageReportRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Only usage recorded at or after this time.
	Since *timestamppb.Timestamp `protobuf:"bytes,1,opt,name=since,proto3" json:"since,omitempty"`
	// Only usage recorded before this time.
	Until *timestamppb.Timestamp `protobuf:"bytes,2,opt,name=until,proto3" json:"until,omitempty"`
	// Also group by session (more rows).
	BySession     bool `protobuf:"varint,3,opt,name=by_session,json=bySession,proto3" json:"by_session,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *GetUsageReportRequest) Reset() {
	*x = GetUsageReportRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[54]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *GetUsageReportRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*GetUsageReportRequest) ProtoMessage() {}

func (x *GetUsageReportRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[54]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use GetUsageReportRequest.ProtoReflect.Descriptor instead.
func (*GetUsageReportRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{54}
}

func (x *GetUsageReportRequest) GetSince() *timestamppb.Timestamp {
	if x != nil {
		return x.Since
	}
	return nil
}

func (x *GetUsageReportRequest) GetUntil() *timestamppb.Timestamp {
	if x != nil {
		return x.Until
	}
	return nil
}

func (x *GetUsageReportRequest) GetBySession() bool {
	if x != nil {
		return x.BySession
	}
	return false
}

// The usage report.
type GetUsageReportResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Ordered by day, model, pricing version, currency (then session).
	Rows []*UsageReportRow `protobuf:"bytes,1,rep,name=rows,proto3" json:"rows,omitempty"`
	// True if there were more groups than the daemon returns (10000).
	Truncated     bool `protobuf:"varint,2,opt,name=truncated,proto3" json:"truncated,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *GetUsageReportResponse) Reset() {
	*x = GetUsageReportResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[55]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *GetUsageReportResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*GetUsageReportResponse) ProtoMessage() {}

func (x *GetUsageReportResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[55]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use GetUsageReportResponse.ProtoReflect.Descriptor instead.
func (*GetUsageReportResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{55}
}

func (x *GetUsageReportResponse) GetRows() []*UsageReportRow {
	if x != nil {
		return x.Rows
	}
	return nil
}

func (x *GetUsageReportResponse) GetTruncated() bool {
	if x != nil {
		return x.Truncated
	}
	return false
}

// Usage of one (UTC day, model, pricing version, currency[, session]) group.
type UsageReportRow struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// UTC day, YYYY-MM-DD.
	Day string `protobuf:"bytes,1,opt,name=day,proto3" json:"day,omitempty"`
	// Model id.
	Model string `protobuf:"bytes,2,opt,name=model,proto3" json:"model,omitempty"`
	// Pricing version.
	PricingVersion string `protobuf:"bytes,3,opt,name=pricing_version,json=pricingVersion,proto3" json:"pricing_version,omitempty"`
	// Token counts, cost (micros) and its currency; costs of different
	// currencies are never added together.
	Usage *Usage `protobuf:"bytes,4,opt,name=usage,proto3" json:"usage,omitempty"`
	// Set only when grouped by session.
	SessionId string `protobuf:"bytes,5,opt,name=session_id,json=sessionId,proto3" json:"session_id,omitempty"`
	// Usage events in the group.
	Events        int64 `protobuf:"varint,6,opt,name=events,proto3" json:"events,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *UsageReportRow) Reset() {
	*x = UsageReportRow{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[56]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *UsageReportRow) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*UsageReportRow) ProtoMessage() {}

func (x *UsageReportRow) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[56]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use UsageReportRow.ProtoReflect.Descriptor instead.
func (*UsageReportRow) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{56}
}

func (x *UsageReportRow) GetDay() string {
	if x != nil {
		return x.Day
	}
	return ""
}

func (x *UsageReportRow) GetModel() string {
	if x != nil {
		return x.Model
	}
	return ""
}

func (x *UsageReportRow) GetPricingVersion() string {
	if x != nil {
		return x.PricingVersion
	}
	return ""
}

func (x *UsageReportRow) GetUsage() *Usage {
	if x != nil {
		return x.Usage
	}
	return nil
}

func (x *UsageReportRow) GetSessionId() string {
	if x != nil {
		return x.SessionId
	}
	return ""
}

func (x *UsageReportRow) GetEvents() int64 {
	if x != nil {
		return x.Events
	}
	return 0
}

// EditTail: replace the end of a session's history.
type EditTailRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Session id (see LoadRequest).
	SessionId string `protobuf:"bytes,1,opt,name=session_id,json=sessionId,proto3" json:"session_id,omitempty"`
	// Remove the last N visible entries (exactly one of `remove_last` and
	// `after_position` may be set; neither: remove nothing, only append).
	RemoveLast int32 `protobuf:"varint,2,opt,name=remove_last,json=removeLast,proto3" json:"remove_last,omitempty"`
	// Remove every visible entry with a position greater than this.
	AfterPosition int64 `protobuf:"varint,3,opt,name=after_position,json=afterPosition,proto3" json:"after_position,omitempty"`
	// Entries to add in place of the removed ones (Append's rules apply).
	Replacements []*Message `protobuf:"bytes,4,rep,name=replacements,proto3" json:"replacements,omitempty"`
	// Optimistic concurrency (see AppendRequest): 0 is no check.
	ExpectedLastPosition int64 `protobuf:"varint,5,opt,name=expected_last_position,json=expectedLastPosition,proto3" json:"expected_last_position,omitempty"`
	// Idempotency key (see AppendRequest).
	RequestId string `protobuf:"bytes,6,opt,name=request_id,json=requestId,proto3" json:"request_id,omitempty"`
	// If set, the session's stored workdir becomes this.
	Workdir string `protobuf:"bytes,7,opt,name=workdir,proto3" json:"workdir,omitempty"`
	// Run id from Attach for tool calls among the replacements.
	RunId string `protobuf:"bytes,8,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	// Trace id.
	TraceId string `protobuf:"bytes,9,opt,name=trace_id,json=traceId,proto3" json:"trace_id,omitempty"`
	// Tool-call rules for the replacements.
	ToolPolicy *ToolPolicy `protobuf:"bytes,10,opt,name=tool_policy,json=toolPolicy,proto3" json:"tool_policy,omitempty"`
	// Allow removing an entry that holds a pending call still unanswered
	// (refused by default: FAILED_PRECONDITION, reason EDIT_SPLITS_CALL).
	DiscardPending bool `protobuf:"varint,11,opt,name=discard_pending,json=discardPending,proto3" json:"discard_pending,omitempty"`
	unknownFields  protoimpl.UnknownFields
	sizeCache      protoimpl.SizeCache
}

func (x *EditTailRequest) Reset() {
	*x = EditTailRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[57]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *EditTailRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*EditTailRequest) ProtoMessage() {}

func (x *EditTailRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[57]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use EditTailRequest.ProtoReflect.Descriptor instead.
func (*EditTailRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{57}
}

func (x *EditTailRequest) GetSessionId() string {
	if x != nil {
		return x.SessionId
	}
	return ""
}

func (x *EditTailRequest) GetRemoveLast() int32 {
	if x != nil {
		return x.RemoveLast
	}
	return 0
}

func (x *EditTailRequest) GetAfterPosition() int64 {
	if x != nil {
		return x.AfterPosition
	}
	return 0
}

func (x *EditTailRequest) GetReplacements() []*Message {
	if x != nil {
		return x.Replacements
	}
	return nil
}

func (x *EditTailRequest) GetExpectedLastPosition() int64 {
	if x != nil {
		return x.ExpectedLastPosition
	}
	return 0
}

func (x *EditTailRequest) GetRequestId() string {
	if x != nil {
		return x.RequestId
	}
	return ""
}

func (x *EditTailRequest) GetWorkdir() string {
	if x != nil {
		return x.Workdir
	}
	return ""
}

func (x *EditTailRequest) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

func (x *EditTailRequest) GetTraceId() string {
	if x != nil {
		return x.TraceId
	}
	return ""
}

func (x *EditTailRequest) GetToolPolicy() *ToolPolicy {
	if x != nil {
		return x.ToolPolicy
	}
	return nil
}

func (x *EditTailRequest) GetDiscardPending() bool {
	if x != nil {
		return x.DiscardPending
	}
	return false
}

// The outcome of an EditTail.
type EditTailResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The removed entries, in position order.
	Removed []*Message `protobuf:"bytes,1,rep,name=removed,proto3" json:"removed,omitempty"`
	// Position of the edit event.
	EditPosition int64 `protobuf:"varint,2,opt,name=edit_position,json=editPosition,proto3" json:"edit_position,omitempty"`
	// Positions of the first and last replacement (0 if none).
	FirstPosition int64 `protobuf:"varint,3,opt,name=first_position,json=firstPosition,proto3" json:"first_position,omitempty"`
	// Position of the last replacement (0 if none).
	LastPosition int64 `protobuf:"varint,4,opt,name=last_position,json=lastPosition,proto3" json:"last_position,omitempty"`
	// True if this is the stored result of an earlier request with the same id
	// (`removed` is then empty: the entries went with the first request).
	Replayed bool `protobuf:"varint,5,opt,name=replayed,proto3" json:"replayed,omitempty"`
	// Trace id of the call that made the edit.
	TraceId       string `protobuf:"bytes,6,opt,name=trace_id,json=traceId,proto3" json:"trace_id,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *EditTailResponse) Reset() {
	*x = EditTailResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[58]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *EditTailResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*EditTailResponse) ProtoMessage() {}

func (x *EditTailResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[58]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use EditTailResponse.ProtoReflect.Descriptor instead.
func (*EditTailResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{58}
}

func (x *EditTailResponse) GetRemoved() []*Message {
	if x != nil {
		return x.Removed
	}
	return nil
}

func (x *EditTailResponse) GetEditPosition() int64 {
	if x != nil {
		return x.EditPosition
	}
	return 0
}

func (x *EditTailResponse) GetFirstPosition() int64 {
	if x != nil {
		return x.FirstPosition
	}
	return 0
}

func (x *EditTailResponse) GetLastPosition() int64 {
	if x != nil {
		return x.LastPosition
	}
	return 0
}

func (x *EditTailResponse) GetReplayed() bool {
	if x != nil {
		return x.Replayed
	}
	return false
}

func (x *EditTailResponse) GetTraceId() string {
	if x != nil {
		return x.TraceId
	}
	return ""
}

// DeleteEntries: remove visible entries anywhere in a history. Exactly one
// selector: `client_ids`, `client_id_prefix`, or a range (`from_position`,
// optionally `to_position`). At most max_batch_messages (10000 by default)
// entries per request: a selector matching more is INVALID_ARGUMENT
// (FIELD_TOO_LARGE) and writes nothing. Removing one half of a tool call and
// its result (a call whose result stays, a result whose call stays, or a call
// still awaiting its result) is FAILED_PRECONDITION (EDIT_SPLITS_CALL) unless
// `discard_pending`. An unknown session is NOT_FOUND (SESSION_NOT_FOUND). A
// selector that matches no visible entry writes nothing (edit_position 0).
type DeleteEntriesRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Session id (see LoadRequest).
	SessionId string `protobuf:"bytes,1,opt,name=session_id,json=sessionId,proto3" json:"session_id,omitempty"`
	// The visible entries with these client ids (each 1-256 bytes, at most
	// max_batch_messages ids; ids not stored are skipped).
	ClientIds []string `protobuf:"bytes,2,rep,name=client_ids,json=clientIds,proto3" json:"client_ids,omitempty"`
	// The visible entries whose client id starts with this (1-256 bytes).
	ClientIdPrefix string `protobuf:"bytes,3,opt,name=client_id_prefix,json=clientIdPrefix,proto3" json:"client_id_prefix,omitempty"`
	// The visible entries from this position (>= 1) ...
	FromPosition int64 `protobuf:"varint,4,opt,name=from_position,json=fromPosition,proto3" json:"from_position,omitempty"`
	// ... up to this one, inclusive (0: up to the last position).
	ToPosition int64 `protobuf:"varint,5,opt,name=to_position,json=toPosition,proto3" json:"to_position,omitempty"`
	// Optimistic concurrency (see AppendRequest): 0 is no check.
	ExpectedLastPosition int64 `protobuf:"varint,6,opt,name=expected_last_position,json=expectedLastPosition,proto3" json:"expected_last_position,omitempty"`
	// Idempotency key (see AppendRequest).
	RequestId string `protobuf:"bytes,7,opt,name=request_id,json=requestId,proto3" json:"request_id,omitempty"`
	// Trace id.
	TraceId string `protobuf:"bytes,8,opt,name=trace_id,json=traceId,proto3" json:"trace_id,omitempty"`
	// Allow removing one half of a tool call and its result (see above): a
	// removed call's result stays (answering no call); a removed result's call
	// is open again.
	DiscardPending bool `protobuf:"varint,9,opt,name=discard_pending,json=discardPending,proto3" json:"discard_pending,omitempty"`
	unknownFields  protoimpl.UnknownFields
	sizeCache      protoimpl.SizeCache
}

func (x *DeleteEntriesRequest) Reset() {
	*x = DeleteEntriesRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[59]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *DeleteEntriesRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*DeleteEntriesRequest) ProtoMessage() {}

func (x *DeleteEntriesRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[59]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use DeleteEntriesRequest.ProtoReflect.Descriptor instead.
func (*DeleteEntriesRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{59}
}

func (x *DeleteEntriesRequest) GetSessionId() string {
	if x != nil {
		return x.SessionId
	}
	return ""
}

func (x *DeleteEntriesRequest) GetClientIds() []string {
	if x != nil {
		return x.ClientIds
	}
	return nil
}

func (x *DeleteEntriesRequest) GetClientIdPrefix() string {
	if x != nil {
		return x.ClientIdPrefix
	}
	return ""
}

func (x *DeleteEntriesRequest) GetFromPosition() int64 {
	if x != nil {
		return x.FromPosition
	}
	return 0
}

func (x *DeleteEntriesRequest) GetToPosition() int64 {
	if x != nil {
		return x.ToPosition
	}
	return 0
}

func (x *DeleteEntriesRequest) GetExpectedLastPosition() int64 {
	if x != nil {
		return x.ExpectedLastPosition
	}
	return 0
}

func (x *DeleteEntriesRequest) GetRequestId() string {
	if x != nil {
		return x.RequestId
	}
	return ""
}

func (x *DeleteEntriesRequest) GetTraceId() string {
	if x != nil {
		return x.TraceId
	}
	return ""
}

func (x *DeleteEntriesRequest) GetDiscardPending() bool {
	if x != nil {
		return x.DiscardPending
	}
	return false
}

// The outcome of a DeleteEntries.
type DeleteEntriesResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// How many entries it removed.
	RemovedCount int64 `protobuf:"varint,1,opt,name=removed_count,json=removedCount,proto3" json:"removed_count,omitempty"`
	// Their positions, ascending.
	RemovedPositions []int64 `protobuf:"varint,2,rep,packed,name=removed_positions,json=removedPositions,proto3" json:"removed_positions,omitempty"`
	// Position of the edit event that records the removal (0: nothing matched,
	// nothing was written).
	EditPosition int64 `protobuf:"varint,3,opt,name=edit_position,json=editPosition,proto3" json:"edit_position,omitempty"`
	// True if this is the stored result of an earlier request with the same id.
	Replayed bool `protobuf:"varint,4,opt,name=replayed,proto3" json:"replayed,omitempty"`
	// Trace id of the call that made the removal.
	TraceId       string `protobuf:"bytes,5,opt,name=trace_id,json=traceId,proto3" json:"trace_id,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *DeleteEntriesResponse) Reset() {
	*x = DeleteEntriesResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[60]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *DeleteEntriesResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*DeleteEntriesResponse) ProtoMessage() {}

func (x *DeleteEntriesResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[60]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use DeleteEntriesResponse.ProtoReflect.Descriptor instead.
func (*DeleteEntriesResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{60}
}

func (x *DeleteEntriesResponse) GetRemovedCount() int64 {
	if x != nil {
		return x.RemovedCount
	}
	return 0
}

func (x *DeleteEntriesResponse) GetRemovedPositions() []int64 {
	if x != nil {
		return x.RemovedPositions
	}
	return nil
}

func (x *DeleteEntriesResponse) GetEditPosition() int64 {
	if x != nil {
		return x.EditPosition
	}
	return 0
}

func (x *DeleteEntriesResponse) GetReplayed() bool {
	if x != nil {
		return x.Replayed
	}
	return false
}

func (x *DeleteEntriesResponse) GetTraceId() string {
	if x != nil {
		return x.TraceId
	}
	return ""
}

// CreateSession: create an empty session exclusively.
type CreateSessionRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Session id (see LoadRequest).
	SessionId string `protobuf:"bytes,1,opt,name=session_id,json=sessionId,proto3" json:"session_id,omitempty"`
	// The caller's absolute working folder.
	Workdir string `protobuf:"bytes,2,opt,name=workdir,proto3" json:"workdir,omitempty"`
	// Initial state: a JSON object text (empty: {}).
	State string `protobuf:"bytes,3,opt,name=state,proto3" json:"state,omitempty"`
	// Labels (keys 1-64 bytes, values up to 256 bytes, at most 32 labels).
	Labels map[string]string `protobuf:"bytes,4,rep,name=labels,proto3" json:"labels,omitempty" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	// The session's default tool policy.
	ToolPolicy *ToolPolicy `protobuf:"bytes,5,opt,name=tool_policy,json=toolPolicy,proto3" json:"tool_policy,omitempty"`
	// Idempotency key: a retry returns the first result instead of ALREADY_EXISTS.
	RequestId string `protobuf:"bytes,6,opt,name=request_id,json=requestId,proto3" json:"request_id,omitempty"`
	// Trace id.
	TraceId       string `protobuf:"bytes,7,opt,name=trace_id,json=traceId,proto3" json:"trace_id,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *CreateSessionRequest) Reset() {
	*x = CreateSessionRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[61]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *CreateSessionRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*CreateSessionRequest) ProtoMessage() {}

func (x *CreateSessionRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[61]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use CreateSessionRequest.ProtoReflect.Descriptor instead.
func (*CreateSessionRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{61}
}

func (x *CreateSessionRequest) GetSessionId() string {
	if x != nil {
		return x.SessionId
	}
	return ""
}

func (x *CreateSessionRequest) GetWorkdir() string {
	if x != nil {
		return x.Workdir
	}
	return ""
}

func (x *CreateSessionRequest) GetState() string {
	if x != nil {
		return x.State
	}
	return ""
}

func (x *CreateSessionRequest) GetLabels() map[string]string {
	if x != nil {
		return x.Labels
	}
	return nil
}

func (x *CreateSessionRequest) GetToolPolicy() *ToolPolicy {
	if x != nil {
		return x.ToolPolicy
	}
	return nil
}

func (x *CreateSessionRequest) GetRequestId() string {
	if x != nil {
		return x.RequestId
	}
	return ""
}

func (x *CreateSessionRequest) GetTraceId() string {
	if x != nil {
		return x.TraceId
	}
	return ""
}

// The outcome of a CreateSession.
type CreateSessionResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The new session.
	Session *Session `protobuf:"bytes,1,opt,name=session,proto3" json:"session,omitempty"`
	// True if this is the stored result of an earlier request with the same id.
	Replayed bool `protobuf:"varint,2,opt,name=replayed,proto3" json:"replayed,omitempty"`
	// Trace id.
	TraceId       string `protobuf:"bytes,3,opt,name=trace_id,json=traceId,proto3" json:"trace_id,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *CreateSessionResponse) Reset() {
	*x = CreateSessionResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[62]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *CreateSessionResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*CreateSessionResponse) ProtoMessage() {}

func (x *CreateSessionResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[62]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use CreateSessionResponse.ProtoReflect.Descriptor instead.
func (*CreateSessionResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{62}
}

func (x *CreateSessionResponse) GetSession() *Session {
	if x != nil {
		return x.Session
	}
	return nil
}

func (x *CreateSessionResponse) GetReplayed() bool {
	if x != nil {
		return x.Replayed
	}
	return false
}

func (x *CreateSessionResponse) GetTraceId() string {
	if x != nil {
		return x.TraceId
	}
	return ""
}

// ForkSession: copy a session's history into a new session.
type ForkSessionRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The session to copy.
	SourceSessionId string `protobuf:"bytes,1,opt,name=source_session_id,json=sourceSessionId,proto3" json:"source_session_id,omitempty"`
	// The new session's id (must not be stored: ALREADY_EXISTS).
	SessionId string `protobuf:"bytes,2,opt,name=session_id,json=sessionId,proto3" json:"session_id,omitempty"`
	// Copy the visible entries up to this position (0: all).
	UpToPosition int64 `protobuf:"varint,3,opt,name=up_to_position,json=upToPosition,proto3" json:"up_to_position,omitempty"`
	// The new session's workdir (empty: the source's).
	Workdir string `protobuf:"bytes,4,opt,name=workdir,proto3" json:"workdir,omitempty"`
	// Labels of the new session (empty: the source's).
	Labels map[string]string `protobuf:"bytes,5,rep,name=labels,proto3" json:"labels,omitempty" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	// Idempotency key (see AppendRequest).
	RequestId string `protobuf:"bytes,6,opt,name=request_id,json=requestId,proto3" json:"request_id,omitempty"`
	// Trace id.
	TraceId       string `protobuf:"bytes,7,opt,name=trace_id,json=traceId,proto3" json:"trace_id,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ForkSessionRequest) Reset() {
	*x = ForkSessionRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[63]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ForkSessionRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ForkSessionRequest) ProtoMessage() {}

func (x *ForkSessionRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[63]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ForkSessionRequest.ProtoReflect.Descriptor instead.
func (*ForkSessionRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{63}
}

func (x *ForkSessionRequest) GetSourceSessionId() string {
	if x != nil {
		return x.SourceSessionId
	}
	return ""
}

func (x *ForkSessionRequest) GetSessionId() string {
	if x != nil {
		return x.SessionId
	}
	return ""
}

func (x *ForkSessionRequest) GetUpToPosition() int64 {
	if x != nil {
		return x.UpToPosition
	}
	return 0
}

func (x *ForkSessionRequest) GetWorkdir() string {
	if x != nil {
		return x.Workdir
	}
	return ""
}

func (x *ForkSessionRequest) GetLabels() map[string]string {
	if x != nil {
		return x.Labels
	}
	return nil
}

func (x *ForkSessionRequest) GetRequestId() string {
	if x != nil {
		return x.RequestId
	}
	return ""
}

func (x *ForkSessionRequest) GetTraceId() string {
	if x != nil {
		return x.TraceId
	}
	return ""
}

// The outcome of a ForkSession.
type ForkSessionResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The new session.
	Session *Session `protobuf:"bytes,1,opt,name=session,proto3" json:"session,omitempty"`
	// Number of entries copied.
	EntriesCopied int64 `protobuf:"varint,2,opt,name=entries_copied,json=entriesCopied,proto3" json:"entries_copied,omitempty"`
	// True if this is the stored result of an earlier request with the same id.
	Replayed bool `protobuf:"varint,3,opt,name=replayed,proto3" json:"replayed,omitempty"`
	// Trace id.
	TraceId       string `protobuf:"bytes,4,opt,name=trace_id,json=traceId,proto3" json:"trace_id,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *ForkSessionResponse) Reset() {
	*x = ForkSessionResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[64]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *ForkSessionResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*ForkSessionResponse) ProtoMessage() {}

func (x *ForkSessionResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[64]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use ForkSessionResponse.ProtoReflect.Descriptor instead.
func (*ForkSessionResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{64}
}

func (x *ForkSessionResponse) GetSession() *Session {
	if x != nil {
		return x.Session
	}
	return nil
}

func (x *ForkSessionResponse) GetEntriesCopied() int64 {
	if x != nil {
		return x.EntriesCopied
	}
	return 0
}

func (x *ForkSessionResponse) GetReplayed() bool {
	if x != nil {
		return x.Replayed
	}
	return false
}

func (x *ForkSessionResponse) GetTraceId() string {
	if x != nil {
		return x.TraceId
	}
	return ""
}

// UpdateSession: change a session's state, labels or tool policy.
type UpdateSessionRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Session id; NOT_FOUND if not stored.
	SessionId string `protobuf:"bytes,1,opt,name=session_id,json=sessionId,proto3" json:"session_id,omitempty"`
	// State changes (the session's own and shared scopes), applied in order.
	StateDeltas []*StateDelta `protobuf:"bytes,2,rep,name=state_deltas,json=stateDeltas,proto3" json:"state_deltas,omitempty"`
	// Labels to set (a value replaces the old one).
	SetLabels map[string]string `protobuf:"bytes,3,rep,name=set_labels,json=setLabels,proto3" json:"set_labels,omitempty" protobuf_key:"bytes,1,opt,name=key" protobuf_val:"bytes,2,opt,name=value"`
	// Labels to remove.
	RemoveLabels []string `protobuf:"bytes,4,rep,name=remove_labels,json=removeLabels,proto3" json:"remove_labels,omitempty"`
	// If set, replaces the session's default tool policy.
	ToolPolicy *ToolPolicy `protobuf:"bytes,5,opt,name=tool_policy,json=toolPolicy,proto3" json:"tool_policy,omitempty"`
	// Optimistic concurrency (see AppendRequest).
	ExpectedLastPosition int64 `protobuf:"varint,6,opt,name=expected_last_position,json=expectedLastPosition,proto3" json:"expected_last_position,omitempty"`
	// Idempotency key (see AppendRequest).
	RequestId string `protobuf:"bytes,7,opt,name=request_id,json=requestId,proto3" json:"request_id,omitempty"`
	// Trace id.
	TraceId       string `protobuf:"bytes,8,opt,name=trace_id,json=traceId,proto3" json:"trace_id,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *UpdateSessionRequest) Reset() {
	*x = UpdateSessionRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[65]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *UpdateSessionRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*UpdateSessionRequest) ProtoMessage() {}

func (x *UpdateSessionRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[65]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use UpdateSessionRequest.ProtoReflect.Descriptor instead.
func (*UpdateSessionRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{65}
}

func (x *UpdateSessionRequest) GetSessionId() string {
	if x != nil {
		return x.SessionId
	}
	return ""
}

func (x *UpdateSessionRequest) GetStateDeltas() []*StateDelta {
	if x != nil {
		return x.StateDeltas
	}
	return nil
}

func (x *UpdateSessionRequest) GetSetLabels() map[string]string {
	if x != nil {
		return x.SetLabels
	}
	return nil
}

func (x *UpdateSessionRequest) GetRemoveLabels() []string {
	if x != nil {
		return x.RemoveLabels
	}
	return nil
}

func (x *UpdateSessionRequest) GetToolPolicy() *ToolPolicy {
	if x != nil {
		return x.ToolPolicy
	}
	return nil
}

func (x *UpdateSessionRequest) GetExpectedLastPosition() int64 {
	if x != nil {
		return x.ExpectedLastPosition
	}
	return 0
}

func (x *UpdateSessionRequest) GetRequestId() string {
	if x != nil {
		return x.RequestId
	}
	return ""
}

func (x *UpdateSessionRequest) GetTraceId() string {
	if x != nil {
		return x.TraceId
	}
	return ""
}

// The outcome of an UpdateSession.
type UpdateSessionResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The session after the change.
	Session *Session `protobuf:"bytes,1,opt,name=session,proto3" json:"session,omitempty"`
	// True if this is the stored result of an earlier request with the same id.
	Replayed bool `protobuf:"varint,2,opt,name=replayed,proto3" json:"replayed,omitempty"`
	// Trace id.
	TraceId       string `protobuf:"bytes,3,opt,name=trace_id,json=traceId,proto3" json:"trace_id,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *UpdateSessionResponse) Reset() {
	*x = UpdateSessionResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[66]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *UpdateSessionResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*UpdateSessionResponse) ProtoMessage() {}

func (x *UpdateSessionResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[66]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use UpdateSessionResponse.ProtoReflect.Descriptor instead.
func (*UpdateSessionResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{66}
}

func (x *UpdateSessionResponse) GetSession() *Session {
	if x != nil {
		return x.Session
	}
	return nil
}

func (x *UpdateSessionResponse) GetReplayed() bool {
	if x != nil {
		return x.Replayed
	}
	return false
}

func (x *UpdateSessionResponse) GetTraceId() string {
	if x != nil {
		return x.TraceId
	}
	return ""
}

// GetScopeStates: read shared scope states.
type GetScopeStatesRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// Scopes to read (1 to 100).
	Scopes        []string `protobuf:"bytes,1,rep,name=scopes,proto3" json:"scopes,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *GetScopeStatesRequest) Reset() {
	*x = GetScopeStatesRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[67]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *GetScopeStatesRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*GetScopeStatesRequest) ProtoMessage() {}

func (x *GetScopeStatesRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[67]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use GetScopeStatesRequest.ProtoReflect.Descriptor instead.
func (*GetScopeStatesRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{67}
}

func (x *GetScopeStatesRequest) GetScopes() []string {
	if x != nil {
		return x.Scopes
	}
	return nil
}

// The states read.
type GetScopeStatesResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// In request order.
	States        []*ScopeState `protobuf:"bytes,1,rep,name=states,proto3" json:"states,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *GetScopeStatesResponse) Reset() {
	*x = GetScopeStatesResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[68]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *GetScopeStatesResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*GetScopeStatesResponse) ProtoMessage() {}

func (x *GetScopeStatesResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[68]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use GetScopeStatesResponse.ProtoReflect.Descriptor instead.
func (*GetScopeStatesResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{68}
}

func (x *GetScopeStatesResponse) GetStates() []*ScopeState {
	if x != nil {
		return x.States
	}
	return nil
}

// EndRun: end a run, confirmed.
type EndRunRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The run to end (AttachResponse.run_id).
	RunId         string `protobuf:"bytes,1,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *EndRunRequest) Reset() {
	*x = EndRunRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[69]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *EndRunRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*EndRunRequest) ProtoMessage() {}

func (x *EndRunRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[69]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use EndRunRequest.ProtoReflect.Descriptor instead.
func (*EndRunRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{69}
}

func (x *EndRunRequest) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

// The outcome of an EndRun.
type EndRunResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// True if this call ended a live run; false if it was not live (already
	// ended, dropped, or unknown to this daemon).
	WasLive bool `protobuf:"varint,1,opt,name=was_live,json=wasLive,proto3" json:"was_live,omitempty"`
	// The run's session ("" when unknown).
	SessionId string `protobuf:"bytes,2,opt,name=session_id,json=sessionId,proto3" json:"session_id,omitempty"`
	// Why the run ended (see AttachRequest): "ended" when this call ended it.
	Cause         string `protobuf:"bytes,3,opt,name=cause,proto3" json:"cause,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *EndRunResponse) Reset() {
	*x = EndRunResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[70]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *EndRunResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*EndRunResponse) ProtoMessage() {}

func (x *EndRunResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[70]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use EndRunResponse.ProtoReflect.Descriptor instead.
func (*EndRunResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{70}
}

func (x *EndRunResponse) GetWasLive() bool {
	if x != nil {
		return x.WasLive
	}
	return false
}

func (x *EndRunResponse) GetSessionId() string {
	if x != nil {
		return x.SessionId
	}
	return ""
}

func (x *EndRunResponse) GetCause() string {
	if x != nil {
		return x.Cause
	}
	return ""
}

// PingRun: renew a run that asked for pings.
type PingRunRequest struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The run to renew.
	RunId         string `protobuf:"bytes,1,opt,name=run_id,json=runId,proto3" json:"run_id,omitempty"`
	unknownFields protoimpl.UnknownFields
	sizeCache     protoimpl.SizeCache
}

func (x *PingRunRequest) Reset() {
	*x = PingRunRequest{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[71]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *PingRunRequest) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*PingRunRequest) ProtoMessage() {}

func (x *PingRunRequest) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[71]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use PingRunRequest.ProtoReflect.Descriptor instead.
func (*PingRunRequest) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{71}
}

func (x *PingRunRequest) GetRunId() string {
	if x != nil {
		return x.RunId
	}
	return ""
}

// The outcome of a PingRun.
type PingRunResponse struct {
	state protoimpl.MessageState `protogen:"open.v1"`
	// The run's ping bound in seconds (0: the run did not ask for pings).
	PingTimeoutSeconds int64 `protobuf:"varint,1,opt,name=ping_timeout_seconds,json=pingTimeoutSeconds,proto3" json:"ping_timeout_seconds,omitempty"`
	unknownFields      protoimpl.UnknownFields
	sizeCache          protoimpl.SizeCache
}

func (x *PingRunResponse) Reset() {
	*x = PingRunResponse{}
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[72]
	ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
	ms.StoreMessageInfo(mi)
}

func (x *PingRunResponse) String() string {
	return protoimpl.X.MessageStringOf(x)
}

func (*PingRunResponse) ProtoMessage() {}

func (x *PingRunResponse) ProtoReflect() protoreflect.Message {
	mi := &file_claw_sessiond_v1_sessiond_proto_msgTypes[72]
	if x != nil {
		ms := protoimpl.X.MessageStateOf(protoimpl.Pointer(x))
		if ms.LoadMessageInfo() == nil {
			ms.StoreMessageInfo(mi)
		}
		return ms
	}
	return mi.MessageOf(x)
}

// Deprecated: Use PingRunResponse.ProtoReflect.Descriptor instead.
func (*PingRunResponse) Descriptor() ([]byte, []int) {
	return file_claw_sessiond_v1_sessiond_proto_rawDescGZIP(), []int{72}
}

func (x *PingRunResponse) GetPingTimeoutSeconds() int64 {
	if x != nil {
		return x.PingTimeoutSeconds
	}
	return 0
}

var File_claw_sessiond_v1_sessiond_proto protoreflect.FileDescriptor

const file_claw_sessiond_v1_sessiond_proto_rawDesc = "" +
	"\n" +
	"\x1fclaw/sessiond/v1/sessiond.proto\x12\x10claw.sessiond.v1\x1a\x1fgoogle/protobuf/timestamp.proto\"\x94\x01\n" +
	"\bToolCall\x12\x0e\n" +
	"\x02id\x18\x01 \x01(\tR\x02id\x12\x12\n" +
	"\x04name\x18\x02 \x01(\tR\x04name\x12\x1c\n" +
	"\targuments\x18\x03 \x01(\tR\targuments\x12\x18\n" +
	"\apending\x18\x04 \x01(\bR\apending\x12,\n" +
	"\x12arguments_not_json\x18\x05 \x01(\bR\x10argumentsNotJson\"\xa6\x01\n" +
	"\n" +
	"ToolPolicy\x124\n" +
	"\x06repair\x18\x01 \x01(\x0e2\x1c.claw.sessiond.v1.RepairModeR\x06repair\x120\n" +
	"\x14allow_orphan_results\x18\x02 \x01(\bR\x12allowOrphanResults\x120\n" +
	"\x14allow_unparsed_calls\x18\x03 \x01(\bR\x12allowUnparsedCalls\"\xaa\x02\n" +
	"\n" +
	"EntryUsage\x12!\n" +
	"\finput_tokens\x18\x01 \x01(\x03R\vinputTokens\x12#\n" +
	"\routput_tokens\x18\x02 \x01(\x03R\foutputTokens\x12*\n" +
	"\x11cache_read_tokens\x18\x03 \x01(\x03R\x0fcacheReadTokens\x12,\n" +
	"\x12cache_write_tokens\x18\x04 \x01(\x03R\x10cacheWriteTokens\x12\x1f\n" +
	"\vcost_micros\x18\x05 \x01(\x03R\n" +
	"costMicros\x12\x1a\n" +
	"\bcurrency\x18\x06 \x01(\tR\bcurrency\x12\x14\n" +
	"\x05model\x18\a \x01(\tR\x05model\x12'\n" +
	"\x0fpricing_version\x18\b \x01(\tR\x0epricingVersion\"F\n" +
	"\tSynthetic\x129\n" +
	"\x06reason\x18\x01 \x01(\x0e2!.claw.sessiond.v1.SyntheticReasonR\x06reason\"\xdc\x04\n" +
	"\aMessage\x12*\n" +
	"\x04role\x18\x01 \x01(\x0e2\x16.claw.sessiond.v1.RoleR\x04role\x12\x18\n" +
	"\acontent\x18\x02 \x01(\tR\acontent\x129\n" +
	"\n" +
	"tool_calls\x18\x03 \x03(\v2\x1a.claw.sessiond.v1.ToolCallR\ttoolCalls\x12 \n" +
	"\ftool_call_id\x18\x04 \x01(\tR\n" +
	"toolCallId\x12\x12\n" +
	"\x04name\x18\x05 \x01(\tR\x04name\x129\n" +
	"\tsynthetic\x18\x06 \x01(\v2\x1b.claw.sessiond.v1.SyntheticR\tsynthetic\x12\x1a\n" +
	"\bposition\x18\a \x01(\x03R\bposition\x129\n" +
	"\n" +
	"created_at\x18\b \x01(\v2\x1a.google.protobuf.TimestampR\tcreatedAt\x12\x19\n" +
	"\btrace_id\x18\t \x01(\tR\atraceId\x12\x16\n" +
	"\x06format\x18\n" +
	" \x01(\tR\x06format\x12\x12\n" +
	"\x04item\x18\v \x01(\fR\x04item\x12\x1b\n" +
	"\tclient_id\x18\f \x01(\tR\bclientId\x12\x1a\n" +
	"\bmetadata\x18\r \x01(\tR\bmetadata\x122\n" +
	"\x05usage\x18\x0e \x01(\v2\x1c.claw.sessiond.v1.EntryUsageR\x05usage\x12\x1c\n" +
	"\tcancelled\x18\x0f \x01(\bR\tcancelled\x12\x16\n" +
	"\x06orphan\x18\x10 \x01(\bR\x06orphan\x12\x1e\n" +
	"\n" +
	"supersedes\x18\x11 \x01(\x03R\n" +
	"supersedes\"\xe6\x01\n" +
	"\x05Usage\x12!\n" +
	"\finput_tokens\x18\x01 \x01(\x03R\vinputTokens\x12#\n" +
	"\routput_tokens\x18\x02 \x01(\x03R\foutputTokens\x12*\n" +
	"\x11cache_read_tokens\x18\x03 \x01(\x03R\x0fcacheReadTokens\x12,\n" +
	"\x12cache_write_tokens\x18\x04 \x01(\x03R\x10cacheWriteTokens\x12\x1f\n" +
	"\vcost_micros\x18\x05 \x01(\x03R\n" +
	"costMicros\x12\x1a\n" +
	"\bcurrency\x18\x06 \x01(\tR\bcurrency\"\xfa\x04\n" +
	"\aSession\x12\x0e\n" +
	"\x02id\x18\x01 \x01(\tR\x02id\x12\x18\n" +
	"\aworkdir\x18\x02 \x01(\tR\aworkdir\x129\n" +
	"\n" +
	"created_at\x18\x03 \x01(\v2\x1a.google.protobuf.TimestampR\tcreatedAt\x129\n" +
	"\n" +
	"updated_at\x18\x04 \x01(\v2\x1a.google.protobuf.TimestampR\tupdatedAt\x12-\n" +
	"\x05usage\x18\x05 \x01(\v2\x17.claw.sessiond.v1.UsageR\x05usage\x12#\n" +
	"\rlast_position\x18\x06 \x01(\x03R\flastPosition\x12\x16\n" +
	"\x06stored\x18\a \x01(\bR\x06stored\x12#\n" +
	"\rmessage_count\x18\b \x01(\x03R\fmessageCount\x12\x14\n" +
	"\x05state\x18\t \x01(\tR\x05state\x12=\n" +
	"\x06labels\x18\n" +
	" \x03(\v2%.claw.sessiond.v1.Session.LabelsEntryR\x06labels\x12=\n" +
	"\vtool_policy\x18\v \x01(\v2\x1c.claw.sessiond.v1.ToolPolicyR\n" +
	"toolPolicy\x12\x1f\n" +
	"\vforked_from\x18\f \x01(\tR\n" +
	"forkedFrom\x12,\n" +
	"\x12forked_at_position\x18\r \x01(\x03R\x10forkedAtPosition\x12 \n" +
	"\vincarnation\x18\x0e \x01(\tR\vincarnation\x1a9\n" +
	"\vLabelsEntry\x12\x10\n" +
	"\x03key\x18\x01 \x01(\tR\x03key\x12\x14\n" +
	"\x05value\x18\x02 \x01(\tR\x05value:\x028\x01\"8\n" +
	"\n" +
	"StateDelta\x12\x14\n" +
	"\x05scope\x18\x01 \x01(\tR\x05scope\x12\x14\n" +
	"\x05delta\x18\x02 \x01(\tR\x05delta\"s\n" +
	"\n" +
	"ScopeState\x12\x14\n" +
	"\x05scope\x18\x01 \x01(\tR\x05scope\x12\x14\n" +
	"\x05state\x18\x02 \x01(\tR\x05state\x129\n" +
	"\n" +
	"updated_at\x18\x03 \x01(\v2\x1a.google.protobuf.TimestampR\tupdatedAt\"u\n" +
	"\x06Repair\x12 \n" +
	"\ftool_call_id\x18\x01 \x01(\tR\n" +
	"toolCallId\x12-\n" +
	"\x12assistant_position\x18\x02 \x01(\x03R\x11assistantPosition\x12\x1a\n" +
	"\bposition\x18\x03 \x01(\x03R\bposition\"\xd3\x01\n" +
	"\fInFlightCall\x12 \n" +
	"\ftool_call_id\x18\x01 \x01(\tR\n" +
	"toolCallId\x12-\n" +
	"\x12assistant_position\x18\x02 \x01(\x03R\x11assistantPosition\x12\x15\n" +
	"\x06run_id\x18\x03 \x01(\tR\x05runId\x12\x1b\n" +
	"\towner_pid\x18\x04 \x01(\x03R\bownerPid\x12\x1d\n" +
	"\n" +
	"owner_host\x18\x05 \x01(\tR\townerHost\x12\x1f\n" +
	"\vowner_label\x18\x06 \x01(\tR\n" +
	"ownerLabel\"\xa1\x03\n" +
	"\vLoadRequest\x12\x1d\n" +
	"\n" +
	"session_id\x18\x01 \x01(\tR\tsessionId\x12\x18\n" +
	"\aworkdir\x18\x02 \x01(\tR\aworkdir\x12\x19\n" +
	"\btrace_id\x18\x03 \x01(\tR\atraceId\x12\x1b\n" +
	"\tno_repair\x18\x04 \x01(\bR\bnoRepair\x12\x12\n" +
	"\x04last\x18\x05 \x01(\x05R\x04last\x12%\n" +
	"\x0eafter_position\x18\x06 \x01(\x03R\rafterPosition\x129\n" +
	"\n" +
	"after_time\x18\a \x01(\v2\x1a.google.protobuf.TimestampR\tafterTime\x12\x16\n" +
	"\x06scopes\x18\b \x03(\tR\x06scopes\x12\x1d\n" +
	"\n" +
	"client_ids\x18\t \x03(\tR\tclientIds\x12(\n" +
	"\x10client_id_prefix\x18\n" +
	" \x01(\tR\x0eclientIdPrefix\x12'\n" +
	"\x0fbefore_position\x18\v \x01(\x03R\x0ebeforePosition\x12!\n" +
	"\fitems_format\x18\f \x01(\tR\vitemsFormat\"\xb4\x03\n" +
	"\fLoadResponse\x123\n" +
	"\asession\x18\x01 \x01(\v2\x19.claw.sessiond.v1.SessionR\asession\x122\n" +
	"\arepairs\x18\x02 \x03(\v2\x18.claw.sessiond.v1.RepairR\arepairs\x12;\n" +
	"\tin_flight\x18\x03 \x03(\v2\x1e.claw.sessiond.v1.InFlightCallR\binFlight\x125\n" +
	"\bmessages\x18\x04 \x03(\v2\x19.claw.sessiond.v1.MessageR\bmessages\x12\x12\n" +
	"\x04done\x18\x05 \x01(\bR\x04done\x12\x19\n" +
	"\btrace_id\x18\x06 \x01(\tR\atraceId\x12\x1a\n" +
	"\bcomplete\x18\a \x01(\bR\bcomplete\x12%\n" +
	"\x0estart_position\x18\b \x01(\x03R\rstartPosition\x12?\n" +
	"\fscope_states\x18\t \x03(\v2\x1c.claw.sessiond.v1.ScopeStateR\vscopeStates\x12\x14\n" +
	"\x05items\x18\n" +
	" \x03(\fR\x05items\"\x86\x03\n" +
	"\rAppendRequest\x12\x1d\n" +
	"\n" +
	"session_id\x18\x01 \x01(\tR\tsessionId\x125\n" +
	"\bmessages\x18\x02 \x03(\v2\x19.claw.sessiond.v1.MessageR\bmessages\x124\n" +
	"\x16expected_last_position\x18\x03 \x01(\x03R\x14expectedLastPosition\x12\x1d\n" +
	"\n" +
	"request_id\x18\x04 \x01(\tR\trequestId\x12\x18\n" +
	"\aworkdir\x18\x05 \x01(\tR\aworkdir\x12\x15\n" +
	"\x06run_id\x18\x06 \x01(\tR\x05runId\x12\x19\n" +
	"\btrace_id\x18\a \x01(\tR\atraceId\x12=\n" +
	"\vtool_policy\x18\b \x01(\v2\x1c.claw.sessiond.v1.ToolPolicyR\n" +
	"toolPolicy\x12?\n" +
	"\fstate_deltas\x18\t \x03(\v2\x1c.claw.sessiond.v1.StateDeltaR\vstateDeltas\"\xce\x01\n" +
	"\x0eAppendResponse\x12%\n" +
	"\x0efirst_position\x18\x01 \x01(\x03R\rfirstPosition\x12#\n" +
	"\rlast_position\x18\x02 \x01(\x03R\flastPosition\x12\x1a\n" +
	"\breplayed\x18\x03 \x01(\bR\breplayed\x12\x19\n" +
	"\btrace_id\x18\x04 \x01(\tR\atraceId\x129\n" +
	"\n" +
	"created_at\x18\x05 \x01(\v2\x1a.google.protobuf.TimestampR\tcreatedAt\"P\n" +
	"\x13AppendStreamRequest\x129\n" +
	"\aappends\x18\x01 \x03(\v2\x1f.claw.sessiond.v1.AppendRequestR\aappends\"O\n" +
	"\x14AppendStreamResponse\x127\n" +
	"\areplies\x18\x01 \x03(\v2\x1d.claw.sessiond.v1.AppendReplyR\areplies\"|\n" +
	"\vAppendReply\x128\n" +
	"\x06result\x18\x01 \x01(\v2 .claw.sessiond.v1.AppendResponseR\x06result\x123\n" +
	"\x05error\x18\x02 \x01(\v2\x1d.claw.sessiond.v1.AppendErrorR\x05error\"\xd9\x01\n" +
	"\vAppendError\x12\x12\n" +
	"\x04code\x18\x01 \x01(\x05R\x04code\x12\x18\n" +
	"\amessage\x18\x02 \x01(\tR\amessage\x12\x16\n" +
	"\x06reason\x18\x03 \x01(\tR\x06reason\x12G\n" +
	"\bmetadata\x18\x04 \x03(\v2+.claw.sessiond.v1.AppendError.MetadataEntryR\bmetadata\x1a;\n" +
	"\rMetadataEntry\x12\x10\n" +
	"\x03key\x18\x01 \x01(\tR\x03key\x12\x14\n" +
	"\x05value\x18\x02 \x01(\tR\x05value:\x028\x01\"\xa5\x03\n" +
	"\x12RecordUsageRequest\x12\x1d\n" +
	"\n" +
	"session_id\x18\x01 \x01(\tR\tsessionId\x12!\n" +
	"\finput_tokens\x18\x02 \x01(\x03R\vinputTokens\x12#\n" +
	"\routput_tokens\x18\x03 \x01(\x03R\foutputTokens\x12*\n" +
	"\x11cache_read_tokens\x18\x04 \x01(\x03R\x0fcacheReadTokens\x12,\n" +
	"\x12cache_write_tokens\x18\x05 \x01(\x03R\x10cacheWriteTokens\x12\x1f\n" +
	"\vcost_micros\x18\x06 \x01(\x03R\n" +
	"costMicros\x12\x1a\n" +
	"\bcurrency\x18\a \x01(\tR\bcurrency\x12\x14\n" +
	"\x05model\x18\b \x01(\tR\x05model\x12'\n" +
	"\x0fpricing_version\x18\t \x01(\tR\x0epricingVersion\x12\x1d\n" +
	"\n" +
	"request_id\x18\n" +
	" \x01(\tR\trequestId\x12\x18\n" +
	"\aworkdir\x18\v \x01(\tR\aworkdir\x12\x19\n" +
	"\btrace_id\x18\f \x01(\tR\atraceId\"{\n" +
	"\x13RecordUsageResponse\x12-\n" +
	"\x05usage\x18\x01 \x01(\v2\x17.claw.sessiond.v1.UsageR\x05usage\x12\x1a\n" +
	"\breplayed\x18\x02 \x01(\bR\breplayed\x12\x19\n" +
	"\btrace_id\x18\x03 \x01(\tR\atraceId\"\xcd\x01\n" +
	"\fClearRequest\x12\x1d\n" +
	"\n" +
	"session_id\x18\x01 \x01(\tR\tsessionId\x12\x1d\n" +
	"\n" +
	"request_id\x18\x02 \x01(\tR\trequestId\x124\n" +
	"\x16expected_last_position\x18\x03 \x01(\x03R\x14expectedLastPosition\x12\x18\n" +
	"\aworkdir\x18\x04 \x01(\tR\aworkdir\x12\x19\n" +
	"\btrace_id\x18\x05 \x01(\tR\atraceId\x12\x14\n" +
	"\x05erase\x18\x06 \x01(\bR\x05erase\"\xb0\x01\n" +
	"\rClearResponse\x12\x1a\n" +
	"\bposition\x18\x01 \x01(\x03R\bposition\x12\x1a\n" +
	"\breplayed\x18\x02 \x01(\bR\breplayed\x12\x19\n" +
	"\btrace_id\x18\x03 \x01(\tR\atraceId\x12#\n" +
	"\revents_erased\x18\x04 \x01(\x03R\feventsErased\x12'\n" +
	"\x0ferasure_pending\x18\x05 \x01(\bR\x0eerasurePending\"\xb8\x01\n" +
	"\x12RecordEventRequest\x12\x1d\n" +
	"\n" +
	"session_id\x18\x01 \x01(\tR\tsessionId\x12/\n" +
	"\x04kind\x18\x02 \x01(\x0e2\x1b.claw.sessiond.v1.EventKindR\x04kind\x12\x18\n" +
	"\apayload\x18\x03 \x01(\tR\apayload\x12\x1d\n" +
	"\n" +
	"request_id\x18\x04 \x01(\tR\trequestId\x12\x19\n" +
	"\btrace_id\x18\x05 \x01(\tR\atraceId\"g\n" +
	"\x13RecordEventResponse\x12\x19\n" +
	"\bevent_id\x18\x01 \x01(\x03R\aeventId\x12\x1a\n" +
	"\breplayed\x18\x02 \x01(\bR\breplayed\x12\x19\n" +
	"\btrace_id\x18\x03 \x01(\tR\atraceId\"\x88\x01\n" +
	"\rAttachRequest\x12\x1d\n" +
	"\n" +
	"session_id\x18\x01 \x01(\tR\tsessionId\x12\x10\n" +
	"\x03pid\x18\x02 \x01(\x03R\x03pid\x12\x14\n" +
	"\x05label\x18\x03 \x01(\tR\x05label\x120\n" +
	"\x14ping_timeout_seconds\x18\x04 \x01(\x03R\x12pingTimeoutSeconds\"\xa1\x01\n" +
	"\x0eAttachResponse\x12\x15\n" +
	"\x06run_id\x18\x01 \x01(\tR\x05runId\x12#\n" +
	"\rlease_seconds\x18\x02 \x01(\x03R\fleaseSeconds\x12!\n" +
	"\fpid_verified\x18\x03 \x01(\bR\vpidVerified\x120\n" +
	"\x14ping_timeout_seconds\x18\x04 \x01(\x03R\x12pingTimeoutSeconds\"\x9e\x01\n" +
	"\fWatchRequest\x12\x1d\n" +
	"\n" +
	"session_id\x18\x01 \x01(\tR\tsessionId\x12%\n" +
	"\x0eafter_position\x18\x02 \x01(\x03R\rafterPosition\x12 \n" +
	"\vincarnation\x18\x03 \x01(\tR\vincarnation\x12\x14\n" +
	"\x05batch\x18\x04 \x01(\bR\x05batch\x12\x10\n" +
	"\x03pid\x18\x05 \x01(\x03R\x03pid\"7\n" +
	"\bTailEdit\x12+\n" +
	"\x11removed_positions\x18\x01 \x03(\x03R\x10removedPositions\"\x9d\x02\n" +
	"\rWatchResponse\x123\n" +
	"\amessage\x18\x01 \x01(\v2\x19.claw.sessiond.v1.MessageR\amessage\x12\x1a\n" +
	"\bposition\x18\x02 \x01(\x03R\bposition\x12\x18\n" +
	"\acleared\x18\x03 \x01(\bR\acleared\x12 \n" +
	"\vincarnation\x18\x04 \x01(\tR\vincarnation\x12.\n" +
	"\x04edit\x18\x05 \x01(\v2\x1a.claw.sessiond.v1.TailEditR\x04edit\x12\x16\n" +
	"\x06erased\x18\x06 \x01(\bR\x06erased\x127\n" +
	"\x06events\x18\a \x03(\v2\x1f.claw.sessiond.v1.WatchResponseR\x06events\"\xf1\x01\n" +
	"\x13ListSessionsRequest\x12\x1f\n" +
	"\vid_contains\x18\x01 \x01(\tR\n" +
	"idContains\x12\x14\n" +
	"\x05limit\x18\x02 \x01(\x05R\x05limit\x12\x1d\n" +
	"\n" +
	"page_token\x18\x03 \x01(\tR\tpageToken\x12I\n" +
	"\x06labels\x18\x04 \x03(\v21.claw.sessiond.v1.ListSessionsRequest.LabelsEntryR\x06labels\x1a9\n" +
	"\vLabelsEntry\x12\x10\n" +
	"\x03key\x18\x01 \x01(\tR\x03key\x12\x14\n" +
	"\x05value\x18\x02 \x01(\tR\x05value:\x028\x01\"\xaa\x03\n" +
	"\x0eSessionSummary\x12\x0e\n" +
	"\x02id\x18\x01 \x01(\tR\x02id\x12#\n" +
	"\rmessage_count\x18\x02 \x01(\x03R\fmessageCount\x12-\n" +
	"\x05usage\x18\x03 \x01(\v2\x17.claw.sessiond.v1.UsageR\x05usage\x129\n" +
	"\n" +
	"updated_at\x18\x04 \x01(\v2\x1a.google.protobuf.TimestampR\tupdatedAt\x12\x18\n" +
	"\aworkdir\x18\x05 \x01(\tR\aworkdir\x12#\n" +
	"\rlast_position\x18\x06 \x01(\x03R\flastPosition\x12D\n" +
	"\x06labels\x18\a \x03(\v2,.claw.sessiond.v1.SessionSummary.LabelsEntryR\x06labels\x129\n" +
	"\n" +
	"created_at\x18\b \x01(\v2\x1a.google.protobuf.TimestampR\tcreatedAt\x1a9\n" +
	"\vLabelsEntry\x12\x10\n" +
	"\x03key\x18\x01 \x01(\tR\x03key\x12\x14\n" +
	"\x05value\x18\x02 \x01(\tR\x05value:\x028\x01\"\x92\x01\n" +
	"\x14ListSessionsResponse\x12<\n" +
	"\bsessions\x18\x01 \x03(\v2 .claw.sessiond.v1.SessionSummaryR\bsessions\x12&\n" +
	"\x0fnext_page_token\x18\x02 \x01(\tR\rnextPageToken\x12\x14\n" +
	"\x05total\x18\x03 \x01(\x03R\x05total\"0\n" +
	"\x0fGetUsageRequest\x12\x1d\n" +
	"\n" +
	"session_id\x18\x01 \x01(\tR\tsessionId\"z\n" +
	"\n" +
	"ModelUsage\x12\x14\n" +
	"\x05model\x18\x01 \x01(\tR\x05model\x12'\n" +
	"\x0fpricing_version\x18\x02 \x01(\tR\x0epricingVersion\x12-\n" +
	"\x05usage\x18\x03 \x01(\v2\x17.claw.sessiond.v1.UsageR\x05usage\"z\n" +
	"\x10GetUsageResponse\x12-\n" +
	"\x05total\x18\x01 \x01(\v2\x17.claw.sessiond.v1.UsageR\x05total\x127\n" +
	"\bby_model\x18\x02 \x03(\v2\x1c.claw.sessiond.v1.ModelUsageR\abyModel\".\n" +
	"\rDeleteRequest\x12\x1d\n" +
	"\n" +
	"session_id\x18\x01 \x01(\tR\tsessionId\"`\n" +
	"\x0eDeleteResponse\x12%\n" +
	"\x0eevents_deleted\x18\x01 \x01(\x03R\reventsDeleted\x12'\n" +
	"\x0ferasure_pending\x18\x02 \x01(\bR\x0eerasurePending\".\n" +
	"\rExportRequest\x12\x1d\n" +
	"\n" +
	"session_id\x18\x01 \x01(\tR\tsessionId\"$\n" +
	"\x0eExportResponse\x12\x12\n" +
	"\x04line\x18\x01 \x01(\tR\x04line\"W\n" +
	"\rImportRequest\x12\x14\n" +
	"\x05lines\x18\x01 \x03(\tR\x05lines\x120\n" +
	"\x04mode\x18\x02 \x01(\x0e2\x1c.claw.sessiond.v1.ImportModeR\x04mode\"X\n" +
	"\x0eImportResponse\x12\x1d\n" +
	"\n" +
	"session_id\x18\x01 \x01(\tR\tsessionId\x12'\n" +
	"\x0fevents_imported\x18\x02 \x01(\x03R\x0eeventsImported\"\x11\n" +
	"\x0fGetStatsRequest\"\xbd\a\n" +
	"\x10GetStatsResponse\x12\x1a\n" +
	"\bsessions\x18\x01 \x01(\x03R\bsessions\x12\x16\n" +
	"\x06events\x18\x02 \x01(\x03R\x06events\x12%\n" +
	"\x0edatabase_bytes\x18\x03 \x01(\x03R\rdatabaseBytes\x12\x1b\n" +
	"\twal_bytes\x18\x04 \x01(\x03R\bwalBytes\x12%\n" +
	"\x0eschema_version\x18\x05 \x01(\x03R\rschemaVersion\x12\x18\n" +
	"\aappends\x18\x06 \x01(\x03R\aappends\x12)\n" +
	"\x10messages_written\x18\a \x01(\x03R\x0fmessagesWritten\x12\x18\n" +
	"\arepairs\x18\b \x01(\x03R\arepairs\x12%\n" +
	"\x0ewrite_failures\x18\t \x01(\x03R\rwriteFailures\x12\x18\n" +
	"\acommits\x18\n" +
	" \x01(\x03R\acommits\x12'\n" +
	"\x0factive_watchers\x18\v \x01(\x03R\x0eactiveWatchers\x12\x1f\n" +
	"\vactive_runs\x18\f \x01(\x03R\n" +
	"activeRuns\x12\x10\n" +
	"\x03pid\x18\r \x01(\x03R\x03pid\x12%\n" +
	"\x0euptime_seconds\x18\x0e \x01(\x01R\ruptimeSeconds\x12\x18\n" +
	"\aversion\x18\x0f \x01(\tR\aversion\x12:\n" +
	"\brequests\x18\x10 \x03(\v2\x1e.claw.sessiond.v1.RequestCountR\brequests\x12)\n" +
	"\x10sessions_deleted\x18\x11 \x01(\x03R\x0fsessionsDeleted\x12<\n" +
	"\x1aretention_sessions_deleted\x18\x12 \x01(\x03R\x18retentionSessionsDeleted\x122\n" +
	"\x15commit_batch_requests\x18\x13 \x01(\x03R\x13commitBatchRequests\x12%\n" +
	"\x0ecommit_seconds\x18\x14 \x01(\x01R\rcommitSeconds\x128\n" +
	"\x18erasure_pending_sessions\x18\x15 \x01(\x03R\x16erasurePendingSessions\x12'\n" +
	"\x0frequest_records\x18\x16 \x01(\x03R\x0erequestRecords\x124\n" +
	"\x16request_records_pruned\x18\x17 \x01(\x03R\x14requestRecordsPruned\x12\x18\n" +
	"\abackend\x18\x18 \x01(\tR\abackend\x12\x1a\n" +
	"\bdatabase\x18\x19 \x01(\tR\bdatabase\"P\n" +
	"\fRequestCount\x12\x16\n" +
	"\x06method\x18\x01 \x01(\tR\x06method\x12\x12\n" +
	"\x04code\x18\x02 \x01(\tR\x04code\x12\x14\n" +
	"\x05count\x18\x03 \x01(\x03R\x05count\"\x0f\n" +
	"\rBackupRequest\"_\n" +
	"\x0eBackupResponse\x12\x12\n" +
	"\x04data\x18\x01 \x01(\fR\x04data\x129\n" +
	"\afigures\x18\x02 \x01(\v2\x1f.claw.sessiond.v1.BackupFiguresR\afigures\"\x80\x01\n" +
	"\rBackupFigures\x12\x1a\n" +
	"\bsessions\x18\x01 \x01(\x03R\bsessions\x12\x16\n" +
	"\x06events\x18\x02 \x01(\x03R\x06events\x12\x14\n" +
	"\x05bytes\x18\x03 \x01(\x03R\x05bytes\x12%\n" +
	"\x0eschema_version\x18\x04 \x01(\x03R\rschemaVersion\"\xa5\x02\n" +
	"\rSearchRequest\x12\x14\n" +
	"\x05query\x18\x01 \x01(\tR\x05query\x12\x10\n" +
	"\x03raw\x18\x02 \x01(\bR\x03raw\x12\x1d\n" +
	"\n" +
	"session_id\x18\x03 \x01(\tR\tsessionId\x12*\n" +
	"\x04role\x18\x04 \x01(\x0e2\x16.claw.sessiond.v1.RoleR\x04role\x120\n" +
	"\x05since\x18\x05 \x01(\v2\x1a.google.protobuf.TimestampR\x05since\x120\n" +
	"\x05until\x18\x06 \x01(\v2\x1a.google.protobuf.TimestampR\x05until\x12\x14\n" +
	"\x05limit\x18\a \x01(\x05R\x05limit\x12'\n" +
	"\x0finclude_cleared\x18\b \x01(\bR\x0eincludeCleared\"_\n" +
	"\x0eSearchResponse\x12/\n" +
	"\x04hits\x18\x01 \x03(\v2\x1b.claw.sessiond.v1.SearchHitR\x04hits\x12\x1c\n" +
	"\ttruncated\x18\x02 \x01(\bR\ttruncated\"\x94\x02\n" +
	"\tSearchHit\x12\x1d\n" +
	"\n" +
	"session_id\x18\x01 \x01(\tR\tsessionId\x12\x1a\n" +
	"\bposition\x18\x02 \x01(\x03R\bposition\x12*\n" +
	"\x04role\x18\x03 \x01(\x0e2\x16.claw.sessiond.v1.RoleR\x04role\x129\n" +
	"\n" +
	"created_at\x18\x04 \x01(\v2\x1a.google.protobuf.TimestampR\tcreatedAt\x12\x12\n" +
	"\x04rank\x18\x05 \x01(\x01R\x04rank\x127\n" +
	"\asnippet\x18\x06 \x03(\v2\x1d.claw.sessiond.v1.SnippetPartR\asnippet\x12\x18\n" +
	"\acleared\x18\a \x01(\bR\acleared\"7\n" +
	"\vSnippetPart\x12\x12\n" +
	"\x04text\x18\x01 \x01(\tR\x04text\x12\x14\n" +
	"\x05match\x18\x02 \x01(\bR\x05match\"\x8b\x01\n" +
	"\x0fWatchAllRequest\x12$\n" +
	"\x0eafter_event_id\x18\x01 \x01(\x03R\fafterEventId\x12\x12\n" +
	"\x04last\x18\x02 \x01(\x05R\x04last\x12\x16\n" +
	"\x06resume\x18\x03 \x01(\bR\x06resume\x12\x14\n" +
	"\x05batch\x18\x04 \x01(\bR\x05batch\x12\x10\n" +
	"\x03pid\x18\x05 \x01(\x03R\x03pid\"\xd5\x02\n" +
	"\x10WatchAllResponse\x12\x19\n" +
	"\bevent_id\x18\x01 \x01(\x03R\aeventId\x12\x1d\n" +
	"\n" +
	"session_id\x18\x02 \x01(\tR\tsessionId\x12\x1a\n" +
	"\bposition\x18\x03 \x01(\x03R\bposition\x123\n" +
	"\amessage\x18\x04 \x01(\v2\x19.claw.sessiond.v1.MessageR\amessage\x12\x18\n" +
	"\acleared\x18\x05 \x01(\bR\acleared\x12\x18\n" +
	"\astarted\x18\x06 \x01(\bR\astarted\x12.\n" +
	"\x04edit\x18\a \x01(\v2\x1a.claw.sessiond.v1.TailEditR\x04edit\x12\x16\n" +
	"\x06erased\x18\b \x01(\bR\x06erased\x12:\n" +
	"\x06events\x18\t \x03(\v2\".claw.sessiond.v1.WatchAllResponseR\x06events\"\x9a\x01\n" +
	"\x15GetUsageReportRequest\x120\n" +
	"\x05since\x18\x01 \x01(\v2\x1a.google.protobuf.TimestampR\x05since\x120\n" +
	"\x05until\x18\x02 \x01(\v2\x1a.google.protobuf.TimestampR\x05until\x12\x1d\n" +
	"\n" +
	"by_session\x18\x03 \x01(\bR\tbySession\"l\n" +
	"\x16GetUsageReportResponse\x124\n" +
	"\x04rows\x18\x01 \x03(\v2 .claw.sessiond.v1.UsageReportRowR\x04rows\x12\x1c\n" +
	"\ttruncated\x18\x02 \x01(\bR\ttruncated\"\xc7\x01\n" +
	"\x0eUsageReportRow\x12\x10\n" +
	"\x03day\x18\x01 \x01(\tR\x03day\x12\x14\n" +
	"\x05model\x18\x02 \x01(\tR\x05model\x12'\n" +
	"\x0fpricing_version\x18\x03 \x01(\tR\x0epricingVersion\x12-\n" +
	"\x05usage\x18\x04 \x01(\v2\x17.claw.sessiond.v1.UsageR\x05usage\x12\x1d\n" +
	"\n" +
	"session_id\x18\x05 \x01(\tR\tsessionId\x12\x16\n" +
	"\x06events\x18\x06 \x01(\x03R\x06events\"\xc0\x03\n" +
	"\x0fEditTailRequest\x12\x1d\n" +
	"\n" +
	"session_id\x18\x01 \x01(\tR\tsessionId\x12\x1f\n" +
	"\vremove_last\x18\x02 \x01(\x05R\n" +
	"removeLast\x12%\n" +
	"\x0eafter_position\x18\x03 \x01(\x03R\rafterPosition\x12=\n" +
	"\freplacements\x18\x04 \x03(\v2\x19.claw.sessiond.v1.MessageR\freplacements\x124\n" +
	"\x16expected_last_position\x18\x05 \x01(\x03R\x14expectedLastPosition\x12\x1d\n" +
	"\n" +
	"request_id\x18\x06 \x01(\tR\trequestId\x12\x18\n" +
	"\aworkdir\x18\a \x01(\tR\aworkdir\x12\x15\n" +
	"\x06run_id\x18\b \x01(\tR\x05runId\x12\x19\n" +
	"\btrace_id\x18\t \x01(\tR\atraceId\x12=\n" +
	"\vtool_policy\x18\n" +
	" \x01(\v2\x1c.claw.sessiond.v1.ToolPolicyR\n" +
	"toolPolicy\x12'\n" +
	"\x0fdiscard_pending\x18\v \x01(\bR\x0ediscardPending\"\xef\x01\n" +
	"\x10EditTailResponse\x123\n" +
	"\aremoved\x18\x01 \x03(\v2\x19.claw.sessiond.v1.MessageR\aremoved\x12#\n" +
	"\redit_position\x18\x02 \x01(\x03R\feditPosition\x12%\n" +
	"\x0efirst_position\x18\x03 \x01(\x03R\rfirstPosition\x12#\n" +
	"\rlast_position\x18\x04 \x01(\x03R\flastPosition\x12\x1a\n" +
	"\breplayed\x18\x05 \x01(\bR\breplayed\x12\x19\n" +
	"\btrace_id\x18\x06 \x01(\tR\atraceId\"\xdd\x02\n" +
	"\x14DeleteEntriesRequest\x12\x1d\n" +
	"\n" +
	"session_id\x18\x01 \x01(\tR\tsessionId\x12\x1d\n" +
	"\n" +
	"client_ids\x18\x02 \x03(\tR\tclientIds\x12(\n" +
	"\x10client_id_prefix\x18\x03 \x01(\tR\x0eclientIdPrefix\x12#\n" +
	"\rfrom_position\x18\x04 \x01(\x03R\ffromPosition\x12\x1f\n" +
	"\vto_position\x18\x05 \x01(\x03R\n" +
	"toPosition\x124\n" +
	"\x16expected_last_position\x18\x06 \x01(\x03R\x14expectedLastPosition\x12\x1d\n" +
	"\n" +
	"request_id\x18\a \x01(\tR\trequestId\x12\x19\n" +
	"\btrace_id\x18\b \x01(\tR\atraceId\x12'\n" +
	"\x0fdiscard_pending\x18\t \x01(\bR\x0ediscardPending\"\xc5\x01\n" +
	"\x15DeleteEntriesResponse\x12#\n" +
	"\rremoved_count\x18\x01 \x01(\x03R\fremovedCount\x12+\n" +
	"\x11removed_positions\x18\x02 \x03(\x03R\x10removedPositions\x12#\n" +
	"\redit_position\x18\x03 \x01(\x03R\feditPosition\x12\x1a\n" +
	"\breplayed\x18\x04 \x01(\bR\breplayed\x12\x19\n" +
	"\btrace_id\x18\x05 \x01(\tR\atraceId\"\xe5\x02\n" +
	"\x14CreateSessionRequest\x12\x1d\n" +
	"\n" +
	"session_id\x18\x01 \x01(\tR\tsessionId\x12\x18\n" +
	"\aworkdir\x18\x02 \x01(\tR\aworkdir\x12\x14\n" +
	"\x05state\x18\x03 \x01(\tR\x05state\x12J\n" +
	"\x06labels\x18\x04 \x03(\v22.claw.sessiond.v1.CreateSessionRequest.LabelsEntryR\x06labels\x12=\n" +
	"\vtool_policy\x18\x05 \x01(\v2\x1c.claw.sessiond.v1.ToolPolicyR\n" +
	"toolPolicy\x12\x1d\n" +
	"\n" +
	"request_id\x18\x06 \x01(\tR\trequestId\x12\x19\n" +
	"\btrace_id\x18\a \x01(\tR\atraceId\x1a9\n" +
	"\vLabelsEntry\x12\x10\n" +
	"\x03key\x18\x01 \x01(\tR\x03key\x12\x14\n" +
	"\x05value\x18\x02 \x01(\tR\x05value:\x028\x01\"\x83\x01\n" +
	"\x15CreateSessionResponse\x123\n" +
	"\asession\x18\x01 \x01(\v2\x19.claw.sessiond.v1.SessionR\asession\x12\x1a\n" +
	"\breplayed\x18\x02 \x01(\bR\breplayed\x12\x19\n" +
	"\btrace_id\x18\x03 \x01(\tR\atraceId\"\xde\x02\n" +
	"\x12ForkSessionRequest\x12*\n" +
	"\x11source_session_id\x18\x01 \x01(\tR\x0fsourceSessionId\x12\x1d\n" +
	"\n" +
	"session_id\x18\x02 \x01(\tR\tsessionId\x12$\n" +
	"\x0eup_to_position\x18\x03 \x01(\x03R\fupToPosition\x12\x18\n" +
	"\aworkdir\x18\x04 \x01(\tR\aworkdir\x12H\n" +
	"\x06labels\x18\x05 \x03(\v20.claw.sessiond.v1.ForkSessionRequest.LabelsEntryR\x06labels\x12\x1d\n" +
	"\n" +
	"request_id\x18\x06 \x01(\tR\trequestId\x12\x19\n" +
	"\btrace_id\x18\a \x01(\tR\atraceId\x1a9\n" +
	"\vLabelsEntry\x12\x10\n" +
	"\x03key\x18\x01 \x01(\tR\x03key\x12\x14\n" +
	"\x05value\x18\x02 \x01(\tR\x05value:\x028\x01\"\xa8\x01\n" +
	"\x13ForkSessionResponse\x123\n" +
	"\asession\x18\x01 \x01(\v2\x19.claw.sessiond.v1.SessionR\asession\x12%\n" +
	"\x0eentries_copied\x18\x02 \x01(\x03R\rentriesCopied\x12\x1a\n" +
	"\breplayed\x18\x03 \x01(\bR\breplayed\x12\x19\n" +
	"\btrace_id\x18\x04 \x01(\tR\atraceId\"\xde\x03\n" +
	"\x14UpdateSessionRequest\x12\x1d\n" +
	"\n" +
	"session_id\x18\x01 \x01(\tR\tsessionId\x12?\n" +
	"\fstate_deltas\x18\x02 \x03(\v2\x1c.claw.sessiond.v1.StateDeltaR\vstateDeltas\x12T\n" +
	"\n" +
	"set_labels\x18\x03 \x03(\v25.claw.sessiond.v1.UpdateSessionRequest.SetLabelsEntryR\tsetLabels\x12#\n" +
	"\rremove_labels\x18\x04 \x03(\tR\fremoveLabels\x12=\n" +
	"\vtool_policy\x18\x05 \x01(\v2\x1c.claw.sessiond.v1.ToolPolicyR\n" +
	"toolPolicy\x124\n" +
	"\x16expected_last_position\x18\x06 \x01(\x03R\x14expectedLastPosition\x12\x1d\n" +
	"\n" +
	"request_id\x18\a \x01(\tR\trequestId\x12\x19\n" +
	"\btrace_id\x18\b \x01(\tR\atraceId\x1a<\n" +
	"\x0eSetLabelsEntry\x12\x10\n" +
	"\x03key\x18\x01 \x01(\tR\x03key\x12\x14\n" +
	"\x05value\x18\x02 \x01(\tR\x05value:\x028\x01\"\x83\x01\n" +
	"\x15UpdateSessionResponse\x123\n" +
	"\asession\x18\x01 \x01(\v2\x19.claw.sessiond.v1.SessionR\asession\x12\x1a\n" +
	"\breplayed\x18\x02 \x01(\bR\breplayed\x12\x19\n" +
	"\btrace_id\x18\x03 \x01(\tR\atraceId\"/\n" +
	"\x15GetScopeStatesRequest\x12\x16\n" +
	"\x06scopes\x18\x01 \x03(\tR\x06scopes\"N\n" +
	"\x16GetScopeStatesResponse\x124\n" +
	"\x06states\x18\x01 \x03(\v2\x1c.claw.sessiond.v1.ScopeStateR\x06states\"&\n" +
	"\rEndRunRequest\x12\x15\n" +
	"\x06run_id\x18\x01 \x01(\tR\x05runId\"`\n" +
	"\x0eEndRunResponse\x12\x19\n" +
	"\bwas_live\x18\x01 \x01(\bR\awasLive\x12\x1d\n" +
	"\n" +
	"session_id\x18\x02 \x01(\tR\tsessionId\x12\x14\n" +
	"\x05cause\x18\x03 \x01(\tR\x05cause\"'\n" +
	"\x0ePingRunRequest\x12\x15\n" +
	"\x06run_id\x18\x01 \x01(\tR\x05runId\"C\n" +
	"\x0fPingRunResponse\x120\n" +
	"\x14ping_timeout_seconds\x18\x01 \x01(\x03R\x12pingTimeoutSeconds*o\n" +
	"\x04Role\x12\x14\n" +
	"\x10ROLE_UNSPECIFIED\x10\x00\x12\x0f\n" +
	"\vROLE_SYSTEM\x10\x01\x12\r\n" +
	"\tROLE_USER\x10\x02\x12\x12\n" +
	"\x0eROLE_ASSISTANT\x10\x03\x12\r\n" +
	"\tROLE_TOOL\x10\x04\x12\x0e\n" +
	"\n" +
	"ROLE_OTHER\x10\x05*p\n" +
	"\n" +
	"RepairMode\x12\x1b\n" +
	"\x17REPAIR_MODE_UNSPECIFIED\x10\x00\x12\x1a\n" +
	"\x16REPAIR_MODE_SYNTHESIZE\x10\x01\x12\x14\n" +
	"\x10REPAIR_MODE_DROP\x10\x02\x12\x13\n" +
	"\x0fREPAIR_MODE_OFF\x10\x03*U\n" +
	"\x0fSyntheticReason\x12 \n" +
	"\x1cSYNTHETIC_REASON_UNSPECIFIED\x10\x00\x12 \n" +
	"\x1cSYNTHETIC_REASON_INTERRUPTED\x10\x01*_\n" +
	"\tEventKind\x12\x1a\n" +
	"\x16EVENT_KIND_UNSPECIFIED\x10\x00\x12 \n" +
	"\x1cEVENT_KIND_PERMISSION_DENIAL\x10\x01\x12\x14\n" +
	"\x10EVENT_KIND_ERROR\x10\x02*Y\n" +
	"\n" +
	"ImportMode\x12\x1b\n" +
	"\x17IMPORT_MODE_UNSPECIFIED\x10\x00\x12\x17\n" +
	"\x13IMPORT_MODE_REPLACE\x10\x01\x12\x15\n" +
	"\x11IMPORT_MODE_MERGE\x10\x022\xc1\x11\n" +
	"\x0eSessionService\x12G\n" +
	"\x04Load\x12\x1d.claw.sessiond.v1.LoadRequest\x1a\x1e.claw.sessiond.v1.LoadResponse0\x01\x12K\n" +
	"\x06Append\x12\x1f.claw.sessiond.v1.AppendRequest\x1a .claw.sessiond.v1.AppendResponse\x12a\n" +
	"\fAppendStream\x12%.claw.sessiond.v1.AppendStreamRequest\x1a&.claw.sessiond.v1.AppendStreamResponse(\x010\x01\x12Z\n" +
	"\vRecordUsage\x12$.claw.sessiond.v1.RecordUsageRequest\x1a%.claw.sessiond.v1.RecordUsageResponse\x12H\n" +
	"\x05Clear\x12\x1e.claw.sessiond.v1.ClearRequest\x1a\x1f.claw.sessiond.v1.ClearResponse\x12Z\n" +
	"\vRecordEvent\x12$.claw.sessiond.v1.RecordEventRequest\x1a%.claw.sessiond.v1.RecordEventResponse\x12M\n" +
	"\x06Attach\x12\x1f.claw.sessiond.v1.AttachRequest\x1a .claw.sessiond.v1.AttachResponse0\x01\x12J\n" +
	"\x05Watch\x12\x1e.claw.sessiond.v1.WatchRequest\x1a\x1f.claw.sessiond.v1.WatchResponse0\x01\x12]\n" +
	"\fListSessions\x12%.claw.sessiond.v1.ListSessionsRequest\x1a&.claw.sessiond.v1.ListSessionsResponse\x12Q\n" +
	"\bGetUsage\x12!.claw.sessiond.v1.GetUsageRequest\x1a\".claw.sessiond.v1.GetUsageResponse\x12K\n" +
	"\x06Delete\x12\x1f.claw.sessiond.v1.DeleteRequest\x1a .claw.sessiond.v1.DeleteResponse\x12M\n" +
	"\x06Export\x12\x1f.claw.sessiond.v1.ExportRequest\x1a .claw.sessiond.v1.ExportResponse0\x01\x12K\n" +
	"\x06Import\x12\x1f.claw.sessiond.v1.ImportRequest\x1a .claw.sessiond.v1.ImportResponse\x12Q\n" +
	"\bGetStats\x12!.claw.sessiond.v1.GetStatsRequest\x1a\".claw.sessiond.v1.GetStatsResponse\x12M\n" +
	"\x06Backup\x12\x1f.claw.sessiond.v1.BackupRequest\x1a .claw.sessiond.v1.BackupResponse0\x01\x12K\n" +
	"\x06Search\x12\x1f.claw.sessiond.v1.SearchRequest\x1a .claw.sessiond.v1.SearchResponse\x12S\n" +
	"\bWatchAll\x12!.claw.sessiond.v1.WatchAllRequest\x1a\".claw.sessiond.v1.WatchAllResponse0\x01\x12c\n" +
	"\x0eGetUsageReport\x12'.claw.sessiond.v1.GetUsageReportRequest\x1a(.claw.sessiond.v1.GetUsageReportResponse\x12Q\n" +
	"\bEditTail\x12!.claw.sessiond.v1.EditTailRequest\x1a\".claw.sessiond.v1.EditTailResponse\x12`\n" +
	"\rDeleteEntries\x12&.claw.sessiond.v1.DeleteEntriesRequest\x1a'.claw.sessiond.v1.DeleteEntriesResponse\x12`\n" +
	"\rCreateSession\x12&.claw.sessiond.v1.CreateSessionRequest\x1a'.claw.sessiond.v1.CreateSessionResponse\x12Z\n" +
	"\vForkSession\x12$.claw.sessiond.v1.ForkSessionRequest\x1a%.claw.sessiond.v1.ForkSessionResponse\x12`\n" +
	"\rUpdateSession\x12&.claw.sessiond.v1.UpdateSessionRequest\x1a'.claw.sessiond.v1.UpdateSessionResponse\x12c\n" +
	"\x0eGetScopeStates\x12'.claw.sessiond.v1.GetScopeStatesRequest\x1a(.claw.sessiond.v1.GetScopeStatesResponse\x12K\n" +
	"\x06EndRun\x12\x1f.claw.sessiond.v1.EndRunRequest\x1a .claw.sessiond.v1.EndRunResponse\x12N\n" +
	"\aPingRun\x12 .claw.sessiond.v1.PingRunRequest\x1a!.claw.sessiond.v1.PingRunResponseB\xb3\x01\n" +
	"\x14dev.claw.sessiond.v1B\rSessiondProtoP\x01ZIgithub.com/claw-sessiond/claw-sessiond/gen/go/claw/sessiond/v1;sessiondv1\xa2\x02\x03CSX\xaa\x02\x10Claw.Sessiond.V1\xca\x02\x10Claw\\Sessiond\\V1\xea\x02\x12Claw::Sessiond::V1b\x06proto3"

var (
	file_claw_sessiond_v1_sessiond_proto_rawDescOnce sync.Once
	file_claw_sessiond_v1_sessiond_proto_rawDescData []byte
)

func file_claw_sessiond_v1_sessiond_proto_rawDescGZIP() []byte {
	file_claw_sessiond_v1_sessiond_proto_rawDescOnce.Do(func() {
		file_claw_sessiond_v1_sessiond_proto_rawDescData = protoimpl.X.CompressGZIP(unsafe.Slice(unsafe.StringData(file_claw_sessiond_v1_sessiond_proto_rawDesc), len(file_claw_sessiond_v1_sessiond_proto_rawDesc)))
	})
	return file_claw_sessiond_v1_sessiond_proto_rawDescData
}

var file_claw_sessiond_v1_sessiond_proto_enumTypes = make([]protoimpl.EnumInfo, 5)
var file_claw_sessiond_v1_sessiond_proto_msgTypes = make([]protoimpl.MessageInfo, 80)
var file_claw_sessiond_v1_sessiond_proto_goTypes = []any{
	(Role)(0),                      // 0: claw.sessiond.v1.Role
	(RepairMode)(0),                // 1: claw.sessiond.v1.RepairMode
	(SyntheticReason)(0),           // 2: claw.sessiond.v1.SyntheticReason
	(EventKind)(0),                 // 3: claw.sessiond.v1.EventKind
	(ImportMode)(0),                // 4: claw.sessiond.v1.ImportMode
	(*ToolCall)(nil),               // 5: claw.sessiond.v1.ToolCall
	(*ToolPolicy)(nil),             // 6: claw.sessiond.v1.ToolPolicy
	(*EntryUsage)(nil),             // 7: claw.sessiond.v1.EntryUsage
	(*Synthetic)(nil),              // 8: claw.sessiond.v1.Synthetic
	(*Message)(nil),                // 9: claw.sessiond.v1.Message
	(*Usage)(nil),                  // 10: claw.sessiond.v1.Usage
	(*Session)(nil),                // 11: claw.sessiond.v1.Session
	(*StateDelta)(nil),             // 12: claw.sessiond.v1.StateDelta
	(*ScopeState)(nil),             // 13: claw.sessiond.v1.ScopeState
	(*Repair)(nil),                 // 14: claw.sessiond.v1.Repair
	(*InFlightCall)(nil),           // 15: claw.sessiond.v1.InFlightCall
	(*LoadRequest)(nil),            // 16: claw.sessiond.v1.LoadRequest
	(*LoadResponse)(nil),           // 17: claw.sessiond.v1.LoadResponse
	(*AppendRequest)(nil),          // 18: claw.sessiond.v1.AppendRequest
	(*AppendResponse)(nil),         // 19: claw.sessiond.v1.AppendResponse
	(*AppendStreamRequest)(nil),    // 20: claw.sessiond.v1.AppendStreamRequest
	(*AppendStreamResponse)(nil),   // 21: claw.sessiond.v1.AppendStreamResponse
	(*AppendReply)(nil),            // 22: claw.sessiond.v1.AppendReply
	(*AppendError)(nil),            // 23: claw.sessiond.v1.AppendError
	(*RecordUsageRequest)(nil),     // 24: claw.sessiond.v1.RecordUsageRequest
	(*RecordUsageResponse)(nil),    // 25: claw.sessiond.v1.RecordUsageResponse
	(*ClearRequest)(nil),           // 26: claw.sessiond.v1.ClearRequest
	(*ClearResponse)(nil),          // 27: claw.sessiond.v1.ClearResponse
	(*RecordEventRequest)(nil),     // 28: claw.sessiond.v1.RecordEventRequest
	(*RecordEventResponse)(nil),    // 29: claw.sessiond.v1.RecordEventResponse
	(*AttachRequest)(nil),          // 30: claw.sessiond.v1.AttachRequest
	(*AttachResponse)(nil),         // 31: claw.sessiond.v1.AttachResponse
	(*WatchRequest)(nil),           // 32: claw.sessiond.v1.WatchRequest
	(*TailEdit)(nil),               // 33: claw.sessiond.v1.TailEdit
	(*WatchResponse)(nil),          // 34: claw.sessiond.v1.WatchResponse
	(*ListSessionsRequest)(nil),    // 35: claw.sessiond.v1.ListSessionsRequest
	(*SessionSummary)(nil),         // 36: claw.sessiond.v1.SessionSummary
	(*ListSessionsResponse)(nil),   // 37: claw.sessiond.v1.ListSessionsResponse
	(*GetUsageRequest)(nil),        // 38: claw.sessiond.v1.GetUsageRequest
	(*ModelUsage)(nil),             // 39: claw.sessiond.v1.ModelUsage
	(*GetUsageResponse)(nil),       // 40: claw.sessiond.v1.GetUsageResponse
	(*DeleteRequest)(nil),          // 41: claw.sessiond.v1.DeleteRequest
	(*DeleteResponse)(nil),         // 42: claw.sessiond.v1.DeleteResponse
	(*ExportRequest)(nil),          // 43: claw.sessiond.v1.ExportRequest
	(*ExportResponse)(nil),         // 44: claw.sessiond.v1.ExportResponse
	(*ImportRequest)(nil),          // 45: claw.sessiond.v1.ImportRequest
	(*ImportResponse)(nil),         // 46: claw.sessiond.v1.ImportResponse
	(*GetStatsRequest)(nil),        // 47: claw.sessiond.v1.GetStatsRequest
	(*GetStatsResponse)(nil),       // 48: claw.sessiond.v1.GetStatsResponse
	(*RequestCount)(nil),           // 49: claw.sessiond.v1.RequestCount
	(*BackupRequest)(nil),          // 50: claw.sessiond.v1.BackupRequest
	(*BackupResponse)(nil),         // 51: claw.sessiond.v1.BackupResponse
	(*BackupFigures)(nil),          // 52: claw.sessiond.v1.BackupFigures
	(*SearchRequest)(nil),          // 53: claw.sessiond.v1.SearchRequest
	(*SearchResponse)(nil),         // 54: claw.sessiond.v1.SearchResponse
	(*SearchHit)(nil),              // 55: claw.sessiond.v1.SearchHit
	(*SnippetPart)(nil),            // 56: claw.sessiond.v1.SnippetPart
	(*WatchAllRequest)(nil),        // 57: claw.sessiond.v1.WatchAllRequest
	(*WatchAllResponse)(nil),       // 58: claw.sessiond.v1.WatchAllResponse
	(*GetUsageReportRequest)(nil),  // 59: claw.sessiond.v1.GetUsageReportRequest
	(*GetUsageReportResponse)(nil), // 60: claw.sessiond.v1.GetUsageReportResponse
	(*UsageReportRow)(nil),         // 61: claw.sessiond.v1.UsageReportRow
	(*EditTailRequest)(nil),        // 62: claw.sessiond.v1.EditTailRequest
	(*EditTailResponse)(nil),       // 63: claw.sessiond.v1.EditTailResponse
	(*DeleteEntriesRequest)(nil),   // 64: claw.sessiond.v1.DeleteEntriesRequest
	(*DeleteEntriesResponse)(nil),  // 65: claw.sessiond.v1.DeleteEntriesResponse
	(*CreateSessionRequest)(nil),   // 66: claw.sessiond.v1.CreateSessionRequest
	(*CreateSessionResponse)(nil),  // 67: claw.sessiond.v1.CreateSessionResponse
	(*ForkSessionRequest)(nil),     // 68: claw.sessiond.v1.ForkSessionRequest
	(*ForkSessionResponse)(nil),    // 69: claw.sessiond.v1.ForkSessionResponse
	(*UpdateSessionRequest)(nil),   // 70: claw.sessiond.v1.UpdateSessionRequest
	(*UpdateSessionResponse)(nil),  // 71: claw.sessiond.v1.UpdateSessionResponse
	(*GetScopeStatesRequest)(nil),  // 72: claw.sessiond.v1.GetScopeStatesRequest
	(*GetScopeStatesResponse)(nil), // 73: claw.sessiond.v1.GetScopeStatesResponse
	(*EndRunRequest)(nil),          // 74: claw.sessiond.v1.EndRunRequest
	(*EndRunResponse)(nil),         // 75: claw.sessiond.v1.EndRunResponse
	(*PingRunRequest)(nil),         // 76: claw.sessiond.v1.PingRunRequest
	(*PingRunResponse)(nil),        // 77: claw.sessiond.v1.PingRunResponse
	nil,                            // 78: claw.sessiond.v1.Session.LabelsEntry
	nil,                            // 79: claw.sessiond.v1.AppendError.MetadataEntry
	nil,                            // 80: claw.sessiond.v1.ListSessionsRequest.LabelsEntry
	nil,                            // 81: claw.sessiond.v1.SessionSummary.LabelsEntry
	nil,                            // 82: claw.sessiond.v1.CreateSessionRequest.LabelsEntry
	nil,                            // 83: claw.sessiond.v1.ForkSessionRequest.LabelsEntry
	nil,                            // 84: claw.sessiond.v1.UpdateSessionRequest.SetLabelsEntry
	(*timestamppb.Timestamp)(nil),  // 85: google.protobuf.Timestamp
}
var file_claw_sessiond_v1_sessiond_proto_depIdxs = []int32{
	1,  // 0: claw.sessiond.v1.ToolPolicy.repair:type_name -> claw.sessiond.v1.RepairMode
	2,  // 1: claw.sessiond.v1.Synthetic.reason:type_name -> claw.sessiond.v1.SyntheticReason
	0,  // 2: claw.sessiond.v1.Message.role:type_name -> claw.sessiond.v1.Role
	5,  // 3: claw.sessiond.v1.Message.tool_calls:type_name -> claw.sessiond.v1.ToolCall
	8,  // 4: claw.sessiond.v1.Message.synthetic:type_name -> claw.sessiond.v1.Synthetic
	85, // 5: claw.sessiond.v1.Message.created_at:type_name -> google.protobuf.Timestamp
	7,  // 6: claw.sessiond.v1.Message.usage:type_name -> claw.sessiond.v1.EntryUsage
	85, // 7: claw.sessiond.v1.Session.created_at:type_name -> google.protobuf.Timestamp
	85, // 8: claw.sessiond.v1.Session.updated_at:type_name -> google.protobuf.Timestamp
	10, // 9: claw.sessiond.v1.Session.usage:type_name -> claw.sessiond.v1.Usage
	78, // 10: claw.sessiond.v1.Session.labels:type_name -> claw.sessiond.v1.Session.LabelsEntry
	6,  // 11: claw.sessiond.v1.Session.tool_policy:type_name -> claw.sessiond.v1.ToolPolicy
	85, // 12: claw.sessiond.v1.ScopeState.updated_at:type_name -> google.protobuf.Timestamp
	85, // 13: claw.sessiond.v1.LoadRequest.after_time:type_name -> google.protobuf.Timestamp
	11, // 14: claw.sessiond.v1.LoadResponse.session:type_name -> claw.sessiond.v1.Session
	14, // 15: claw.sessiond.v1.LoadResponse.repairs:type_name -> claw.sessiond.v1.Repair
	15, // 16: claw.sessiond.v1.LoadResponse.in_flight:type_name -> claw.sessiond.v1.InFlightCall
	9,  // 17: claw.sessiond.v1.LoadResponse.messages:type_name -> claw.sessiond.v1.Message
	13, // 18: claw.sessiond.v1.LoadResponse.scope_states:type_name -> claw.sessiond.v1.ScopeState
	9,  // 19: claw.sessiond.v1.AppendRequest.messages:type_name -> claw.sessiond.v1.Message
	6,  // 20: claw.sessiond.v1.AppendRequest.tool_policy:type_name -> claw.sessiond.v1.ToolPolicy
	12, // 21: claw.sessiond.v1.AppendRequest.state_deltas:type_name -> claw.sessiond.v1.StateDelta
	85, // 22: claw.sessiond.v1.AppendResponse.created_at:type_name -> google.protobuf.Timestamp
	18, // 23: claw.sessiond.v1.AppendStreamRequest.appends:type_name -> claw.sessiond.v1.AppendRequest
	22, // 24: claw.sessiond.v1.AppendStreamResponse.replies:type_name -> claw.sessiond.v1.AppendReply
	19, // 25: claw.sessiond.v1.AppendReply.result:type_name -> claw.sessiond.v1.AppendResponse
	23, // 26: claw.sessiond.v1.AppendReply.error:type_name -> claw.sessiond.v1.AppendError
	79, // 27: claw.sessiond.v1.AppendError.metadata:type_name -> claw.sessiond.v1.AppendError.MetadataEntry
	10, // 28: claw.sessiond.v1.RecordUsageResponse.usage:type_name -> claw.sessiond.v1.Usage
	3,  // 29: claw.sessiond.v1.RecordEventRequest.kind:type_name -> claw.sessiond.v1.EventKind
	9,  // 30: claw.sessiond.v1.WatchResponse.message:type_name -> claw.sessiond.v1.Message
	33, // 31: claw.sessiond.v1.WatchResponse.edit:type_name -> claw.sessiond.v1.TailEdit
	34, // 32: claw.sessiond.v1.WatchResponse.events:type_name -> claw.sessiond.v1.WatchResponse
	80, // 33: claw.sessiond.v1.ListSessionsRequest.labels:type_name -> claw.sessiond.v1.ListSessionsRequest.LabelsEntry
	10, // 34: claw.sessiond.v1.SessionSummary.usage:type_name -> claw.sessiond.v1.Usage
	85, // 35: claw.sessiond.v1.SessionSummary.updated_at:type_name -> google.protobuf.Timestamp
	81, // 36: claw.sessiond.v1.SessionSummary.labels:type_name -> claw.sessiond.v1.SessionSummary.LabelsEntry
	85, // 37: claw.sessiond.v1.SessionSummary.created_at:type_name -> google.protobuf.Timestamp
	36, // 38: claw.sessiond.v1.ListSessionsResponse.sessions:type_name -> claw.sessiond.v1.SessionSummary
	10, // 39: claw.sessiond.v1.ModelUsage.usage:type_name -> claw.sessiond.v1.Usage
	10, // 40: claw.sessiond.v1.GetUsageResponse.total:type_name -> claw.sessiond.v1.Usage
	39, // 41: claw.sessiond.v1.GetUsageResponse.by_model:type_name -> claw.sessiond.v1.ModelUsage
	4,  // 42: claw.sessiond.v1.ImportRequest.mode:type_name -> claw.sessiond.v1.ImportMode
	49, // 43: claw.sessiond.v1.GetStatsResponse.requests:type_name -> claw.sessiond.v1.RequestCount
	52, // 44: claw.sessiond.v1.BackupResponse.figures:type_name -> claw.sessiond.v1.BackupFigures
	0,  // 45: claw.sessiond.v1.SearchRequest.role:type_name -> claw.sessiond.v1.Role
	85, // 46: claw.sessiond.v1.SearchRequest.since:type_name -> google.protobuf.Timestamp
	85, // 47: claw.sessiond.v1.SearchRequest.until:type_name -> google.protobuf.Timestamp
	55, // 48: claw.sessiond.v1.SearchResponse.hits:type_name -> claw.sessiond.v1.SearchHit
	0,  // 49: claw.sessiond.v1.SearchHit.role:type_name -> claw.sessiond.v1.Role
	85, // 50: claw.sessiond.v1.SearchHit.created_at:type_name -> google.protobuf.Timestamp
	56, // 51: claw.sessiond.v1.SearchHit.snippet:type_name -> claw.sessiond.v1.SnippetPart
	9,  // 52: claw.sessiond.v1.WatchAllResponse.message:type_name -> claw.sessiond.v1.Message
	33, // 53: claw.sessiond.v1.WatchAllResponse.edit:type_name -> claw.sessiond.v1.TailEdit
	58, // 54: claw.sessiond.v1.WatchAllResponse.events:type_name -> claw.sessiond.v1.WatchAllResponse
	85, // 55: claw.sessiond.v1.GetUsageReportRequest.since:type_name -> google.protobuf.Timestamp
	85, // 56: claw.sessiond.v1.GetUsageReportRequest.until:type_name -> google.protobuf.Timestamp
	61, // 57: claw.sessiond.v1.GetUsageReportResponse.rows:type_name -> claw.sessiond.v1.UsageReportRow
	10, // 58: claw.sessiond.v1.UsageReportRow.usage:type_name -> claw.sessiond.v1.Usage
	9,  // 59: claw.sessiond.v1.EditTailRequest.replacements:type_name -> claw.sessiond.v1.Message
	6,  // 60: claw.sessiond.v1.EditTailRequest.tool_policy:type_name -> claw.sessiond.v1.ToolPolicy
	9,  // 61: claw.sessiond.v1.EditTailResponse.removed:type_name -> claw.sessiond.v1.Message
	82, // 62: claw.sessiond.v1.CreateSessionRequest.labels:type_name -> claw.sessiond.v1.CreateSessionRequest.LabelsEntry
	6,  // 63: claw.sessiond.v1.CreateSessionRequest.tool_policy:type_name -> claw.sessiond.v1.ToolPolicy
	11, // 64: claw.sessiond.v1.CreateSessionResponse.session:type_name -> claw.sessiond.v1.Session
	83, // 65: claw.sessiond.v1.ForkSessionRequest.labels:type_name -> claw.sessiond.v1.ForkSessionRequest.LabelsEntry
	11, // 66: claw.sessiond.v1.ForkSessionResponse.session:type_name -> claw.sessiond.v1.Session
	12, // 67: claw.sessiond.v1.UpdateSessionRequest.state_deltas:type_name -> claw.sessiond.v1.StateDelta
	84, // 68: claw.sessiond.v1.UpdateSessionRequest.set_labels:type_name -> claw.sessiond.v1.UpdateSessionRequest.SetLabelsEntry
	6,  // 69: claw.sessiond.v1.UpdateSessionRequest.tool_policy:type_name -> claw.sessiond.v1.ToolPolicy
	11, // 70: claw.sessiond.v1.UpdateSessionResponse.session:type_name -> claw.sessiond.v1.Session
	13, // 71: claw.sessiond.v1.GetScopeStatesResponse.states:type_name -> claw.sessiond.v1.ScopeState
	16, // 72: claw.sessiond.v1.SessionService.Load:input_type -> claw.sessiond.v1.LoadRequest
	18, // 73: claw.sessiond.v1.SessionService.Append:input_type -> claw.sessiond.v1.AppendRequest
	20, // 74: claw.sessiond.v1.SessionService.AppendStream:input_type -> claw.sessiond.v1.AppendStreamRequest
	24, // 75: claw.sessiond.v1.SessionService.RecordUsage:input_type -> claw.sessiond.v1.RecordUsageRequest
	26, // 76: claw.sessiond.v1.SessionService.Clear:input_type -> claw.sessiond.v1.ClearRequest
	28, // 77: claw.sessiond.v1.SessionService.RecordEvent:input_type -> claw.sessiond.v1.RecordEventRequest
	30, // 78: claw.sessiond.v1.SessionService.Attach:input_type -> claw.sessiond.v1.AttachRequest
	32, // 79: claw.sessiond.v1.SessionService.Watch:input_type -> claw.sessiond.v1.WatchRequest
	35, // 80: claw.sessiond.v1.SessionService.ListSessions:input_type -> claw.sessiond.v1.ListSessionsRequest
	38, // 81: claw.sessiond.v1.SessionService.GetUsage:input_type -> claw.sessiond.v1.GetUsageRequest
	41, // 82: claw.sessiond.v1.SessionService.Delete:input_type -> claw.sessiond.v1.DeleteRequest
	43, // 83: claw.sessiond.v1.SessionService.Export:input_type -> claw.sessiond.v1.ExportRequest
	45, // 84: claw.sessiond.v1.SessionService.Import:input_type -> claw.sessiond.v1.ImportRequest
	47, // 85: claw.sessiond.v1.SessionService.GetStats:input_type -> claw.sessiond.v1.GetStatsRequest
	50, // 86: claw.sessiond.v1.SessionService.Backup:input_type -> claw.sessiond.v1.BackupRequest
	53, // 87: claw.sessiond.v1.SessionService.Search:input_type -> claw.sessiond.v1.SearchRequest
	57, // 88: claw.sessiond.v1.SessionService.WatchAll:input_type -> claw.sessiond.v1.WatchAllRequest
	59, // 89: claw.sessiond.v1.SessionService.GetUsageReport:input_type -> claw.sessiond.v1.GetUsageReportRequest
	62, // 90: claw.sessiond.v1.SessionService.EditTail:input_type -> claw.sessiond.v1.EditTailRequest
	64, // 91: claw.sessiond.v1.SessionService.DeleteEntries:input_type -> claw.sessiond.v1.DeleteEntriesRequest
	66, // 92: claw.sessiond.v1.SessionService.CreateSession:input_type -> claw.sessiond.v1.CreateSessionRequest
	68, // 93: claw.sessiond.v1.SessionService.ForkSession:input_type -> claw.sessiond.v1.ForkSessionRequest
	70, // 94: claw.sessiond.v1.SessionService.UpdateSession:input_type -> claw.sessiond.v1.UpdateSessionRequest
	72, // 95: claw.sessiond.v1.SessionService.GetScopeStates:input_type -> claw.sessiond.v1.GetScopeStatesRequest
	74, // 96: claw.sessiond.v1.SessionService.EndRun:input_type -> claw.sessiond.v1.EndRunRequest
	76, // 97: claw.sessiond.v1.SessionService.PingRun:input_type -> claw.sessiond.v1.PingRunRequest
	17, // 98: claw.sessiond.v1.SessionService.Load:output_type -> claw.sessiond.v1.LoadResponse
	19, // 99: claw.sessiond.v1.SessionService.Append:output_type -> claw.sessiond.v1.AppendResponse
	21, // 100: claw.sessiond.v1.SessionService.AppendStream:output_type -> claw.sessiond.v1.AppendStreamResponse
	25, // 101: claw.sessiond.v1.SessionService.RecordUsage:output_type -> claw.sessiond.v1.RecordUsageResponse
	27, // 102: claw.sessiond.v1.SessionService.Clear:output_type -> claw.sessiond.v1.ClearResponse
	29, // 103: claw.sessiond.v1.SessionService.RecordEvent:output_type -> claw.sessiond.v1.RecordEventResponse
	31, // 104: claw.sessiond.v1.SessionService.Attach:output_type -> claw.sessiond.v1.AttachResponse
	34, // 105: claw.sessiond.v1.SessionService.Watch:output_type -> claw.sessiond.v1.WatchResponse
	37, // 106: claw.sessiond.v1.SessionService.ListSessions:output_type -> claw.sessiond.v1.ListSessionsResponse
	40, // 107: claw.sessiond.v1.SessionService.GetUsage:output_type -> claw.sessiond.v1.GetUsageResponse
	42, // 108: claw.sessiond.v1.SessionService.Delete:output_type -> claw.sessiond.v1.DeleteResponse
	44, // 109: claw.sessiond.v1.SessionService.Export:output_type -> claw.sessiond.v1.ExportResponse
	46, // 110: claw.sessiond.v1.SessionService.Import:output_type -> claw.sessiond.v1.ImportResponse
	48, // 111: claw.sessiond.v1.SessionService.GetStats:output_type -> claw.sessiond.v1.GetStatsResponse
	51, // 112: claw.sessiond.v1.SessionService.Backup:output_type -> claw.sessiond.v1.BackupResponse
	54, // 113: claw.sessiond.v1.SessionService.Search:output_type -> claw.sessiond.v1.SearchResponse
	58, // 114: claw.sessiond.v1.SessionService.WatchAll:output_type -> claw.sessiond.v1.WatchAllResponse
	60, // 115: claw.sessiond.v1.SessionService.GetUsageReport:output_type -> claw.sessiond.v1.GetUsageReportResponse
	63, // 116: claw.sessiond.v1.SessionService.EditTail:output_type -> claw.sessiond.v1.EditTailResponse
	65, // 117: claw.sessiond.v1.SessionService.DeleteEntries:output_type -> claw.sessiond.v1.DeleteEntriesResponse
	67, // 118: claw.sessiond.v1.SessionService.CreateSession:output_type -> claw.sessiond.v1.CreateSessionResponse
	69, // 119: claw.sessiond.v1.SessionService.ForkSession:output_type -> claw.sessiond.v1.ForkSessionResponse
	71, // 120: claw.sessiond.v1.SessionService.UpdateSession:output_type -> claw.sessiond.v1.UpdateSessionResponse
	73, // 121: claw.sessiond.v1.SessionService.GetScopeStates:output_type -> claw.sessiond.v1.GetScopeStatesResponse
	75, // 122: claw.sessiond.v1.SessionService.EndRun:output_type -> claw.sessiond.v1.EndRunResponse
	77, // 123: claw.sessiond.v1.SessionService.PingRun:output_type -> claw.sessiond.v1.PingRunResponse
	98, // [98:124] is the sub-list for method output_type
	72, // [72:98] is the sub-list for method input_type
	72, // [72:72] is the sub-list for extension type_name
	72, // [72:72] is the sub-list for extension extendee
	0,  // [0:72] is the sub-list for field type_name
}

func init() { file_claw_sessiond_v1_sessiond_proto_init() }
func file_claw_sessiond_v1_sessiond_proto_init() {
	if File_claw_sessiond_v1_sessiond_proto != nil {
		return
	}
	type x struct{}
	out := protoimpl.TypeBuilder{
		File: protoimpl.DescBuilder{
			GoPackagePath: reflect.TypeOf(x{}).PkgPath(),
			RawDescriptor: unsafe.Slice(unsafe.StringData(file_claw_sessiond_v1_sessiond_proto_rawDesc), len(file_claw_sessiond_v1_sessiond_proto_rawDesc)),
			NumEnums:      5,
			NumMessages:   80,
			NumExtensions: 0,
			NumServices:   1,
		},
		GoTypes:           file_claw_sessiond_v1_sessiond_proto_goTypes,
		DependencyIndexes: file_claw_sessiond_v1_sessiond_proto_depIdxs,
		EnumInfos:         file_claw_sessiond_v1_sessiond_proto_enumTypes,
		MessageInfos:      file_claw_sessiond_v1_sessiond_proto_msgTypes,
	}.Build()
	File_claw_sessiond_v1_sessiond_proto = out.File
	file_claw_sessiond_v1_sessiond_proto_goTypes = nil
	file_claw_sessiond_v1_sessiond_proto_depIdxs = nil
}
