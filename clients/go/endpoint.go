package sessiond

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// Endpoint is what a running daemon says in <workspace>/.claw/endpoint.json.
type Endpoint struct {
	Format    int     `json:"format"`
	Socket    string  `json:"socket"`
	PID       int     `json:"pid"`
	Version   string  `json:"version"`
	StartedAt string  `json:"started_at"`
	Workspace string  `json:"workspace"`
	TCP       *string `json:"tcp"`
}

// maxEndpointBytes: a larger file is not an endpoint file.
const maxEndpointBytes = 64 * 1024

func pidExists(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}

// ReadEndpoint returns the endpoint of workspace's running daemon, or nil: no file, a stale one
// (its pid is gone), or one not to trust (.claw/ or the file not the caller's, a link, too
// large, not format 1).
func ReadEndpoint(workspace string) *Endpoint {
	uids := map[int]bool{os.Geteuid(): true}
	if os.Geteuid() == 0 {
		uids[workspaceOwner(workspace)] = true
	}
	folder := filepath.Join(workspace, clawDir)
	if folderProblem(folder, uids) != "" {
		return nil
	}
	fd, err := unix.Open(filepath.Join(folder, "endpoint.json"), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(fd), "endpoint.json")
	defer f.Close()
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || !uids[int(st.Uid)] || st.Size > maxEndpointBytes {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxEndpointBytes+1))
	if err != nil || len(data) > maxEndpointBytes {
		return nil
	}
	var ep Endpoint
	if json.Unmarshal(data, &ep) != nil || ep.Format != 1 || !filepath.IsAbs(ep.Socket) || ep.PID <= 0 {
		return nil
	}
	if !pidExists(ep.PID) {
		return nil
	}
	return &ep
}

// discoverSocket: the endpoint file's socket, else the path rule's.
func discoverSocket(workspace string) string {
	if ep := ReadEndpoint(workspace); ep != nil {
		return ep.Socket
	}
	return socketPathFor(workspace)
}
