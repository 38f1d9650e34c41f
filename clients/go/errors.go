package sessiond

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrorDomain is the google.rpc.ErrorInfo domain of every error the daemon sends.
const ErrorDomain = "claw-sessiond"

// Reason is the machine-readable reason of an error (ErrorInfo.reason). A Reason is itself an
// error value, so callers test for one with errors.Is:
//
//	if errors.Is(err, sessiond.ReasonSequenceConflict) { reload and decide }
type Reason string

// Error makes a Reason usable as an errors.Is target.
func (r Reason) Error() string { return string(r) }

// The reasons the daemon sends (see the proto's ERRORS section) and those this client raises
// itself (DAEMON_UNAVAILABLE, UNTRUSTED_PEER, DEADLINE_EXCEEDED, CLIENT_CLOSED).
const (
	ReasonInvalidSessionID        Reason = "INVALID_SESSION_ID"
	ReasonInvalidMessage          Reason = "INVALID_MESSAGE"
	ReasonArgumentsNotJSON        Reason = "ARGUMENTS_NOT_JSON"
	ReasonDuplicateToolCallID     Reason = "DUPLICATE_TOOL_CALL_ID"
	ReasonEmptyBatch              Reason = "EMPTY_BATCH"
	ReasonFieldTooLarge           Reason = "FIELD_TOO_LARGE"
	ReasonInvalidUsage            Reason = "INVALID_USAGE"
	ReasonInvalidWorkdir          Reason = "INVALID_WORKDIR"
	ReasonInvalidEvent            Reason = "INVALID_EVENT"
	ReasonInvalidImport           Reason = "INVALID_IMPORT"
	ReasonRequestIDReused         Reason = "REQUEST_ID_REUSED"
	ReasonSessionNotFound         Reason = "SESSION_NOT_FOUND"
	ReasonUnknownToolCall         Reason = "UNKNOWN_TOOL_CALL"
	ReasonToolCallAlreadyAnswered Reason = "TOOL_CALL_ALREADY_ANSWERED"
	ReasonCurrencyMismatch        Reason = "CURRENCY_MISMATCH"
	ReasonSessionExists           Reason = "SESSION_EXISTS"
	ReasonRunAlreadyOwned         Reason = "RUN_ALREADY_OWNED"
	ReasonUnknownRun              Reason = "UNKNOWN_RUN"
	ReasonSequenceConflict        Reason = "SEQUENCE_CONFLICT"
	ReasonWatchLagged             Reason = "WATCH_LAGGED"
	ReasonTooManyStreams          Reason = "TOO_MANY_STREAMS"
	ReasonTooManyOpenCalls        Reason = "TOO_MANY_OPEN_CALLS"
	ReasonEditSplitsCall          Reason = "EDIT_SPLITS_CALL"
	ReasonStorageFull             Reason = "STORAGE_FULL"
	ReasonStorageUnavailable      Reason = "STORAGE_UNAVAILABLE"
	ReasonCorruptDatabase         Reason = "CORRUPT_DATABASE"
	ReasonShuttingDown            Reason = "SHUTTING_DOWN"
	ReasonClientIDExists          Reason = "CLIENT_ID_EXISTS"
	ReasonUnauthenticated         Reason = "UNAUTHENTICATED"
	ReasonInternal                Reason = "INTERNAL"
	ReasonDaemonUnavailable       Reason = "DAEMON_UNAVAILABLE"
	ReasonUntrustedPeer           Reason = "UNTRUSTED_PEER"
	ReasonDeadlineExceeded        Reason = "DEADLINE_EXCEEDED"
	ReasonClientClosed            Reason = "CLIENT_CLOSED"
)

// ErrRetryable matches (errors.Is) every transient error: the same request, sent again later
// with the same request id, may succeed and never writes twice.
var ErrRetryable = errors.New("claw-sessiond: transient error")

// Error is every error this package returns for a call: the gRPC code, the daemon's reason and
// metadata (for example "expected" and "actual" of SEQUENCE_CONFLICT, "cause" of UNKNOWN_RUN),
// and whether the request may be retried. Use errors.As to read it and errors.Is with a Reason
// (or ErrRetryable) to branch on it.
type Error struct {
	Code      codes.Code
	Reason    Reason
	Message   string
	Metadata  map[string]string
	Retryable bool
	// Err is the underlying cause, when there is one (a dial error, a context error).
	Err error
}

func (e *Error) Error() string {
	return fmt.Sprintf("claw-sessiond: %s (%s): %s", e.Code, e.Reason, e.Message)
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches the error's Reason and, for a transient error, ErrRetryable.
func (e *Error) Is(target error) bool {
	if r, ok := target.(Reason); ok {
		return r == e.Reason
	}
	return target == ErrRetryable && e.Retryable
}

// Actual is SEQUENCE_CONFLICT's "actual" metadata: the session's last position when refused.
func (e *Error) Actual() int64 {
	n, _ := strconv.ParseInt(e.Metadata["actual"], 10, 64)
	return n
}

// ReasonOf returns the Reason of err (an *Error anywhere in its chain), or "".
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// IsRetryable reports whether err is transient (see ErrRetryable).
func IsRetryable(err error) bool { return errors.Is(err, ErrRetryable) }

// retryableOf is docs/PROTOCOL.md's rule: which code and reason are transient.
func retryableOf(code codes.Code, reason Reason) bool {
	switch code {
	case codes.Unavailable:
		return reason != ReasonCorruptDatabase
	case codes.Canceled, codes.DeadlineExceeded:
		return true
	case codes.ResourceExhausted:
		return reason == ReasonTooManyStreams
	}
	return false
}

func newError(code codes.Code, reason Reason, msg string, cause error) *Error {
	return &Error{Code: code, Reason: reason, Message: msg, Metadata: map[string]string{},
		Retryable: retryableOf(code, reason), Err: cause}
}

// defaultReasonOf names an error without ErrorInfo by its code.
func defaultReasonOf(code codes.Code) Reason {
	switch code {
	case codes.InvalidArgument:
		return ReasonInvalidMessage
	case codes.NotFound:
		return ReasonSessionNotFound
	case codes.Aborted:
		return ReasonSequenceConflict
	case codes.ResourceExhausted:
		return ReasonFieldTooLarge
	case codes.Unavailable, codes.Canceled:
		return ReasonDaemonUnavailable
	case codes.DeadlineExceeded:
		return ReasonDeadlineExceeded
	case codes.Unauthenticated:
		return ReasonUnauthenticated
	}
	return ReasonInternal
}

// fromStatus maps a status (code + the daemon's ErrorInfo, if any) to an *Error.
func fromStatus(st *status.Status) *Error {
	code := st.Code()
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == ErrorDomain {
			return fromParts(code, st.Message(), info.GetReason(), info.GetMetadata())
		}
	}
	e := newError(code, defaultReasonOf(code), st.Message(), nil)
	if code == codes.ResourceExhausted {
		// The transport refused an oversized message before the daemon saw it: final.
		e.Retryable = false
	}
	return e
}

func fromParts(code codes.Code, msg, reason string, md map[string]string) *Error {
	e := newError(code, Reason(reason), msg, nil)
	for k, v := range md {
		e.Metadata[k] = v
	}
	return e
}

// wrap maps any error of a gRPC call to an *Error (an *Error is returned as is).
func wrap(err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	if errors.Is(err, errClosed) {
		closed := newError(codes.Canceled, ReasonClientClosed, "this client is closed (Close was called); create a new one; nothing was sent", err)
		closed.Retryable = false
		return closed
	}
	st, ok := status.FromError(err)
	if !ok {
		return newError(codes.Unknown, ReasonInternal, err.Error(), err)
	}
	out := fromStatus(st)
	if st.Code() == codes.Internal && strings.Contains(st.Message(), "marshal") {
		// Refused before sending: a string field is not valid UTF-8 (proto3 requires it).
		out.Code, out.Retryable = codes.InvalidArgument, false
		out.Reason, out.Message = ReasonInvalidMessage, "the request cannot be encoded (invalid UTF-8 in a string field?): "+st.Message()
	}
	out.Err = err
	return out
}

var errClosed = errors.New("client closed")
