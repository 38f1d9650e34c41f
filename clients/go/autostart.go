package sessiond

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
)

// Auto-start (docs/PROTOCOL.md "Auto-start").
const (
	autostartWait     = 20 * time.Second
	autostartPoll     = 200 * time.Millisecond
	autostartIdleExit = "600"
	// earlyOutputMax: .claw/sessiond.stderr is emptied when it grew beyond this.
	earlyOutputMax = 64 * 1024
)

func (c *Client) daemonCommand() ([]string, error) {
	if len(c.o.daemonCmd) > 0 {
		return c.o.daemonCmd, nil
	}
	exe, err := exec.LookPath("claw-sessiond")
	if err != nil {
		return nil, newError(codes.Unavailable, ReasonDaemonUnavailable, fmt.Sprintf(
			"cannot start claw-sessiond for %s: no claw-sessiond command on PATH. Install it (pipx install "+
				"claw-sessiond), or start it: claw-sessiond serve --workspace %s", c.workspace, c.workspace), err)
	}
	return []string{exe}, nil
}

// spawn starts a daemon for the workspace, detached (own session, stdin /dev/null, stdout and
// stderr appended to .claw/sessiond.stderr opened without following links).
func (c *Client) spawn() (*exec.Cmd, error) {
	folder := filepath.Join(c.workspace, clawDir)
	if problem := folderProblem(folder, trustedUIDs(c.workspace, filepath.Join(folder, socketName))); problem != "" {
		return nil, untrusted("refusing to start claw-sessiond: " + problem)
	}
	argv, err := c.daemonCommand()
	if err != nil {
		return nil, err
	}
	unavailable := func(err error) error {
		return newError(codes.Unavailable, ReasonDaemonUnavailable,
			fmt.Sprintf("cannot start claw-sessiond for %s: %v", c.workspace, err), err)
	}
	if err := os.Mkdir(folder, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, unavailable(err)
	}
	fd, err := unix.Open(filepath.Join(folder, "sessiond.stderr"),
		unix.O_WRONLY|unix.O_CREAT|unix.O_APPEND|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, unavailable(err)
	}
	early := os.NewFile(uintptr(fd), "sessiond.stderr")
	defer early.Close()
	if fi, err := early.Stat(); err == nil && fi.Size() > earlyOutputMax {
		_ = early.Truncate(0)
	}
	args := append(append([]string(nil), argv[1:]...), "serve", "--workspace", c.workspace,
		"--log-file", filepath.Join(folder, "sessiond.log"))
	if _, set := os.LookupEnv("CLAW_SESSIOND_IDLE_EXIT_S"); !set {
		args = append(args, "--idle-exit-s", autostartIdleExit)
	}
	cmd := exec.Command(argv[0], args...)
	cmd.Dir = c.workspace
	cmd.Stdout, cmd.Stderr = early, early
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, unavailable(err)
	}
	return cmd, nil
}

// autostart starts a daemon and waits for one to answer (ours, or another client's that won
// the workspace lock).
func (c *Client) autostart(ctx context.Context) error {
	cmd, err := c.spawn()
	if err != nil {
		return err
	}
	exited := make(chan struct{})
	var exitCode int
	watch := func(cmd *exec.Cmd) {
		exited = make(chan struct{})
		ch := exited
		go func() {
			_ = cmd.Wait()
			exitCode = cmd.ProcessState.ExitCode()
			close(ch)
		}()
	}
	watch(cmd)
	deadline := time.Now().Add(autostartWait)
	cleanExits, respawned := 0, false
	var goneSince time.Time
	for time.Now().Before(deadline) {
		c.mu.Lock()
		c.socket = discoverSocket(c.workspace)
		c.mu.Unlock()
		if c.health(ctx) == nil {
			return nil
		}
		if perr := c.takePeerErr(); perr != nil {
			return perr // the socket found belongs to another user: nothing was sent
		}
		c.dropConn()
		select {
		case <-ctx.Done():
			return ctxError(ctx, nil)
		case <-time.After(autostartPoll):
		}
		select {
		case <-exited:
		default:
			continue // ours is still starting
		}
		if exitCode == 0 && cleanExits < 3 {
			cleanExits++ // it came up and stopped again (an idle exit): start it again
			if cmd, err = c.spawn(); err != nil {
				return err
			}
			watch(cmd)
			continue
		}
		if holder := lockHolder(c.workspace); holder != 0 && holder != cmd.Process.Pid && pidExists(holder) {
			goneSince = time.Time{} // another client's daemon won the race: it will answer
			continue
		}
		if goneSince.IsZero() {
			goneSince = time.Now()
		}
		if time.Since(goneSince) < 500*time.Millisecond {
			continue
		}
		if respawned {
			break
		}
		respawned, goneSince = true, time.Time{}
		if cmd, err = c.spawn(); err != nil {
			return err
		}
		watch(cmd)
	}
	return c.autostartFailure(exited, exitCode)
}

func (c *Client) dropConn() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil {
		_ = c.conn.Close()
		c.conn = nil
	}
}

// autostartFailure quotes the last line of whichever of sessiond.log and sessiond.stderr was
// written last.
func (c *Client) autostartFailure(exited chan struct{}, code int) error {
	folder := filepath.Join(c.workspace, clawDir)
	tail, newest := "", time.Time{}
	for _, name := range []string{"sessiond.log", "sessiond.stderr"} {
		p := filepath.Join(folder, name)
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		if line := lastLine(p); line != "" && !fi.ModTime().Before(newest) {
			tail, newest = line, fi.ModTime()
		}
	}
	detail := fmt.Sprintf(" within %s", autostartWait)
	select {
	case <-exited:
		if code != 0 {
			detail = fmt.Sprintf(" (daemon exited with %d)", code)
		}
	default:
	}
	if tail == "" {
		tail = "(none)"
	}
	return newError(codes.Unavailable, ReasonDaemonUnavailable, fmt.Sprintf(
		"claw-sessiond for %s did not come up%s; last log line: %s; see %s",
		c.workspace, detail, tail, filepath.Join(folder, "sessiond.log")), nil)
}

func lastLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > 64*1024 {
		_, _ = f.Seek(-64*1024, 2)
	}
	last := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024)
	for sc.Scan() {
		if t := strings.TrimSpace(sc.Text()); t != "" {
			last = t
		}
	}
	return last
}
