// Auto-start (docs/PROTOCOL.md "Auto-start"): start a daemon for a workspace when none answers,
// with its log in `.claw/sessiond.log` and its early output in `.claw/sessiond.stderr`, and wait
// for one to answer (the one started here, or another client's that won the workspace lock).
import { type ChildProcess, spawn } from "node:child_process";
import { Client, credentials, Metadata, type ServiceError } from "@grpc/grpc-js";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { checkOwnedFolder, checkPeer, pidAlive, socketPath } from "./discovery";
import { UnavailableError } from "./errors";

/** How long auto-start waits for a daemon to answer, in ms. */
export const AUTOSTART_WAIT_MS = 20_000;
/** An auto-started daemon stops after this long unused (`serve --idle-exit-s`), unless `$CLAW_SESSIOND_IDLE_EXIT_S` is set. */
export const AUTOSTART_IDLE_EXIT_S = 600;
/** The daemon's early output (a crash before its log is open) is cut when it grows past this. */
const EARLY_OUTPUT_MAX_BYTES = 64 * 1024;
/** How often the wait looks for a daemon, in ms. */
const POLL_MS = 200;
/** How long a probe connection to the socket may take, in ms. */
const PROBE_MS = 1_000;

/** How to install the daemon, for the error when its command is not found. */
export const INSTALL_HINT =
  "claw-sessiond, the daemon, is a Python package (Python 3.11+), not part of this npm package, and not " +
  "published to a package index yet. Install it from a checkout of its repository: " +
  "`python3 -m venv ~/.claw-sessiond && ~/.claw-sessiond/bin/pip install /path/to/claw-sessiond/clients/python " +
  "/path/to/claw-sessiond`, then put ~/.claw-sessiond/bin on PATH, or name the command with the `command` " +
  "option or $CLAW_SESSIOND_COMMAND";

/** The daemon command: `command`, else `$CLAW_SESSIOND_COMMAND` split on spaces, else `claw-sessiond`. */
export function daemonCommand(command?: string[]): string[] {
  const cmd = command ?? (process.env.CLAW_SESSIOND_COMMAND ?? "claw-sessiond").split(" ").filter(Boolean);
  if (cmd.length === 0) throw new UnavailableError("the daemon command is empty ($CLAW_SESSIOND_COMMAND or the command option)", -1, "DAEMON_UNAVAILABLE");
  return cmd;
}

/** The executable `name` resolves to (a path, or the first match on PATH), or undefined. */
function findExecutable(name: string): string | undefined {
  const candidates = name.includes("/") ? [name] : (process.env.PATH ?? "").split(":").map((dir) => path.join(dir || ".", name));
  for (const file of candidates) {
    try {
      fs.accessSync(file, fs.constants.X_OK);
      if (fs.statSync(file).isFile()) return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

function notInstalled(workspace: string, cmd: string[], why: string): UnavailableError {
  return new UnavailableError(
    `cannot start the daemon for ${workspace}: ${why} (command: ${cmd.join(" ")}). ${INSTALL_HINT}`,
    -1,
    "DAEMON_UNAVAILABLE",
    { workspace, command: cmd[0] },
  );
}

/** Does something accept connections at this Unix socket (within {@link PROBE_MS})? */
export function acceptsConnections(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const conn = net.connect(socket);
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      conn.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), PROBE_MS);
    conn.once("connect", () => done(true));
    conn.once("error", () => done(false));
  });
}

/** The daemon's health check: `grpc.health.v1.Health/Check`, service "" (an empty request, sent as raw bytes). */
const HEALTH_CHECK = "/grpc.health.v1.Health/Check";
/** A `HealthCheckResponse` saying SERVING (field 1, varint 1). */
const SERVING = Buffer.from([0x08, 0x01]);

/**
 * Sends the daemon's health check on `client`, within `deadline`: the call's error, else whether
 * the daemon said SERVING (NOT_SERVING: it is stopping).
 */
export function healthCheck(client: Client, deadline: Date): Promise<ServiceError | boolean> {
  const raw = (b: Buffer): Buffer => b;
  return new Promise((resolve) => {
    client.makeUnaryRequest(HEALTH_CHECK, raw, raw, Buffer.alloc(0), new Metadata(), { deadline }, (e, reply) =>
      resolve(e ?? (reply !== undefined && SERVING.equals(reply))),
    );
  });
}

/**
 * Is a daemon ready at this Unix socket: the socket and its folder yours, something accepting
 * connections there, and a health check on a fresh connection answered SERVING within
 * {@link PROBE_MS}? A stopped or hung process accepts connections (the kernel's backlog) but
 * does not answer. An untrusted socket throws (nothing is sent to it).
 */
export async function answersHealthCheck(socket: string): Promise<boolean> {
  try {
    checkPeer(socket);
  } catch (e) {
    if (e instanceof UnavailableError) return false; // no socket there (yet)
    throw e;
  }
  if (!(await acceptsConnections(socket))) return false;
  const client = new Client(`unix:${socket}`, credentials.createInsecure());
  try {
    return (await healthCheck(client, new Date(Date.now() + PROBE_MS))) === true;
  } finally {
    client.close();
  }
}

/** One daemon process started by {@link spawnDaemon}: how it ended, if it did. */
export interface Spawned {
  child: ChildProcess;
  /** The spawn's failure (ENOENT, EACCES, ...), once known. */
  error?: Error;
  /** Its exit code (or -1 for a signal), once it exited. */
  exitCode?: number;
}

/**
 * Starts a daemon for the workspace, detached (its own session, stdin from /dev/null, cwd the
 * workspace): `<command> serve --workspace <ws> --log-file <ws>/.claw/sessiond.log
 * --idle-exit-s 600` (no `--idle-exit-s` when `$CLAW_SESSIOND_IDLE_EXIT_S` is set: the daemon
 * reads it), stdout and stderr appended to `.claw/sessiond.stderr` (O_NOFOLLOW, mode 0600).
 * `.claw/` is created with mode 0700, and refused when it is another user's, a link, or writable
 * by others. A command that is not found fails here, at once, saying how to install the daemon.
 */
export function spawnDaemon(workspace: string, command?: string[]): Spawned {
  const cmd = daemonCommand(command);
  if (findExecutable(cmd[0]) === undefined) throw notInstalled(workspace, cmd, `no executable ${cmd[0]} ${cmd[0].includes("/") ? "there" : "on PATH"}`);
  const claw = path.join(workspace, ".claw");
  fs.mkdirSync(claw, { mode: 0o700, recursive: true });
  checkOwnedFolder(claw);
  const args = [...cmd.slice(1), "serve", "--workspace", workspace, "--log-file", path.join(claw, "sessiond.log")];
  if (process.env.CLAW_SESSIOND_IDLE_EXIT_S === undefined) args.push("--idle-exit-s", String(AUTOSTART_IDLE_EXIT_S));
  const early = path.join(claw, "sessiond.stderr");
  let fd: number;
  try {
    fd = fs.openSync(early, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_APPEND | fs.constants.O_NOFOLLOW, 0o600);
  } catch (e) {
    throw new UnavailableError(`cannot start the daemon for ${workspace}: cannot open ${early}: ${(e as Error).message}`, -1, "DAEMON_UNAVAILABLE");
  }
  try {
    if (fs.fstatSync(fd).size > EARLY_OUTPUT_MAX_BYTES) fs.ftruncateSync(fd, 0);
    const child = spawn(cmd[0], args, { detached: true, cwd: workspace, stdio: ["ignore", fd, fd] });
    const spawned: Spawned = { child };
    child.once("error", (e) => (spawned.error = e));
    child.once("exit", (code) => (spawned.exitCode = code ?? -1));
    child.unref();
    return spawned;
  } finally {
    fs.closeSync(fd);
  }
}

/** The pid in `.claw/sessiond.lock` if that process is alive (the daemon holding the workspace lock writes it). */
function lockHolder(workspace: string): number | undefined {
  try {
    const text = fs.readFileSync(path.join(workspace, ".claw", "sessiond.lock"), "utf8").trim();
    const pid = /^\d+$/.test(text) ? Number(text) : 0;
    return pidAlive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** The last line of whichever of the daemon's log and early output was written last. */
function lastLogLine(workspace: string): string {
  let line = "";
  let newest = -1;
  for (const name of ["sessiond.log", "sessiond.stderr"]) {
    try {
      const file = path.join(workspace, ".claw", name);
      const st = fs.statSync(file);
      const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
      try {
        const size = Math.min(st.size, 8192); // the tail only: bounded
        const buf = Buffer.alloc(size);
        fs.readSync(fd, buf, 0, size, st.size - size);
        const lines = buf.toString("utf8").trim().split("\n");
        if (lines[lines.length - 1] && st.mtimeMs >= newest) {
          line = lines[lines.length - 1];
          newest = st.mtimeMs;
        }
      } finally {
        fs.closeSync(fd);
      }
    } catch {
      // not written
    }
  }
  return line;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * Starts a daemon and waits (at most {@link AUTOSTART_WAIT_MS}) until one answers a health check
 * at the workspace's socket (the endpoint file read anew at each look; see {@link answersHealthCheck}). A daemon that exited with 0
 * (an idle exit before this client connected) is started again, three times at most; one that
 * failed while another live process holds the workspace lock lost the race to it, and the wait
 * goes on; otherwise, after 0.5 s with no daemon, one more is started, then the wait gives up,
 * quoting the last log line. A spawn that fails (the command not found) is reported at once.
 */
export async function autostart(workspace: string, command?: string[], signal?: AbortSignal): Promise<void> {
  let proc = spawnDaemon(workspace, command);
  const until = Date.now() + AUTOSTART_WAIT_MS;
  let cleanExits = 0;
  let goneSince: number | undefined;
  let respawned = false;
  for (;;) {
    if (await answersHealthCheck(socketPath(workspace))) return;
    if (signal?.aborted) throw signal.reason;
    if (proc.error) throw notInstalled(workspace, daemonCommand(command), proc.error.message);
    if (proc.exitCode === 0 && cleanExits < 3) {
      cleanExits++;
      proc = spawnDaemon(workspace, command);
    } else if (proc.exitCode !== undefined) {
      const holder = lockHolder(workspace);
      if (holder !== undefined && holder !== proc.child.pid) goneSince = undefined;
      else if (goneSince === undefined) goneSince = Date.now();
      else if (Date.now() - goneSince >= 500) {
        if (respawned) break;
        respawned = true;
        goneSince = undefined;
        proc = spawnDaemon(workspace, command);
      }
    }
    if (Date.now() > until) break;
    await sleep(POLL_MS);
  }
  const code = proc.exitCode;
  const detail = code !== undefined && code !== 0 ? ` (daemon exited with ${code})` : ` within ${AUTOSTART_WAIT_MS / 1000} s`;
  const log = path.join(workspace, ".claw", "sessiond.log");
  throw new UnavailableError(
    `claw-sessiond for ${workspace} did not come up${detail}; last log line: ${lastLogLine(workspace) || "(none)"}; see ${log}`,
    -1,
    "DAEMON_UNAVAILABLE",
  );
}
