// Finding a workspace's daemon (docs/PROTOCOL.md "Discovery"): the endpoint file
// `.claw/endpoint.json` the daemon writes, else `.claw/sessiond.sock`; and checking that what
// listens there belongs to this user before sending anything.
import * as fs from "node:fs";
import * as path from "node:path";
import { UntrustedPeerError, UnavailableError } from "./errors";

/** What `.claw/endpoint.json` says (fields this client reads). */
export interface Endpoint {
  /** Absolute path of the daemon's Unix socket. */
  socket: string;
  /** The daemon's process id. */
  pid: number;
  /** The daemon's version. */
  version: string;
}

/**
 * The workspace folder (docs/PROTOCOL.md "Discovery"): `start` or its nearest parent holding
 * `.claw`, with symlinks resolved. That `.claw` must be yours (owned by your uid; root's by root;
 * a symbolic link and the folder it points to both): another user's ends the search in an
 * {@link UntrustedPeerError} naming it and its owner, before anything is sent, and is never
 * skipped for one further up. One of yours that is not a folder is passed over. `named`: the
 * caller named `start` (the `workspace` option), so root accepts a `.claw` of any owner in
 * `start` itself; the folders above are searched by the rule all the same.
 */
export function findWorkspace(start: string = process.cwd(), named = false): string {
  const first = fs.realpathSync(start);
  const me = uid();
  for (let dir = first; ; ) {
    const claw = path.join(dir, ".claw");
    const found = clawOwners(claw);
    if (found) {
      const trusted = named && me === 0 && dir === first;
      const foreign = found.owners.find((owner) => owner !== me);
      if (foreign !== undefined && !trusted) {
        throw new UntrustedPeerError(
          `${claw} is owned by ${userLabel(foreign)}, not by you (${userLabel(me)}): refusing the workspace found ` +
            `from ${first}, whose daemon that user controls; nothing was sent. Name the workspace to use ` +
            `(the workspace option), or remove ${claw}`,
          -1,
          "UNTRUSTED_PEER",
        );
      }
      if (found.isFolder) return dir;
    }
    const up = path.dirname(dir);
    if (up === dir) return first;
    dir = up;
  }
}

/** Who owns `claw` (the entry, and for a link also its target) and is it a folder; undefined when absent. */
function clawOwners(claw: string): { owners: number[]; isFolder: boolean } | undefined {
  let entry: fs.Stats;
  try {
    entry = fs.lstatSync(claw);
  } catch {
    return undefined; // absent, or in a folder you cannot search
  }
  if (!entry.isSymbolicLink()) return { owners: [entry.uid], isFolder: entry.isDirectory() };
  try {
    const target = fs.statSync(claw);
    return { owners: [entry.uid, target.uid], isFolder: target.isDirectory() };
  } catch {
    return { owners: [entry.uid], isFolder: false }; // a dangling link
  }
}

/** `uid 1000 (alice)` from /etc/passwd (read at most 1 MiB of it), or `uid 1000` when it has no name there. */
function userLabel(id: number): string {
  try {
    const fd = fs.openSync("/etc/passwd", "r");
    try {
      const buf = Buffer.alloc(1024 * 1024);
      const text = buf.subarray(0, fs.readSync(fd, buf, 0, buf.length, 0)).toString("utf8");
      for (const line of text.split("\n")) {
        const fields = line.split(":");
        if (fields.length > 2 && fields[2] === String(id)) return `uid ${id} (${fields[0]})`;
      }
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // no password file: the number alone
  }
  return `uid ${id}`;
}

function uid(): number {
  return typeof process.getuid === "function" ? process.getuid() : -1;
}

/** Refuses a file or folder that is a symlink, not ours, or writable by others. */
function checkOwned(p: string, what: string, kind: "dir" | "file" | "socket"): fs.Stats {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(p);
  } catch {
    throw new UnavailableError(`no ${what} at ${p}: no daemon runs for this workspace`, -1, "DAEMON_UNAVAILABLE");
  }
  const okKind = kind === "dir" ? st.isDirectory() : kind === "file" ? st.isFile() : st.isSocket();
  if (!okKind) throw new UntrustedPeerError(`${what} ${p} is not a ${kind} (a symlink or something else)`, -1, "UNTRUSTED_PEER");
  if (st.uid !== uid()) throw new UntrustedPeerError(`${what} ${p} belongs to uid ${st.uid}, not to you`, -1, "UNTRUSTED_PEER");
  if (kind !== "socket" && (st.mode & 0o022) !== 0) {
    throw new UntrustedPeerError(`${what} ${p} is writable by others (mode ${(st.mode & 0o777).toString(8)})`, -1, "UNTRUSTED_PEER");
  }
  return st;
}

/**
 * Reads the endpoint file (docs/PROTOCOL.md "Discovery"), or undefined when there is none or it
 * names a daemon that is gone. Refuses one others could have written.
 */
export function readEndpoint(workspace: string): Endpoint | undefined {
  const claw = path.join(workspace, ".claw");
  const file = path.join(claw, "endpoint.json");
  if (!fs.existsSync(file)) return undefined;
  checkOwned(claw, "folder", "dir");
  const st = checkOwned(file, "endpoint file", "file");
  if (st.size > 64 * 1024) throw new UntrustedPeerError(`endpoint file ${file} is over 64 KiB`, -1, "UNTRUSTED_PEER");
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  let data: Record<string, unknown>;
  try {
    data = JSON.parse(fs.readFileSync(fd, "utf8")) as Record<string, unknown>;
  } catch {
    return undefined; // being replaced, or torn by a crash: the path rule applies
  } finally {
    fs.closeSync(fd);
  }
  if (data.format !== 1) throw new UnavailableError(`endpoint file ${file} has format ${String(data.format)}, this client knows 1`, -1, "DAEMON_UNAVAILABLE");
  const socket = data.socket;
  if (typeof socket !== "string" || !path.isAbsolute(socket)) {
    throw new UnavailableError(`endpoint file ${file} names no absolute socket path`, -1, "DAEMON_UNAVAILABLE");
  }
  const pid = Number(data.pid ?? 0);
  if (!pidAlive(pid)) return undefined; // a killed daemon's leftover
  return { socket, pid, version: String(data.version ?? "") };
}

/**
 * The socket to dial for a workspace: the endpoint file's, else `.claw/sessiond.sock` (the
 * path rule's first case; a daemon for a workspace whose socket path would not fit says where
 * it listens in the endpoint file).
 */
export function socketPath(workspace: string): string {
  return readEndpoint(workspace)?.socket ?? path.join(workspace, ".claw", "sessiond.sock");
}

/** Refuses a `.claw` folder that is a link, not yours, or writable by others (before a daemon is started there). */
export function checkOwnedFolder(p: string): void {
  checkOwned(p, "folder", "dir");
}

/** Checks the socket and its folder belong to this user before any byte is sent. */
export function checkPeer(socket: string): void {
  checkOwned(path.dirname(socket), "socket folder", "dir");
  checkOwned(socket, "socket", "socket");
}

/** Is a process with this pid alive? */
export function pidAlive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}
