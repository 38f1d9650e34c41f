package sessiond

import "time"

// DefaultRetryWindow is how long a call keeps retrying transient errors (the daemon starting,
// restarting or stopping) before it returns the last one.
const DefaultRetryWindow = 15 * time.Second

type options struct {
	workspace   string
	socket      string
	tcpAddr     string
	tlsCert     string
	token       string
	autostart   bool
	retryWindow time.Duration
	daemonCmd   []string
}

// Option configures a Client (functional options; see New).
type Option func(*options)

// WithWorkspace names the workspace (searched upward for .claw by the ownership rule; root may
// use another user's .claw in this very folder). Default: $CLAW_SESSIOND_WORKSPACE as is, else
// the folder found upward from the current one.
func WithWorkspace(dir string) Option { return func(o *options) { o.workspace = dir } }

// WithSocket connects to this Unix socket path instead of discovering one (no auto-start).
func WithSocket(path string) Option { return func(o *options) { o.socket = path } }

// WithTCP connects to a daemon's --tcp listener at host:port over TLS, trusting only the
// certificate in certFile ("" : the named workspace's .claw/tcp-cert.pem, else $CLAW_TLS_CERT)
// and sending token ("" : the named workspace's .claw/tcp-token, else $CLAW_TOKEN).
func WithTCP(addr, certFile, token string) Option {
	return func(o *options) { o.tcpAddr, o.tlsCert, o.token = addr, certFile, token }
}

// WithAutostart turns starting a daemon when none answers on or off (default on).
func WithAutostart(on bool) Option { return func(o *options) { o.autostart = on } }

// WithRetryWindow sets how long transient errors are retried (0: never). Default DefaultRetryWindow.
func WithRetryWindow(d time.Duration) Option { return func(o *options) { o.retryWindow = d } }

// WithDaemonCommand sets the command auto-start runs (default: claw-sessiond on PATH); the
// arguments "serve --workspace ..." are appended.
func WithDaemonCommand(argv ...string) Option {
	return func(o *options) { o.daemonCmd = append([]string(nil), argv...) }
}
