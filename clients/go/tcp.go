package sessiond

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
)

// The --tcp listener (docs/PROTOCOL.md "TCP"): TLS trusting the daemon's certificate alone,
// server name "claw-sessiond", then the bearer token on every call.

const maxCertBytes = 64 * 1024

type tcpState struct {
	addr, workspace string
	certFile, token string // as the caller gave them
	mu              sync.Mutex
	pem             []byte
	tok             string
}

func newTCPState(o options, workspace string) (*tcpState, error) {
	t := &tcpState{addr: o.tcpAddr, workspace: workspace, certFile: o.tlsCert, token: o.token}
	if err := t.load(); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *tcpState) load() error {
	certFile := t.certFile
	if certFile == "" && t.workspace != "" {
		certFile = filepath.Join(t.workspace, clawDir, "tcp-cert.pem")
	}
	if certFile == "" {
		certFile = os.Getenv("CLAW_TLS_CERT")
	}
	if certFile == "" {
		return untrusted(fmt.Sprintf("no certificate for %s: name the daemon's .claw/tcp-cert.pem (WithTCP, "+
			"WithWorkspace or $CLAW_TLS_CERT); nothing was sent", t.addr))
	}
	pem, err := readSmall(certFile, maxCertBytes)
	if err != nil {
		return untrusted(fmt.Sprintf("cannot read the certificate %s: %v; nothing was sent", certFile, err))
	}
	tok := t.token
	if tok == "" && t.workspace != "" {
		if data, err := readSmall(filepath.Join(t.workspace, clawDir, "tcp-token"), 4096); err == nil {
			tok = strings.TrimSpace(string(data))
		}
	}
	if tok == "" {
		tok = os.Getenv("CLAW_TOKEN")
	}
	t.mu.Lock()
	t.pem, t.tok = pem, tok
	t.mu.Unlock()
	return nil
}

// reload re-reads the certificate and token after a failure (a restarted daemon has new ones)
// and reports whether the certificate changed.
func (t *tcpState) reload() bool {
	t.mu.Lock()
	before := t.pem
	t.mu.Unlock()
	if t.load() != nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return !bytes.Equal(before, t.pem)
}

func (t *tcpState) dial(common []grpc.DialOption) (*grpc.ClientConn, error) {
	t.mu.Lock()
	pem, tok := t.pem, t.tok
	t.mu.Unlock()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, untrusted("the daemon's certificate is not PEM; nothing was sent")
	}
	creds := credentials.NewTLS(&tls.Config{ServerName: "claw-sessiond", RootCAs: pool, MinVersion: tls.VersionTLS12})
	opts := append(common, grpc.WithTransportCredentials(creds), grpc.WithPerRPCCredentials(bearer(tok)))
	return grpc.NewClient("passthrough:///"+t.addr, opts...)
}

type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	if b == "" {
		return nil, nil
	}
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

// RequireTransportSecurity: the token travels only over the verified TLS connection.
func (bearer) RequireTransportSecurity() bool { return true }

// isHandshakeError: the TLS handshake failed (the listener is not the daemon).
func isHandshakeError(e *Error) bool {
	return e.Code == codes.Unavailable && (strings.Contains(e.Message, "authentication handshake failed") ||
		strings.Contains(e.Message, "x509"))
}
