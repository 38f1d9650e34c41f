"""The kernel's word on a local client: does a declared pid hold a connection to our socket, and is it still there.

A run's liveness must not rest on the client answering anything (a blocked
event loop answers nothing). Two facts the kernel keeps for us instead:

- **Which processes are connected to the daemon's Unix socket.** The
  ``sock_diag`` netlink interface (``NETLINK_SOCK_DIAG``, ``AF_UNIX``) lists
  the connected sockets that share the listening socket's file (the
  daemon's end of each connection) with the inode of the peer's end; a pid
  whose ``/proc/<pid>/fd/`` holds one of those peer inodes is connected to
  this daemon. That is what :func:`verified_start` checks for the pid an
  Attach declares: a client in another pid namespace (a container sharing
  the socket), or one that names another process, is not verified.
- **Whether that process still exists.** ``/proc/<pid>/stat`` gives its start
  time; a pid that is gone, a zombie, or reused by a newer process (another
  start time) is not the process that attached (:func:`still_running`).

Where the kernel cannot tell (no ``sock_diag``, no ``/proc``, a process of
another user), the pid is simply not verified and the run lives by its
connection alone. Linux only; elsewhere nothing is verified.

Must never: import grpc, or block for long (the listing is one netlink
dump; callers run it in a thread).
"""

from __future__ import annotations

import errno
import os
import socket
import struct
from pathlib import Path
from typing import Final

from .lifecycle import process_start_time

__all__ = ["connected_peer_inodes", "still_running", "verified_start"]

_NETLINK_SOCK_DIAG: Final = 4
_SOCK_DIAG_BY_FAMILY: Final = 20
_NLM_F_REQUEST: Final = 0x1
_NLM_F_DUMP: Final = 0x300
_NLMSG_ERROR: Final = 2
_NLMSG_DONE: Final = 3
_TCP_ESTABLISHED: Final = 1
_UDIAG_SHOW_VFS: Final = 0x2
_UDIAG_SHOW_PEER: Final = 0x4
_UNIX_DIAG_VFS: Final = 1
_UNIX_DIAG_PEER: Final = 2
_NLMSGHDR: Final = struct.Struct("=IHHII")
_UNIX_DIAG_REQ: Final = struct.Struct("=BBHIIIII")
_UNIX_DIAG_MSG: Final = struct.Struct("=BBBBIII")
_RTATTR: Final = struct.Struct("=HH")
#: Stop reading a dump after this many bytes (a bound, not an expected size).
_MAX_DUMP_BYTES: Final = 64 * 1024 * 1024


def _align(n: int) -> int:
    return (n + 3) & ~3


def connected_peer_inodes(socket_inode: int) -> set[int] | None:
    """Inodes of the client ends of the connections to the listening socket whose file has ``socket_inode``.

    None when the kernel cannot be asked (no ``sock_diag`` for Unix sockets).
    """
    try:
        nl = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC, _NETLINK_SOCK_DIAG)
    except (OSError, AttributeError):
        return None
    with nl:
        request = _UNIX_DIAG_REQ.pack(
            socket.AF_UNIX, 0, 0, 1 << _TCP_ESTABLISHED, 0, _UDIAG_SHOW_VFS | _UDIAG_SHOW_PEER, 0, 0
        )
        header = _NLMSGHDR.pack(_NLMSGHDR.size + len(request), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST | _NLM_F_DUMP, 1, 0)
        try:
            nl.settimeout(2.0)
            nl.sendto(header + request, (0, 0))
            return _read_dump(nl, socket_inode)
        except OSError:
            return None


def _read_dump(nl: socket.socket, socket_inode: int) -> set[int] | None:
    peers: set[int] = set()
    read = 0
    while read < _MAX_DUMP_BYTES:
        data = nl.recv(1 << 16)
        read += len(data)
        offset = 0
        while offset + _NLMSGHDR.size <= len(data):
            length, kind, _flags, _seq, _pid = _NLMSGHDR.unpack_from(data, offset)
            if length < _NLMSGHDR.size:
                return None
            if kind == _NLMSG_DONE:
                return peers
            if kind == _NLMSG_ERROR:
                return None
            vfs_inode, peer = _attributes(data[offset + _NLMSGHDR.size + _UNIX_DIAG_MSG.size : offset + length])
            if vfs_inode == socket_inode and peer:
                peers.add(peer)
            offset += _align(length)
    return None


def _attributes(body: bytes) -> tuple[int, int]:
    """(inode of the socket's file, inode of the peer) from a unix_diag message's attributes (0: absent)."""
    vfs_inode = peer = 0
    offset = 0
    while offset + _RTATTR.size <= len(body):
        length, kind = _RTATTR.unpack_from(body, offset)
        if length < _RTATTR.size:
            break
        value = body[offset + _RTATTR.size : offset + length]
        if kind == _UNIX_DIAG_VFS and len(value) >= 4:
            vfs_inode = struct.unpack_from("=I", value)[0]
        elif kind == _UNIX_DIAG_PEER and len(value) >= 4:
            peer = struct.unpack_from("=I", value)[0]
        offset += _align(length)
    return vfs_inode, peer


def _socket_inodes_of(pid: int) -> set[int]:
    """Inodes of the sockets ``pid`` holds open (empty if its descriptors cannot be read)."""
    found: set[int] = set()
    folder = f"/proc/{pid}/fd"
    try:
        names = os.listdir(folder)
    except OSError:
        return found
    for name in names:
        try:
            target = os.readlink(f"{folder}/{name}")
        except OSError:
            continue
        if target.startswith("socket:[") and target.endswith("]"):
            found.add(int(target[8:-1]))
    return found


def verified_start(pid: int, socket_path: Path) -> int:
    """The start time of ``pid`` if the kernel says it holds a connection to the daemon's socket, else 0.

    Blocking (one netlink dump and a look at the process's descriptors): run it in a thread.
    """
    if pid <= 0:
        return 0
    try:
        socket_inode = os.stat(socket_path, follow_symlinks=False).st_ino
    except OSError:
        return 0
    start = process_start_time(pid)
    if not start:
        return 0
    peers = connected_peer_inodes(socket_inode)
    if not peers or not (peers & _socket_inodes_of(pid)):
        return 0
    return start if process_start_time(pid) == start else 0


def still_running(pid: int, start: int) -> bool:
    """True while the process ``pid`` that started at ``start`` exists and has not exited (not a zombie)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError as exc:
        return exc.errno not in (errno.ENOENT, errno.ESRCH)  # cannot look (not Linux?): do not call it gone
    fields = data[data.rfind(b")") + 2 :].split()
    if not fields or fields[0] in (b"Z", b"X"):
        return False
    return process_start_time(pid) == start
