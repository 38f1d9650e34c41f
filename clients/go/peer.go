package sessiond

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// dialUnixChecked connects to the daemon's Unix socket and checks, before gRPC sends anything
// on that very connection, whom it talks to (docs/PROTOCOL.md "Before sending anything"): the
// socket's folder is owned by a trusted uid and writable by nobody else, the socket file is
// owned by a trusted uid, and the process listening (SO_PEERCRED of this connection) runs as a
// trusted uid. A refusal is an *Error with ReasonUntrustedPeer.
func dialUnixChecked(ctx context.Context, path, workspace string) (net.Conn, error) {
	uids := trustedUIDs(workspace, path)
	if problem := folderProblem(filepath.Dir(path), uids); problem != "" {
		return nil, untrusted(fmt.Sprintf("refusing to talk to %s: %s", path, problem))
	}
	if fi, err := os.Lstat(path); err == nil && !uids[ownerOf(fi)] {
		return nil, untrusted(fmt.Sprintf("refusing to talk to %s: the socket is owned by %s, not by %s",
			path, userLabel(ownerOf(fi)), uidsLabel(uids)))
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, err
	}
	raw, err := conn.(*net.UnixConn).SyscallConn()
	if err != nil {
		conn.Close()
		return nil, err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil || credErr != nil {
		conn.Close()
		return nil, fmt.Errorf("SO_PEERCRED on %s: %v %v", path, err, credErr)
	}
	if !uids[int(cred.Uid)] {
		conn.Close()
		return nil, untrusted(fmt.Sprintf("refusing to talk to %s: the process listening there (pid %d) runs as %s, "+
			"not as %s; nothing was sent", path, cred.Pid, userLabel(int(cred.Uid)), uidsLabel(uids)))
	}
	return conn, nil
}

// lockHeld reports whether a daemon holds the workspace lock (.claw/sessiond.lock): a
// non-blocking shared flock fails. The file is opened without following links and never created.
func lockHeld(workspace string) bool {
	fd, err := unix.Open(filepath.Join(workspace, clawDir, "sessiond.lock"), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	if err := unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB); err != nil {
		return true
	}
	_ = unix.Flock(fd, unix.LOCK_UN)
	return false
}

// lockHolder is the pid written in the lock file (0 if none or not a number).
func lockHolder(workspace string) int {
	data, err := readSmall(filepath.Join(workspace, clawDir, "sessiond.lock"), 64)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}

// readSmall reads at most limit bytes of a regular file, never through a link.
func readSmall(path string, limit int64) ([]byte, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}
