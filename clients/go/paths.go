package sessiond

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// Discovery: where a workspace's daemon is (docs/PROTOCOL.md "Discovery").

const (
	clawDir      = ".claw"
	socketName   = "sessiond.sock"
	workspaceEnv = "CLAW_SESSIOND_WORKSPACE"
	// maxUnixPath is sun_path's 108 bytes without the final NUL.
	maxUnixPath = 107
)

func userLabel(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		return fmt.Sprintf("uid %d (%s)", uid, u.Username)
	}
	return fmt.Sprintf("uid %d", uid)
}

func uidsLabel(uids map[int]bool) string {
	var list []int
	for u := range uids {
		list = append(list, u)
	}
	sort.Ints(list)
	parts := make([]string, len(list))
	for i, u := range list {
		parts[i] = userLabel(u)
	}
	return strings.Join(parts, " or ")
}

func statOf(fi fs.FileInfo) *syscall.Stat_t {
	st, _ := fi.Sys().(*syscall.Stat_t)
	return st
}

func ownerOf(fi fs.FileInfo) int { return int(statOf(fi).Uid) }

func untrusted(msg string) *Error {
	return newError(0, ReasonUntrustedPeer, msg, nil)
}

// findWorkspace looks upward from start for the nearest folder holding the caller's own .claw
// (the ownership rule). named: start was named by the caller (root may then use another user's
// .claw in start itself).
func findWorkspace(start string, named bool) (string, error) {
	first, err := filepath.Abs(start)
	if err != nil {
		return "", err
	}
	uid := os.Geteuid()
	for folder := first; ; folder = filepath.Dir(folder) {
		claw := filepath.Join(folder, clawDir)
		if owners, isDir, ok := clawOwners(claw); ok {
			trusted := named && uid == 0 && folder == first
			for _, owner := range owners {
				if owner != uid && !trusted {
					return "", untrusted(fmt.Sprintf("%s is owned by %s, not by you (%s): refusing the workspace found "+
						"from %s, whose daemon that user controls; nothing was sent. Name the workspace to use "+
						"(WithWorkspace or %s), or remove %s", claw, userLabel(owner), userLabel(uid), first, workspaceEnv, claw))
				}
			}
			if isDir {
				return folder, nil
			}
		}
		if folder == filepath.Dir(folder) {
			return first, nil
		}
	}
}

// clawOwners: who owns the entry (and, for a link, its target), and is it a folder.
func clawOwners(claw string) (owners []int, isDir bool, ok bool) {
	entry, err := os.Lstat(claw)
	if err != nil {
		return nil, false, false
	}
	if entry.Mode()&fs.ModeSymlink == 0 {
		return []int{ownerOf(entry)}, entry.IsDir(), true
	}
	target, err := os.Stat(claw)
	if err != nil {
		return []int{ownerOf(entry)}, false, true
	}
	return []int{ownerOf(entry), ownerOf(target)}, target.IsDir(), true
}

// resolveWorkspace: the workspace a client talks to (named, else $CLAW_SESSIOND_WORKSPACE as is,
// else found upward from the current folder).
func resolveWorkspace(named string) (string, error) {
	if named != "" {
		return findWorkspace(named, true)
	}
	if env := os.Getenv(workspaceEnv); env != "" {
		return filepath.Abs(env)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return findWorkspace(cwd, false)
}

func ownedDir(path string, uid int) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.IsDir() && ownerOf(fi) == uid
}

func fallbackBases(runtimeDir string, uid int) []string {
	var bases []string
	if runtimeDir != "" {
		bases = append(bases, filepath.Join(runtimeDir, "claw-sessiond"))
	}
	runUser := fmt.Sprintf("/run/user/%d", uid)
	if ownedDir(runUser, uid) {
		bases = append(bases, filepath.Join(runUser, "claw-sessiond"))
	}
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && filepath.IsAbs(u.HomeDir) && ownedDir(u.HomeDir, uid) {
		bases = append(bases, filepath.Join(u.HomeDir, ".claw-sessiond"))
	}
	return append(bases, fmt.Sprintf("/tmp/claw-sessiond-%d", uid))
}

// defaultSocketPath is the path rule: where a daemon for workspace listens (and one started
// for it will).
func defaultSocketPath(workspace, runtimeDir string, uid int) string {
	abs, _ := filepath.Abs(workspace)
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		real = abs
	}
	primary := filepath.Join(real, clawDir, socketName)
	if len(primary) <= maxUnixPath {
		return primary
	}
	sum := sha256.Sum256([]byte(filepath.Join(real, clawDir)))
	name := hex.EncodeToString(sum[:])[:24] + ".sock"
	bases := fallbackBases(runtimeDir, uid)
	for _, base := range bases {
		if p := filepath.Join(base, name); len(p) <= maxUnixPath {
			return p
		}
	}
	return filepath.Join(bases[len(bases)-1], name)
}

// workspaceOwner: the owner of .claw, else of the workspace folder.
func workspaceOwner(workspace string) int {
	for _, p := range []string{filepath.Join(workspace, clawDir), workspace} {
		if fi, err := os.Lstat(p); err == nil {
			return ownerOf(fi)
		}
	}
	return os.Geteuid()
}

// trustedUIDs: the caller; for root also the workspace's owner (or, by address alone, the
// owner of the socket's folder).
func trustedUIDs(workspace, socketPath string) map[int]bool {
	uid := os.Geteuid()
	uids := map[int]bool{uid: true}
	if uid == 0 {
		if workspace != "" {
			uids[workspaceOwner(workspace)] = true
		} else if fi, err := os.Lstat(filepath.Dir(socketPath)); err == nil {
			uids[ownerOf(fi)] = true
		}
	}
	return uids
}

func socketPathFor(workspace string) string {
	uid := os.Geteuid()
	owner := uid
	if uid == 0 {
		owner = workspaceOwner(workspace)
	}
	runtimeDir := ""
	if owner == uid {
		runtimeDir = os.Getenv("XDG_RUNTIME_DIR")
	}
	return defaultSocketPath(workspace, runtimeDir, owner)
}

// folderProblem says why path cannot hold the daemon's socket or state ("" if it can; a missing
// folder is no problem): it must be owned by a trusted uid and writable by nobody else.
func folderProblem(path string, uids map[int]bool) string {
	want := uidsLabel(uids)
	link, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if err != nil {
		return fmt.Sprintf("%s: cannot inspect: %v", path, err)
	}
	if !uids[ownerOf(link)] {
		kind := "folder"
		if link.Mode()&fs.ModeSymlink != 0 {
			kind = "symbolic link"
		}
		return fmt.Sprintf("%s: the %s is owned by %s, not by %s; another user could replace the daemon's "+
			"socket or files there. Remove it, or run as its owner", path, kind, userLabel(ownerOf(link)), want)
	}
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Sprintf("%s: cannot inspect: %v", path, err)
	}
	if !info.IsDir() {
		return fmt.Sprintf("%s: exists and is not a folder", path)
	}
	if !uids[ownerOf(info)] {
		return fmt.Sprintf("%s: the folder it links to is owned by %s, not by %s; another user could replace "+
			"the daemon's socket or files there. Remove the link, or run as its owner", path, userLabel(ownerOf(info)), want)
	}
	if perm := info.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Sprintf("%s: the folder (owner %s) is writable by group or others (mode %04o); anyone who "+
			"can write there could replace the daemon's socket or plant links. Run: chmod 700 %s",
			path, userLabel(ownerOf(info)), perm, path)
	}
	return ""
}
