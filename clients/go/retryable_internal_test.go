package sessiond

import (
	"errors"
	"testing"

	"google.golang.org/grpc/codes"
)

// The reasons a daemon sends in trouble map by docs/PROTOCOL.md's rule: the same code and reason
// the daemon sends give the same Error, reason and retryability. Each is also provoked from a
// live daemon in trouble_test.go (a full disk, a stop, a held write lock, an overwritten file).
func TestReasonsTheDaemonSendsInTroubleMapByTheProtocolsRule(t *testing.T) {
	cases := []struct {
		code      codes.Code
		reason    Reason
		retryable bool
	}{
		{codes.ResourceExhausted, ReasonStorageFull, false},
		{codes.ResourceExhausted, ReasonTooManyStreams, true},
		{codes.Unavailable, ReasonStorageUnavailable, true},
		{codes.Unavailable, ReasonShuttingDown, true},
		{codes.Unavailable, ReasonCorruptDatabase, false},
		{codes.Internal, ReasonInternal, false},
		{codes.Unauthenticated, ReasonUnauthenticated, false},
		{codes.Canceled, ReasonDaemonUnavailable, true},
	}
	for _, tc := range cases {
		err := error(fromParts(tc.code, "m", string(tc.reason), map[string]string{"k": "v"}))
		var e *Error
		if !errors.As(err, &e) || !errors.Is(err, tc.reason) || e.Code != tc.code || IsRetryable(err) != tc.retryable ||
			e.Metadata["k"] != "v" {
			t.Errorf("%s/%s: %+v retryable %v", tc.code, tc.reason, e, IsRetryable(err))
		}
	}
}
