import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Role(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ROLE_UNSPECIFIED: _ClassVar[Role]
    ROLE_SYSTEM: _ClassVar[Role]
    ROLE_USER: _ClassVar[Role]
    ROLE_ASSISTANT: _ClassVar[Role]
    ROLE_TOOL: _ClassVar[Role]
    ROLE_OTHER: _ClassVar[Role]

class RepairMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REPAIR_MODE_UNSPECIFIED: _ClassVar[RepairMode]
    REPAIR_MODE_SYNTHESIZE: _ClassVar[RepairMode]
    REPAIR_MODE_DROP: _ClassVar[RepairMode]
    REPAIR_MODE_OFF: _ClassVar[RepairMode]

class SyntheticReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SYNTHETIC_REASON_UNSPECIFIED: _ClassVar[SyntheticReason]
    SYNTHETIC_REASON_INTERRUPTED: _ClassVar[SyntheticReason]

class EventKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EVENT_KIND_UNSPECIFIED: _ClassVar[EventKind]
    EVENT_KIND_PERMISSION_DENIAL: _ClassVar[EventKind]
    EVENT_KIND_ERROR: _ClassVar[EventKind]

class ImportMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    IMPORT_MODE_UNSPECIFIED: _ClassVar[ImportMode]
    IMPORT_MODE_REPLACE: _ClassVar[ImportMode]
    IMPORT_MODE_MERGE: _ClassVar[ImportMode]
ROLE_UNSPECIFIED: Role
ROLE_SYSTEM: Role
ROLE_USER: Role
ROLE_ASSISTANT: Role
ROLE_TOOL: Role
ROLE_OTHER: Role
REPAIR_MODE_UNSPECIFIED: RepairMode
REPAIR_MODE_SYNTHESIZE: RepairMode
REPAIR_MODE_DROP: RepairMode
REPAIR_MODE_OFF: RepairMode
SYNTHETIC_REASON_UNSPECIFIED: SyntheticReason
SYNTHETIC_REASON_INTERRUPTED: SyntheticReason
EVENT_KIND_UNSPECIFIED: EventKind
EVENT_KIND_PERMISSION_DENIAL: EventKind
EVENT_KIND_ERROR: EventKind
IMPORT_MODE_UNSPECIFIED: ImportMode
IMPORT_MODE_REPLACE: ImportMode
IMPORT_MODE_MERGE: ImportMode

class ToolCall(_message.Message):
    __slots__ = ("id", "name", "arguments", "pending", "arguments_not_json")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    ARGUMENTS_NOT_JSON_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    arguments: str
    pending: bool
    arguments_not_json: bool
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., arguments: _Optional[str] = ..., pending: _Optional[bool] = ..., arguments_not_json: _Optional[bool] = ...) -> None: ...

class ToolPolicy(_message.Message):
    __slots__ = ("repair", "allow_orphan_results", "allow_unparsed_calls")
    REPAIR_FIELD_NUMBER: _ClassVar[int]
    ALLOW_ORPHAN_RESULTS_FIELD_NUMBER: _ClassVar[int]
    ALLOW_UNPARSED_CALLS_FIELD_NUMBER: _ClassVar[int]
    repair: RepairMode
    allow_orphan_results: bool
    allow_unparsed_calls: bool
    def __init__(self, repair: _Optional[_Union[RepairMode, str]] = ..., allow_orphan_results: _Optional[bool] = ..., allow_unparsed_calls: _Optional[bool] = ...) -> None: ...

class EntryUsage(_message.Message):
    __slots__ = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_micros", "currency", "model", "pricing_version")
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHE_READ_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHE_WRITE_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COST_MICROS_FIELD_NUMBER: _ClassVar[int]
    CURRENCY_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    PRICING_VERSION_FIELD_NUMBER: _ClassVar[int]
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_micros: int
    currency: str
    model: str
    pricing_version: str
    def __init__(self, input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., cache_read_tokens: _Optional[int] = ..., cache_write_tokens: _Optional[int] = ..., cost_micros: _Optional[int] = ..., currency: _Optional[str] = ..., model: _Optional[str] = ..., pricing_version: _Optional[str] = ...) -> None: ...

class Synthetic(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: SyntheticReason
    def __init__(self, reason: _Optional[_Union[SyntheticReason, str]] = ...) -> None: ...

class Message(_message.Message):
    __slots__ = ("role", "content", "tool_calls", "tool_call_id", "name", "synthetic", "position", "created_at", "trace_id", "format", "item", "client_id", "metadata", "usage", "cancelled", "orphan", "supersedes")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    SYNTHETIC_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    ITEM_FIELD_NUMBER: _ClassVar[int]
    CLIENT_ID_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    CANCELLED_FIELD_NUMBER: _ClassVar[int]
    ORPHAN_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDES_FIELD_NUMBER: _ClassVar[int]
    role: Role
    content: str
    tool_calls: _containers.RepeatedCompositeFieldContainer[ToolCall]
    tool_call_id: str
    name: str
    synthetic: Synthetic
    position: int
    created_at: _timestamp_pb2.Timestamp
    trace_id: str
    format: str
    item: bytes
    client_id: str
    metadata: str
    usage: EntryUsage
    cancelled: bool
    orphan: bool
    supersedes: int
    def __init__(self, role: _Optional[_Union[Role, str]] = ..., content: _Optional[str] = ..., tool_calls: _Optional[_Iterable[_Union[ToolCall, _Mapping]]] = ..., tool_call_id: _Optional[str] = ..., name: _Optional[str] = ..., synthetic: _Optional[_Union[Synthetic, _Mapping]] = ..., position: _Optional[int] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., trace_id: _Optional[str] = ..., format: _Optional[str] = ..., item: _Optional[bytes] = ..., client_id: _Optional[str] = ..., metadata: _Optional[str] = ..., usage: _Optional[_Union[EntryUsage, _Mapping]] = ..., cancelled: _Optional[bool] = ..., orphan: _Optional[bool] = ..., supersedes: _Optional[int] = ...) -> None: ...

class Usage(_message.Message):
    __slots__ = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_micros", "currency")
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHE_READ_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHE_WRITE_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COST_MICROS_FIELD_NUMBER: _ClassVar[int]
    CURRENCY_FIELD_NUMBER: _ClassVar[int]
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_micros: int
    currency: str
    def __init__(self, input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., cache_read_tokens: _Optional[int] = ..., cache_write_tokens: _Optional[int] = ..., cost_micros: _Optional[int] = ..., currency: _Optional[str] = ...) -> None: ...

class Session(_message.Message):
    __slots__ = ("id", "workdir", "created_at", "updated_at", "usage", "last_position", "stored", "message_count", "state", "labels", "tool_policy", "forked_from", "forked_at_position", "incarnation")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    WORKDIR_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    LAST_POSITION_FIELD_NUMBER: _ClassVar[int]
    STORED_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    TOOL_POLICY_FIELD_NUMBER: _ClassVar[int]
    FORKED_FROM_FIELD_NUMBER: _ClassVar[int]
    FORKED_AT_POSITION_FIELD_NUMBER: _ClassVar[int]
    INCARNATION_FIELD_NUMBER: _ClassVar[int]
    id: str
    workdir: str
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    usage: Usage
    last_position: int
    stored: bool
    message_count: int
    state: str
    labels: _containers.ScalarMap[str, str]
    tool_policy: ToolPolicy
    forked_from: str
    forked_at_position: int
    incarnation: str
    def __init__(self, id: _Optional[str] = ..., workdir: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ..., last_position: _Optional[int] = ..., stored: _Optional[bool] = ..., message_count: _Optional[int] = ..., state: _Optional[str] = ..., labels: _Optional[_Mapping[str, str]] = ..., tool_policy: _Optional[_Union[ToolPolicy, _Mapping]] = ..., forked_from: _Optional[str] = ..., forked_at_position: _Optional[int] = ..., incarnation: _Optional[str] = ...) -> None: ...

class StateDelta(_message.Message):
    __slots__ = ("scope", "delta")
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    scope: str
    delta: str
    def __init__(self, scope: _Optional[str] = ..., delta: _Optional[str] = ...) -> None: ...

class ScopeState(_message.Message):
    __slots__ = ("scope", "state", "updated_at")
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    scope: str
    state: str
    updated_at: _timestamp_pb2.Timestamp
    def __init__(self, scope: _Optional[str] = ..., state: _Optional[str] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class Repair(_message.Message):
    __slots__ = ("tool_call_id", "assistant_position", "position")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    ASSISTANT_POSITION_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    assistant_position: int
    position: int
    def __init__(self, tool_call_id: _Optional[str] = ..., assistant_position: _Optional[int] = ..., position: _Optional[int] = ...) -> None: ...

class InFlightCall(_message.Message):
    __slots__ = ("tool_call_id", "assistant_position", "run_id", "owner_pid", "owner_host", "owner_label")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    ASSISTANT_POSITION_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    OWNER_PID_FIELD_NUMBER: _ClassVar[int]
    OWNER_HOST_FIELD_NUMBER: _ClassVar[int]
    OWNER_LABEL_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    assistant_position: int
    run_id: str
    owner_pid: int
    owner_host: str
    owner_label: str
    def __init__(self, tool_call_id: _Optional[str] = ..., assistant_position: _Optional[int] = ..., run_id: _Optional[str] = ..., owner_pid: _Optional[int] = ..., owner_host: _Optional[str] = ..., owner_label: _Optional[str] = ...) -> None: ...

class LoadRequest(_message.Message):
    __slots__ = ("session_id", "workdir", "trace_id", "no_repair", "last", "after_position", "after_time", "scopes", "client_ids", "client_id_prefix", "before_position", "items_format")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    WORKDIR_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    NO_REPAIR_FIELD_NUMBER: _ClassVar[int]
    LAST_FIELD_NUMBER: _ClassVar[int]
    AFTER_POSITION_FIELD_NUMBER: _ClassVar[int]
    AFTER_TIME_FIELD_NUMBER: _ClassVar[int]
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    CLIENT_IDS_FIELD_NUMBER: _ClassVar[int]
    CLIENT_ID_PREFIX_FIELD_NUMBER: _ClassVar[int]
    BEFORE_POSITION_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FORMAT_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    workdir: str
    trace_id: str
    no_repair: bool
    last: int
    after_position: int
    after_time: _timestamp_pb2.Timestamp
    scopes: _containers.RepeatedScalarFieldContainer[str]
    client_ids: _containers.RepeatedScalarFieldContainer[str]
    client_id_prefix: str
    before_position: int
    items_format: str
    def __init__(self, session_id: _Optional[str] = ..., workdir: _Optional[str] = ..., trace_id: _Optional[str] = ..., no_repair: _Optional[bool] = ..., last: _Optional[int] = ..., after_position: _Optional[int] = ..., after_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., scopes: _Optional[_Iterable[str]] = ..., client_ids: _Optional[_Iterable[str]] = ..., client_id_prefix: _Optional[str] = ..., before_position: _Optional[int] = ..., items_format: _Optional[str] = ...) -> None: ...

class LoadResponse(_message.Message):
    __slots__ = ("session", "repairs", "in_flight", "messages", "done", "trace_id", "complete", "start_position", "scope_states", "items")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    REPAIRS_FIELD_NUMBER: _ClassVar[int]
    IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    COMPLETE_FIELD_NUMBER: _ClassVar[int]
    START_POSITION_FIELD_NUMBER: _ClassVar[int]
    SCOPE_STATES_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    session: Session
    repairs: _containers.RepeatedCompositeFieldContainer[Repair]
    in_flight: _containers.RepeatedCompositeFieldContainer[InFlightCall]
    messages: _containers.RepeatedCompositeFieldContainer[Message]
    done: bool
    trace_id: str
    complete: bool
    start_position: int
    scope_states: _containers.RepeatedCompositeFieldContainer[ScopeState]
    items: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ..., repairs: _Optional[_Iterable[_Union[Repair, _Mapping]]] = ..., in_flight: _Optional[_Iterable[_Union[InFlightCall, _Mapping]]] = ..., messages: _Optional[_Iterable[_Union[Message, _Mapping]]] = ..., done: _Optional[bool] = ..., trace_id: _Optional[str] = ..., complete: _Optional[bool] = ..., start_position: _Optional[int] = ..., scope_states: _Optional[_Iterable[_Union[ScopeState, _Mapping]]] = ..., items: _Optional[_Iterable[bytes]] = ...) -> None: ...

class AppendRequest(_message.Message):
    __slots__ = ("session_id", "messages", "expected_last_position", "request_id", "workdir", "run_id", "trace_id", "tool_policy", "state_deltas")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_LAST_POSITION_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    WORKDIR_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_POLICY_FIELD_NUMBER: _ClassVar[int]
    STATE_DELTAS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    messages: _containers.RepeatedCompositeFieldContainer[Message]
    expected_last_position: int
    request_id: str
    workdir: str
    run_id: str
    trace_id: str
    tool_policy: ToolPolicy
    state_deltas: _containers.RepeatedCompositeFieldContainer[StateDelta]
    def __init__(self, session_id: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[Message, _Mapping]]] = ..., expected_last_position: _Optional[int] = ..., request_id: _Optional[str] = ..., workdir: _Optional[str] = ..., run_id: _Optional[str] = ..., trace_id: _Optional[str] = ..., tool_policy: _Optional[_Union[ToolPolicy, _Mapping]] = ..., state_deltas: _Optional[_Iterable[_Union[StateDelta, _Mapping]]] = ...) -> None: ...

class AppendResponse(_message.Message):
    __slots__ = ("first_position", "last_position", "replayed", "trace_id", "created_at")
    FIRST_POSITION_FIELD_NUMBER: _ClassVar[int]
    LAST_POSITION_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    first_position: int
    last_position: int
    replayed: bool
    trace_id: str
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, first_position: _Optional[int] = ..., last_position: _Optional[int] = ..., replayed: _Optional[bool] = ..., trace_id: _Optional[str] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class AppendStreamRequest(_message.Message):
    __slots__ = ("appends",)
    APPENDS_FIELD_NUMBER: _ClassVar[int]
    appends: _containers.RepeatedCompositeFieldContainer[AppendRequest]
    def __init__(self, appends: _Optional[_Iterable[_Union[AppendRequest, _Mapping]]] = ...) -> None: ...

class AppendStreamResponse(_message.Message):
    __slots__ = ("replies",)
    REPLIES_FIELD_NUMBER: _ClassVar[int]
    replies: _containers.RepeatedCompositeFieldContainer[AppendReply]
    def __init__(self, replies: _Optional[_Iterable[_Union[AppendReply, _Mapping]]] = ...) -> None: ...

class AppendReply(_message.Message):
    __slots__ = ("result", "error")
    RESULT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    result: AppendResponse
    error: AppendError
    def __init__(self, result: _Optional[_Union[AppendResponse, _Mapping]] = ..., error: _Optional[_Union[AppendError, _Mapping]] = ...) -> None: ...

class AppendError(_message.Message):
    __slots__ = ("code", "message", "reason", "metadata")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    code: int
    message: str
    reason: str
    metadata: _containers.ScalarMap[str, str]
    def __init__(self, code: _Optional[int] = ..., message: _Optional[str] = ..., reason: _Optional[str] = ..., metadata: _Optional[_Mapping[str, str]] = ...) -> None: ...

class RecordUsageRequest(_message.Message):
    __slots__ = ("session_id", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_micros", "currency", "model", "pricing_version", "request_id", "workdir", "trace_id")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    INPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHE_READ_TOKENS_FIELD_NUMBER: _ClassVar[int]
    CACHE_WRITE_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COST_MICROS_FIELD_NUMBER: _ClassVar[int]
    CURRENCY_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    PRICING_VERSION_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    WORKDIR_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_micros: int
    currency: str
    model: str
    pricing_version: str
    request_id: str
    workdir: str
    trace_id: str
    def __init__(self, session_id: _Optional[str] = ..., input_tokens: _Optional[int] = ..., output_tokens: _Optional[int] = ..., cache_read_tokens: _Optional[int] = ..., cache_write_tokens: _Optional[int] = ..., cost_micros: _Optional[int] = ..., currency: _Optional[str] = ..., model: _Optional[str] = ..., pricing_version: _Optional[str] = ..., request_id: _Optional[str] = ..., workdir: _Optional[str] = ..., trace_id: _Optional[str] = ...) -> None: ...

class RecordUsageResponse(_message.Message):
    __slots__ = ("usage", "replayed", "trace_id")
    USAGE_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    usage: Usage
    replayed: bool
    trace_id: str
    def __init__(self, usage: _Optional[_Union[Usage, _Mapping]] = ..., replayed: _Optional[bool] = ..., trace_id: _Optional[str] = ...) -> None: ...

class ClearRequest(_message.Message):
    __slots__ = ("session_id", "request_id", "expected_last_position", "workdir", "trace_id", "erase")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_LAST_POSITION_FIELD_NUMBER: _ClassVar[int]
    WORKDIR_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    ERASE_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    request_id: str
    expected_last_position: int
    workdir: str
    trace_id: str
    erase: bool
    def __init__(self, session_id: _Optional[str] = ..., request_id: _Optional[str] = ..., expected_last_position: _Optional[int] = ..., workdir: _Optional[str] = ..., trace_id: _Optional[str] = ..., erase: _Optional[bool] = ...) -> None: ...

class ClearResponse(_message.Message):
    __slots__ = ("position", "replayed", "trace_id", "events_erased", "erasure_pending")
    POSITION_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    EVENTS_ERASED_FIELD_NUMBER: _ClassVar[int]
    ERASURE_PENDING_FIELD_NUMBER: _ClassVar[int]
    position: int
    replayed: bool
    trace_id: str
    events_erased: int
    erasure_pending: bool
    def __init__(self, position: _Optional[int] = ..., replayed: _Optional[bool] = ..., trace_id: _Optional[str] = ..., events_erased: _Optional[int] = ..., erasure_pending: _Optional[bool] = ...) -> None: ...

class RecordEventRequest(_message.Message):
    __slots__ = ("session_id", "kind", "payload", "request_id", "trace_id")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    kind: EventKind
    payload: str
    request_id: str
    trace_id: str
    def __init__(self, session_id: _Optional[str] = ..., kind: _Optional[_Union[EventKind, str]] = ..., payload: _Optional[str] = ..., request_id: _Optional[str] = ..., trace_id: _Optional[str] = ...) -> None: ...

class RecordEventResponse(_message.Message):
    __slots__ = ("event_id", "replayed", "trace_id")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    event_id: int
    replayed: bool
    trace_id: str
    def __init__(self, event_id: _Optional[int] = ..., replayed: _Optional[bool] = ..., trace_id: _Optional[str] = ...) -> None: ...

class AttachRequest(_message.Message):
    __slots__ = ("session_id", "pid", "label", "ping_timeout_seconds")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    PING_TIMEOUT_SECONDS_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    pid: int
    label: str
    ping_timeout_seconds: int
    def __init__(self, session_id: _Optional[str] = ..., pid: _Optional[int] = ..., label: _Optional[str] = ..., ping_timeout_seconds: _Optional[int] = ...) -> None: ...

class AttachResponse(_message.Message):
    __slots__ = ("run_id", "lease_seconds", "pid_verified", "ping_timeout_seconds")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    PID_VERIFIED_FIELD_NUMBER: _ClassVar[int]
    PING_TIMEOUT_SECONDS_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    lease_seconds: int
    pid_verified: bool
    ping_timeout_seconds: int
    def __init__(self, run_id: _Optional[str] = ..., lease_seconds: _Optional[int] = ..., pid_verified: _Optional[bool] = ..., ping_timeout_seconds: _Optional[int] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("session_id", "after_position", "incarnation", "batch", "pid")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    AFTER_POSITION_FIELD_NUMBER: _ClassVar[int]
    INCARNATION_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    after_position: int
    incarnation: str
    batch: bool
    pid: int
    def __init__(self, session_id: _Optional[str] = ..., after_position: _Optional[int] = ..., incarnation: _Optional[str] = ..., batch: _Optional[bool] = ..., pid: _Optional[int] = ...) -> None: ...

class TailEdit(_message.Message):
    __slots__ = ("removed_positions",)
    REMOVED_POSITIONS_FIELD_NUMBER: _ClassVar[int]
    removed_positions: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, removed_positions: _Optional[_Iterable[int]] = ...) -> None: ...

class WatchResponse(_message.Message):
    __slots__ = ("message", "position", "cleared", "incarnation", "edit", "erased", "events")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    CLEARED_FIELD_NUMBER: _ClassVar[int]
    INCARNATION_FIELD_NUMBER: _ClassVar[int]
    EDIT_FIELD_NUMBER: _ClassVar[int]
    ERASED_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    message: Message
    position: int
    cleared: bool
    incarnation: str
    edit: TailEdit
    erased: bool
    events: _containers.RepeatedCompositeFieldContainer[WatchResponse]
    def __init__(self, message: _Optional[_Union[Message, _Mapping]] = ..., position: _Optional[int] = ..., cleared: _Optional[bool] = ..., incarnation: _Optional[str] = ..., edit: _Optional[_Union[TailEdit, _Mapping]] = ..., erased: _Optional[bool] = ..., events: _Optional[_Iterable[_Union[WatchResponse, _Mapping]]] = ...) -> None: ...

class ListSessionsRequest(_message.Message):
    __slots__ = ("id_contains", "limit", "page_token", "labels")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_CONTAINS_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    id_contains: str
    limit: int
    page_token: str
    labels: _containers.ScalarMap[str, str]
    def __init__(self, id_contains: _Optional[str] = ..., limit: _Optional[int] = ..., page_token: _Optional[str] = ..., labels: _Optional[_Mapping[str, str]] = ...) -> None: ...

class SessionSummary(_message.Message):
    __slots__ = ("id", "message_count", "usage", "updated_at", "workdir", "last_position", "labels", "created_at")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    WORKDIR_FIELD_NUMBER: _ClassVar[int]
    LAST_POSITION_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    id: str
    message_count: int
    usage: Usage
    updated_at: _timestamp_pb2.Timestamp
    workdir: str
    last_position: int
    labels: _containers.ScalarMap[str, str]
    created_at: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., message_count: _Optional[int] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., workdir: _Optional[str] = ..., last_position: _Optional[int] = ..., labels: _Optional[_Mapping[str, str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListSessionsResponse(_message.Message):
    __slots__ = ("sessions", "next_page_token", "total")
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.RepeatedCompositeFieldContainer[SessionSummary]
    next_page_token: str
    total: int
    def __init__(self, sessions: _Optional[_Iterable[_Union[SessionSummary, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., total: _Optional[int] = ...) -> None: ...

class GetUsageRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class ModelUsage(_message.Message):
    __slots__ = ("model", "pricing_version", "usage")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    PRICING_VERSION_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    model: str
    pricing_version: str
    usage: Usage
    def __init__(self, model: _Optional[str] = ..., pricing_version: _Optional[str] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ...) -> None: ...

class GetUsageResponse(_message.Message):
    __slots__ = ("total", "by_model")
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    BY_MODEL_FIELD_NUMBER: _ClassVar[int]
    total: Usage
    by_model: _containers.RepeatedCompositeFieldContainer[ModelUsage]
    def __init__(self, total: _Optional[_Union[Usage, _Mapping]] = ..., by_model: _Optional[_Iterable[_Union[ModelUsage, _Mapping]]] = ...) -> None: ...

class DeleteRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class DeleteResponse(_message.Message):
    __slots__ = ("events_deleted", "erasure_pending")
    EVENTS_DELETED_FIELD_NUMBER: _ClassVar[int]
    ERASURE_PENDING_FIELD_NUMBER: _ClassVar[int]
    events_deleted: int
    erasure_pending: bool
    def __init__(self, events_deleted: _Optional[int] = ..., erasure_pending: _Optional[bool] = ...) -> None: ...

class ExportRequest(_message.Message):
    __slots__ = ("session_id",)
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    def __init__(self, session_id: _Optional[str] = ...) -> None: ...

class ExportResponse(_message.Message):
    __slots__ = ("line",)
    LINE_FIELD_NUMBER: _ClassVar[int]
    line: str
    def __init__(self, line: _Optional[str] = ...) -> None: ...

class ImportRequest(_message.Message):
    __slots__ = ("lines", "mode")
    LINES_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    lines: _containers.RepeatedScalarFieldContainer[str]
    mode: ImportMode
    def __init__(self, lines: _Optional[_Iterable[str]] = ..., mode: _Optional[_Union[ImportMode, str]] = ...) -> None: ...

class ImportResponse(_message.Message):
    __slots__ = ("session_id", "events_imported")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    EVENTS_IMPORTED_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    events_imported: int
    def __init__(self, session_id: _Optional[str] = ..., events_imported: _Optional[int] = ...) -> None: ...

class GetStatsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetStatsResponse(_message.Message):
    __slots__ = ("sessions", "events", "database_bytes", "wal_bytes", "schema_version", "appends", "messages_written", "repairs", "write_failures", "commits", "active_watchers", "active_runs", "pid", "uptime_seconds", "version", "requests", "sessions_deleted", "retention_sessions_deleted", "commit_batch_requests", "commit_seconds", "erasure_pending_sessions", "request_records", "request_records_pruned", "backend", "database")
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    DATABASE_BYTES_FIELD_NUMBER: _ClassVar[int]
    WAL_BYTES_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_VERSION_FIELD_NUMBER: _ClassVar[int]
    APPENDS_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_WRITTEN_FIELD_NUMBER: _ClassVar[int]
    REPAIRS_FIELD_NUMBER: _ClassVar[int]
    WRITE_FAILURES_FIELD_NUMBER: _ClassVar[int]
    COMMITS_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_WATCHERS_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_RUNS_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    UPTIME_SECONDS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    SESSIONS_DELETED_FIELD_NUMBER: _ClassVar[int]
    RETENTION_SESSIONS_DELETED_FIELD_NUMBER: _ClassVar[int]
    COMMIT_BATCH_REQUESTS_FIELD_NUMBER: _ClassVar[int]
    COMMIT_SECONDS_FIELD_NUMBER: _ClassVar[int]
    ERASURE_PENDING_SESSIONS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_RECORDS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_RECORDS_PRUNED_FIELD_NUMBER: _ClassVar[int]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    DATABASE_FIELD_NUMBER: _ClassVar[int]
    sessions: int
    events: int
    database_bytes: int
    wal_bytes: int
    schema_version: int
    appends: int
    messages_written: int
    repairs: int
    write_failures: int
    commits: int
    active_watchers: int
    active_runs: int
    pid: int
    uptime_seconds: float
    version: str
    requests: _containers.RepeatedCompositeFieldContainer[RequestCount]
    sessions_deleted: int
    retention_sessions_deleted: int
    commit_batch_requests: int
    commit_seconds: float
    erasure_pending_sessions: int
    request_records: int
    request_records_pruned: int
    backend: str
    database: str
    def __init__(self, sessions: _Optional[int] = ..., events: _Optional[int] = ..., database_bytes: _Optional[int] = ..., wal_bytes: _Optional[int] = ..., schema_version: _Optional[int] = ..., appends: _Optional[int] = ..., messages_written: _Optional[int] = ..., repairs: _Optional[int] = ..., write_failures: _Optional[int] = ..., commits: _Optional[int] = ..., active_watchers: _Optional[int] = ..., active_runs: _Optional[int] = ..., pid: _Optional[int] = ..., uptime_seconds: _Optional[float] = ..., version: _Optional[str] = ..., requests: _Optional[_Iterable[_Union[RequestCount, _Mapping]]] = ..., sessions_deleted: _Optional[int] = ..., retention_sessions_deleted: _Optional[int] = ..., commit_batch_requests: _Optional[int] = ..., commit_seconds: _Optional[float] = ..., erasure_pending_sessions: _Optional[int] = ..., request_records: _Optional[int] = ..., request_records_pruned: _Optional[int] = ..., backend: _Optional[str] = ..., database: _Optional[str] = ...) -> None: ...

class RequestCount(_message.Message):
    __slots__ = ("method", "code", "count")
    METHOD_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    method: str
    code: str
    count: int
    def __init__(self, method: _Optional[str] = ..., code: _Optional[str] = ..., count: _Optional[int] = ...) -> None: ...

class BackupRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class BackupResponse(_message.Message):
    __slots__ = ("data", "figures")
    DATA_FIELD_NUMBER: _ClassVar[int]
    FIGURES_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    figures: BackupFigures
    def __init__(self, data: _Optional[bytes] = ..., figures: _Optional[_Union[BackupFigures, _Mapping]] = ...) -> None: ...

class BackupFigures(_message.Message):
    __slots__ = ("sessions", "events", "bytes", "schema_version")
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    BYTES_FIELD_NUMBER: _ClassVar[int]
    SCHEMA_VERSION_FIELD_NUMBER: _ClassVar[int]
    sessions: int
    events: int
    bytes: int
    schema_version: int
    def __init__(self, sessions: _Optional[int] = ..., events: _Optional[int] = ..., bytes: _Optional[int] = ..., schema_version: _Optional[int] = ...) -> None: ...

class SearchRequest(_message.Message):
    __slots__ = ("query", "raw", "session_id", "role", "since", "until", "limit", "include_cleared")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    RAW_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_CLEARED_FIELD_NUMBER: _ClassVar[int]
    query: str
    raw: bool
    session_id: str
    role: Role
    since: _timestamp_pb2.Timestamp
    until: _timestamp_pb2.Timestamp
    limit: int
    include_cleared: bool
    def __init__(self, query: _Optional[str] = ..., raw: _Optional[bool] = ..., session_id: _Optional[str] = ..., role: _Optional[_Union[Role, str]] = ..., since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., until: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., limit: _Optional[int] = ..., include_cleared: _Optional[bool] = ...) -> None: ...

class SearchResponse(_message.Message):
    __slots__ = ("hits", "truncated")
    HITS_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[SearchHit]
    truncated: bool
    def __init__(self, hits: _Optional[_Iterable[_Union[SearchHit, _Mapping]]] = ..., truncated: _Optional[bool] = ...) -> None: ...

class SearchHit(_message.Message):
    __slots__ = ("session_id", "position", "role", "created_at", "rank", "snippet", "cleared")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    ROLE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_FIELD_NUMBER: _ClassVar[int]
    CLEARED_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    position: int
    role: Role
    created_at: _timestamp_pb2.Timestamp
    rank: float
    snippet: _containers.RepeatedCompositeFieldContainer[SnippetPart]
    cleared: bool
    def __init__(self, session_id: _Optional[str] = ..., position: _Optional[int] = ..., role: _Optional[_Union[Role, str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., rank: _Optional[float] = ..., snippet: _Optional[_Iterable[_Union[SnippetPart, _Mapping]]] = ..., cleared: _Optional[bool] = ...) -> None: ...

class SnippetPart(_message.Message):
    __slots__ = ("text", "match")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    MATCH_FIELD_NUMBER: _ClassVar[int]
    text: str
    match: bool
    def __init__(self, text: _Optional[str] = ..., match: _Optional[bool] = ...) -> None: ...

class WatchAllRequest(_message.Message):
    __slots__ = ("after_event_id", "last", "resume", "batch", "pid")
    AFTER_EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    LAST_FIELD_NUMBER: _ClassVar[int]
    RESUME_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    PID_FIELD_NUMBER: _ClassVar[int]
    after_event_id: int
    last: int
    resume: bool
    batch: bool
    pid: int
    def __init__(self, after_event_id: _Optional[int] = ..., last: _Optional[int] = ..., resume: _Optional[bool] = ..., batch: _Optional[bool] = ..., pid: _Optional[int] = ...) -> None: ...

class WatchAllResponse(_message.Message):
    __slots__ = ("event_id", "session_id", "position", "message", "cleared", "started", "edit", "erased", "events")
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    CLEARED_FIELD_NUMBER: _ClassVar[int]
    STARTED_FIELD_NUMBER: _ClassVar[int]
    EDIT_FIELD_NUMBER: _ClassVar[int]
    ERASED_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    event_id: int
    session_id: str
    position: int
    message: Message
    cleared: bool
    started: bool
    edit: TailEdit
    erased: bool
    events: _containers.RepeatedCompositeFieldContainer[WatchAllResponse]
    def __init__(self, event_id: _Optional[int] = ..., session_id: _Optional[str] = ..., position: _Optional[int] = ..., message: _Optional[_Union[Message, _Mapping]] = ..., cleared: _Optional[bool] = ..., started: _Optional[bool] = ..., edit: _Optional[_Union[TailEdit, _Mapping]] = ..., erased: _Optional[bool] = ..., events: _Optional[_Iterable[_Union[WatchAllResponse, _Mapping]]] = ...) -> None: ...

class GetUsageReportRequest(_message.Message):
    __slots__ = ("since", "until", "by_session")
    SINCE_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    BY_SESSION_FIELD_NUMBER: _ClassVar[int]
    since: _timestamp_pb2.Timestamp
    until: _timestamp_pb2.Timestamp
    by_session: bool
    def __init__(self, since: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., until: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., by_session: _Optional[bool] = ...) -> None: ...

class GetUsageReportResponse(_message.Message):
    __slots__ = ("rows", "truncated")
    ROWS_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    rows: _containers.RepeatedCompositeFieldContainer[UsageReportRow]
    truncated: bool
    def __init__(self, rows: _Optional[_Iterable[_Union[UsageReportRow, _Mapping]]] = ..., truncated: _Optional[bool] = ...) -> None: ...

class UsageReportRow(_message.Message):
    __slots__ = ("day", "model", "pricing_version", "usage", "session_id", "events")
    DAY_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    PRICING_VERSION_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    day: str
    model: str
    pricing_version: str
    usage: Usage
    session_id: str
    events: int
    def __init__(self, day: _Optional[str] = ..., model: _Optional[str] = ..., pricing_version: _Optional[str] = ..., usage: _Optional[_Union[Usage, _Mapping]] = ..., session_id: _Optional[str] = ..., events: _Optional[int] = ...) -> None: ...

class EditTailRequest(_message.Message):
    __slots__ = ("session_id", "remove_last", "after_position", "replacements", "expected_last_position", "request_id", "workdir", "run_id", "trace_id", "tool_policy", "discard_pending")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    REMOVE_LAST_FIELD_NUMBER: _ClassVar[int]
    AFTER_POSITION_FIELD_NUMBER: _ClassVar[int]
    REPLACEMENTS_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_LAST_POSITION_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    WORKDIR_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_POLICY_FIELD_NUMBER: _ClassVar[int]
    DISCARD_PENDING_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    remove_last: int
    after_position: int
    replacements: _containers.RepeatedCompositeFieldContainer[Message]
    expected_last_position: int
    request_id: str
    workdir: str
    run_id: str
    trace_id: str
    tool_policy: ToolPolicy
    discard_pending: bool
    def __init__(self, session_id: _Optional[str] = ..., remove_last: _Optional[int] = ..., after_position: _Optional[int] = ..., replacements: _Optional[_Iterable[_Union[Message, _Mapping]]] = ..., expected_last_position: _Optional[int] = ..., request_id: _Optional[str] = ..., workdir: _Optional[str] = ..., run_id: _Optional[str] = ..., trace_id: _Optional[str] = ..., tool_policy: _Optional[_Union[ToolPolicy, _Mapping]] = ..., discard_pending: _Optional[bool] = ...) -> None: ...

class EditTailResponse(_message.Message):
    __slots__ = ("removed", "edit_position", "first_position", "last_position", "replayed", "trace_id")
    REMOVED_FIELD_NUMBER: _ClassVar[int]
    EDIT_POSITION_FIELD_NUMBER: _ClassVar[int]
    FIRST_POSITION_FIELD_NUMBER: _ClassVar[int]
    LAST_POSITION_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    removed: _containers.RepeatedCompositeFieldContainer[Message]
    edit_position: int
    first_position: int
    last_position: int
    replayed: bool
    trace_id: str
    def __init__(self, removed: _Optional[_Iterable[_Union[Message, _Mapping]]] = ..., edit_position: _Optional[int] = ..., first_position: _Optional[int] = ..., last_position: _Optional[int] = ..., replayed: _Optional[bool] = ..., trace_id: _Optional[str] = ...) -> None: ...

class DeleteEntriesRequest(_message.Message):
    __slots__ = ("session_id", "client_ids", "client_id_prefix", "from_position", "to_position", "expected_last_position", "request_id", "trace_id", "discard_pending")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    CLIENT_IDS_FIELD_NUMBER: _ClassVar[int]
    CLIENT_ID_PREFIX_FIELD_NUMBER: _ClassVar[int]
    FROM_POSITION_FIELD_NUMBER: _ClassVar[int]
    TO_POSITION_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_LAST_POSITION_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    DISCARD_PENDING_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    client_ids: _containers.RepeatedScalarFieldContainer[str]
    client_id_prefix: str
    from_position: int
    to_position: int
    expected_last_position: int
    request_id: str
    trace_id: str
    discard_pending: bool
    def __init__(self, session_id: _Optional[str] = ..., client_ids: _Optional[_Iterable[str]] = ..., client_id_prefix: _Optional[str] = ..., from_position: _Optional[int] = ..., to_position: _Optional[int] = ..., expected_last_position: _Optional[int] = ..., request_id: _Optional[str] = ..., trace_id: _Optional[str] = ..., discard_pending: _Optional[bool] = ...) -> None: ...

class DeleteEntriesResponse(_message.Message):
    __slots__ = ("removed_count", "removed_positions", "edit_position", "replayed", "trace_id")
    REMOVED_COUNT_FIELD_NUMBER: _ClassVar[int]
    REMOVED_POSITIONS_FIELD_NUMBER: _ClassVar[int]
    EDIT_POSITION_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    removed_count: int
    removed_positions: _containers.RepeatedScalarFieldContainer[int]
    edit_position: int
    replayed: bool
    trace_id: str
    def __init__(self, removed_count: _Optional[int] = ..., removed_positions: _Optional[_Iterable[int]] = ..., edit_position: _Optional[int] = ..., replayed: _Optional[bool] = ..., trace_id: _Optional[str] = ...) -> None: ...

class CreateSessionRequest(_message.Message):
    __slots__ = ("session_id", "workdir", "state", "labels", "tool_policy", "request_id", "trace_id")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    WORKDIR_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    TOOL_POLICY_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    workdir: str
    state: str
    labels: _containers.ScalarMap[str, str]
    tool_policy: ToolPolicy
    request_id: str
    trace_id: str
    def __init__(self, session_id: _Optional[str] = ..., workdir: _Optional[str] = ..., state: _Optional[str] = ..., labels: _Optional[_Mapping[str, str]] = ..., tool_policy: _Optional[_Union[ToolPolicy, _Mapping]] = ..., request_id: _Optional[str] = ..., trace_id: _Optional[str] = ...) -> None: ...

class CreateSessionResponse(_message.Message):
    __slots__ = ("session", "replayed", "trace_id")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    session: Session
    replayed: bool
    trace_id: str
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ..., replayed: _Optional[bool] = ..., trace_id: _Optional[str] = ...) -> None: ...

class ForkSessionRequest(_message.Message):
    __slots__ = ("source_session_id", "session_id", "up_to_position", "workdir", "labels", "request_id", "trace_id")
    class LabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SOURCE_SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    UP_TO_POSITION_FIELD_NUMBER: _ClassVar[int]
    WORKDIR_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    source_session_id: str
    session_id: str
    up_to_position: int
    workdir: str
    labels: _containers.ScalarMap[str, str]
    request_id: str
    trace_id: str
    def __init__(self, source_session_id: _Optional[str] = ..., session_id: _Optional[str] = ..., up_to_position: _Optional[int] = ..., workdir: _Optional[str] = ..., labels: _Optional[_Mapping[str, str]] = ..., request_id: _Optional[str] = ..., trace_id: _Optional[str] = ...) -> None: ...

class ForkSessionResponse(_message.Message):
    __slots__ = ("session", "entries_copied", "replayed", "trace_id")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    ENTRIES_COPIED_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    session: Session
    entries_copied: int
    replayed: bool
    trace_id: str
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ..., entries_copied: _Optional[int] = ..., replayed: _Optional[bool] = ..., trace_id: _Optional[str] = ...) -> None: ...

class UpdateSessionRequest(_message.Message):
    __slots__ = ("session_id", "state_deltas", "set_labels", "remove_labels", "tool_policy", "expected_last_position", "request_id", "trace_id")
    class SetLabelsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_DELTAS_FIELD_NUMBER: _ClassVar[int]
    SET_LABELS_FIELD_NUMBER: _ClassVar[int]
    REMOVE_LABELS_FIELD_NUMBER: _ClassVar[int]
    TOOL_POLICY_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_LAST_POSITION_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    state_deltas: _containers.RepeatedCompositeFieldContainer[StateDelta]
    set_labels: _containers.ScalarMap[str, str]
    remove_labels: _containers.RepeatedScalarFieldContainer[str]
    tool_policy: ToolPolicy
    expected_last_position: int
    request_id: str
    trace_id: str
    def __init__(self, session_id: _Optional[str] = ..., state_deltas: _Optional[_Iterable[_Union[StateDelta, _Mapping]]] = ..., set_labels: _Optional[_Mapping[str, str]] = ..., remove_labels: _Optional[_Iterable[str]] = ..., tool_policy: _Optional[_Union[ToolPolicy, _Mapping]] = ..., expected_last_position: _Optional[int] = ..., request_id: _Optional[str] = ..., trace_id: _Optional[str] = ...) -> None: ...

class UpdateSessionResponse(_message.Message):
    __slots__ = ("session", "replayed", "trace_id")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    REPLAYED_FIELD_NUMBER: _ClassVar[int]
    TRACE_ID_FIELD_NUMBER: _ClassVar[int]
    session: Session
    replayed: bool
    trace_id: str
    def __init__(self, session: _Optional[_Union[Session, _Mapping]] = ..., replayed: _Optional[bool] = ..., trace_id: _Optional[str] = ...) -> None: ...

class GetScopeStatesRequest(_message.Message):
    __slots__ = ("scopes",)
    SCOPES_FIELD_NUMBER: _ClassVar[int]
    scopes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, scopes: _Optional[_Iterable[str]] = ...) -> None: ...

class GetScopeStatesResponse(_message.Message):
    __slots__ = ("states",)
    STATES_FIELD_NUMBER: _ClassVar[int]
    states: _containers.RepeatedCompositeFieldContainer[ScopeState]
    def __init__(self, states: _Optional[_Iterable[_Union[ScopeState, _Mapping]]] = ...) -> None: ...

class EndRunRequest(_message.Message):
    __slots__ = ("run_id",)
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class EndRunResponse(_message.Message):
    __slots__ = ("was_live", "session_id", "cause")
    WAS_LIVE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    CAUSE_FIELD_NUMBER: _ClassVar[int]
    was_live: bool
    session_id: str
    cause: str
    def __init__(self, was_live: _Optional[bool] = ..., session_id: _Optional[str] = ..., cause: _Optional[str] = ...) -> None: ...

class PingRunRequest(_message.Message):
    __slots__ = ("run_id",)
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class PingRunResponse(_message.Message):
    __slots__ = ("ping_timeout_seconds",)
    PING_TIMEOUT_SECONDS_FIELD_NUMBER: _ClassVar[int]
    ping_timeout_seconds: int
    def __init__(self, ping_timeout_seconds: _Optional[int] = ...) -> None: ...
