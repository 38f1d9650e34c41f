// Test helper: a real claw-sessiond daemon (the Python package, `$CLAW_PYTHON -m claw_sessiond`)
// for a fresh workspace; stopped by its pid.
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

export const PYTHON = process.env.CLAW_PYTHON ?? path.resolve(__dirname, "../../../../.venv/bin/python");

export function tempWorkspace(prefix = "claw-ts-"): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Waits for `p`, at most `ms`, and clears its timer when `p` settles first: a timer left pending keeps the test
 * file's process alive until it fires, and node's test runner waits for that process to exit (a 15 s wait after a
 * daemon's stop made each file end 15 s after its last test). */
export async function within(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([p, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

export class Daemon {
  proc: ChildProcess | undefined;
  constructor(
    readonly workspace: string,
    readonly args: string[] = [],
  ) {}

  get socket(): string {
    return path.join(this.workspace, ".claw", "sessiond.sock");
  }

  /** Starts the daemon and waits (at most 20 s) until its socket accepts calls. */
  async start(): Promise<this> {
    this.proc = spawn(PYTHON, ["-m", "claw_sessiond", "serve", "--workspace", this.workspace, ...this.args], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    this.proc.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    const until = Date.now() + 20_000;
    while (Date.now() < until) {
      if (this.proc.exitCode !== null) throw new Error(`daemon exited ${this.proc.exitCode}: ${stderr}`);
      if (fs.existsSync(path.join(this.workspace, ".claw", "endpoint.json")) || fs.existsSync(this.socket)) {
        await sleep(100);
        return this;
      }
      await sleep(50);
    }
    throw new Error(`daemon did not start in 20 s: ${stderr}`);
  }

  /** SIGKILL: no graceful shutdown. */
  async kill9(): Promise<void> {
    await this.signal("SIGKILL");
  }

  /** Graceful stop (SIGTERM), waiting for the exit. */
  async stop(): Promise<void> {
    await this.signal("SIGTERM");
  }

  private async signal(sig: NodeJS.Signals): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise<void>((r) => p.once("exit", () => r()));
    p.kill(sig);
    await within(exited, 15_000);
    if (p.exitCode === null && p.signalCode === null) p.kill("SIGKILL");
  }
}
