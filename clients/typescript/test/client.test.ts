// The TypeScript client against a real daemon: round trips, typed errors, request ids, chunked
// Load, AppendStream, Watch with resume, sharing, crash repair, peer checks and auto-start.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import {
  assistant,
  InvalidRequestError,
  isRetryable,
  PreconditionError,
  ResourceExhaustedError,
  Role,
  SequenceConflictError,
  SessionClient,
  tool,
  UnavailableError,
  UntrustedPeerError,
  user,
} from "../src";
import { Daemon, PYTHON, sleep, tempWorkspace, within } from "./daemon";

const daemons: Daemon[] = [];
after(async () => {
  for (const d of daemons) await d.kill9();
});

async function started(args: string[] = []): Promise<Daemon> {
  const d = await new Daemon(tempWorkspace(), args).start();
  daemons.push(d);
  return d;
}

let sharedDaemon: Promise<Daemon> | undefined;

/** One daemon for the tests that only read and write sessions of their own (each its own ids), started by the
 * first of them: each daemon costs a Python start-up. A test that stops, kills, restarts or configures its daemon,
 * or counts what the whole store holds, starts its own. */
function shared(): Promise<Daemon> {
  sharedDaemon ??= started();
  return sharedDaemon;
}

function client(d: Daemon): SessionClient {
  return new SessionClient({ workspace: d.workspace, autostart: false, timeoutMs: 15_000 });
}

describe("a real daemon", () => {
  test("append and load round trip, with positions and tool calls", async () => {
    const d = await shared();
    const c = client(d);
    try {
      const r = await c.append("s1", [user("hi"), assistant("", [{ id: "call_1", name: "bash", arguments: '{"cmd":"ls"}' }])]);
      assert.equal(r.firstPosition, 1);
      assert.equal(r.lastPosition, 2);
      await c.append("s1", [tool("call_1", "a.txt")]);
      const loaded = await c.load("s1");
      assert.deepEqual(
        loaded.messages.map((m) => [m.role, m.content, m.position]),
        [
          [Role.ROLE_USER, "hi", 1],
          [Role.ROLE_ASSISTANT, "", 2],
          [Role.ROLE_TOOL, "a.txt", 3],
        ],
      );
      assert.equal(loaded.messages[1].toolCalls[0].arguments, '{"cmd":"ls"}');
      assert.equal(loaded.session.lastPosition, 3);
      assert.equal(loaded.complete, true);
    } finally {
      c.close();
    }
  });

  test("errors are typed with the daemon's reason and metadata, and write nothing", async () => {
    const d = await shared();
    const c = client(d);
    try {
      await c.append("s", [user("one")]);
      await assert.rejects(c.append("s", [user("two")], { expectedLastPosition: 7 }), (e: unknown) => {
        assert.ok(e instanceof SequenceConflictError);
        assert.equal(e.reason, "SEQUENCE_CONFLICT");
        assert.equal(e.codeName, "ABORTED");
        assert.equal(e.metadata.actual, "1");
        assert.equal(e.retryable, false);
        return true;
      });
      await assert.rejects(
        c.append("bad/id", [user("x")]),
        (e: unknown) => e instanceof InvalidRequestError && e.reason === "INVALID_SESSION_ID" && !e.retryable,
      );
      await assert.rejects(c.append("s", [tool("nope", "x")]), (e: unknown) => e instanceof PreconditionError && e.reason === "UNKNOWN_TOOL_CALL");
      assert.equal((await c.load("s")).session.lastPosition, 1);
    } finally {
      c.close();
    }
  });

  test("errors say which are retryable: a stopped daemon's is, a bad request's is not", async () => {
    const d = await started();
    const c = new SessionClient({ workspace: d.workspace, autostart: false, timeoutMs: 5_000, retryWindowMs: 300 });
    try {
      await c.append("s", [user("one")]);
      await assert.rejects(c.append("s", [user("x")], { expectedLastPosition: 9 }), (e: unknown) => {
        assert.ok(e instanceof SequenceConflictError, String(e));
        return !e.retryable && !isRetryable(e);
      });
      await d.stop();
      await assert.rejects(c.append("s", [user("two")]), (e: unknown) => {
        assert.ok(e instanceof UnavailableError, String(e));
        assert.equal(e.retryable, true, `${e.name} ${e.reason}: ${e.message}`);
        return isRetryable(e);
      });
    } finally {
      c.close();
    }
  });

  test("a retried request id returns the first result and writes once", async () => {
    const d = await shared();
    const c = client(d);
    try {
      const first = await c.append("retried", [user("once")], { requestId: "req-1" });
      const again = await c.append("retried", [user("once")], { requestId: "req-1" });
      assert.equal(again.replayed, true);
      assert.equal(again.lastPosition, first.lastPosition);
      assert.equal((await c.load("retried")).messages.length, 1);
    } finally {
      c.close();
    }
  });

  test("Load assembles a history of many chunks", async () => {
    const d = await shared();
    const c = client(d);
    try {
      const body = "x".repeat(60_000);
      for (let i = 0; i < 10; i++) {
        await c.append("big", Array.from({ length: 10 }, (_, j) => user(`${i * 10 + j} ${body}`)));
      }
      const loaded = await c.load("big");
      assert.equal(loaded.messages.length, 100);
      assert.deepEqual(
        loaded.messages.map((m) => Number(m.content.split(" ")[0])),
        Array.from({ length: 100 }, (_, i) => i),
      );
      const tail = await c.load("big", { last: 3 });
      assert.deepEqual(
        tail.messages.map((m) => m.position),
        [98, 99, 100],
      );
      assert.equal(tail.complete, false);
    } finally {
      c.close();
    }
  });

  test("AppendStream: replies in order, one failed append does not stop the others", async () => {
    const d = await shared();
    const c = client(d);
    try {
      const w = await c.appendStream();
      const replies = Array.from({ length: 50 }, (_, i) =>
        w.append("st", [user(`m${i}`)], i === 20 ? { expectedLastPosition: 999 } : {}).then(
          (r) => r.lastPosition,
          (e: Error) => e,
        ),
      );
      const out = await Promise.all(replies);
      w.close();
      assert.ok(out[20] instanceof SequenceConflictError);
      const positions = out.filter((x): x is number => typeof x === "number");
      assert.equal(positions.length, 49);
      assert.deepEqual(positions, [...positions].sort((a, b) => a - b));
      assert.equal((await c.load("st")).messages.length, 49);
    } finally {
      c.close();
    }
  });

  test("two clients share a session without losing a message", async () => {
    const d = await shared();
    const a = client(d);
    const b = client(d);
    try {
      await Promise.all([
        Promise.all(Array.from({ length: 40 }, (_, i) => a.append("shared", [user(`a${i}`)]))),
        Promise.all(Array.from({ length: 40 }, (_, i) => b.append("shared", [user(`b${i}`)]))),
      ]);
      const texts = new Set((await a.load("shared")).messages.map((m) => m.content));
      assert.equal(texts.size, 80);
    } finally {
      a.close();
      b.close();
    }
  });

  test("Watch follows appends and resumes without a gap after the daemon restarts", async () => {
    const d = await started();
    const c = new SessionClient({ workspace: d.workspace, autostart: false, timeoutMs: 15_000, retryWindowMs: 20_000 });
    try {
      await c.append("w", [user("before")]);
      const seen: number[] = [];
      const ac = new AbortController();
      const follow = (async () => {
        for await (const ev of c.watch("w", { signal: ac.signal })) {
          seen.push(ev.position);
          if (seen.length === 4) ac.abort();
        }
      })();
      await c.append("w", [user("two")]);
      while (seen.length < 2) await sleep(20);
      await d.stop();
      await d.start();
      await c.append("w", [user("three")]);
      await c.append("w", [user("four")]);
      await within(follow, 20_000);
      assert.deepEqual(seen, [1, 2, 3, 4]);
    } finally {
      c.close();
    }
  });

  test("Watch catches up on a long history in batches and yields every event once, in order", async () => {
    const d = await started();
    const c = new SessionClient({ workspace: d.workspace, autostart: false, timeoutMs: 15_000 });
    try {
      const total = 3000;
      for (let i = 0; i < total; i += 500) {
        await c.append("catch", Array.from({ length: 500 }, (_, j) => user(`m${i + j}`)));
      }
      const seen: number[] = [];
      const ac = new AbortController();
      for await (const ev of c.watch("catch", { signal: ac.signal })) {
        assert.equal(ev.message?.content, `m${ev.position - 1}`);
        seen.push(ev.position);
        if (seen.length === total) ac.abort();
      }
      assert.deepEqual(seen, Array.from({ length: total }, (_, i) => i + 1));
    } finally {
      c.close();
    }
  });

  test("Watch names this process: on the Unix socket it holds its own share, and another process is still served", async () => {
    const d = await started(["--max-watchers", "4", "--max-watchers-per-peer", "2"]);
    const c = client(d);
    const ac = new AbortController();
    try {
      await c.append("share", [user("hello")]);
      const first = async () => {
        const it = c.watch("share", { signal: ac.signal });
        const ev = await it.next();
        return { it, position: ev.value?.position };
      };
      const held = [await first(), await first()];
      assert.deepEqual(held.map((h) => h.position), [1, 1]);
      await assert.rejects(first(), (e: unknown) => {
        assert.ok(e instanceof ResourceExhaustedError, String(e));
        assert.equal(e.reason, "TOO_MANY_STREAMS");
        assert.deepEqual(e.metadata, { limit: "2", scope: "peer" });
        assert.equal(e.retryable, true); // a slot frees up: transient, though the client does not retry it itself
        assert.equal(isRetryable(e), false);
        return true;
      });
      // A Python client process is another peer, and so are callers that name no process (their
      // one shared peer): both are served while this process holds its share.
      const script = [
        "import sys, grpc",
        "from claw_sessiond_client import SessionClient",
        "from claw_sessiond_client.api.v1 import sessiond_pb2 as pb, sessiond_pb2_grpc as pb_grpc",
        "c = SessionClient(address=sys.argv[1], autostart=False)",
        "stub = pb_grpc.SessionServiceStub(grpc.insecure_channel(sys.argv[1]))",
        "raw = next(stub.Watch(pb.WatchRequest(session_id='share')))",
        "print(next(c.watch('share')).position, raw.position)",
      ].join("\n");
      const out = execFileSync(PYTHON, ["-c", script, `unix:${d.socket}`], { timeout: 60_000 });
      assert.equal(out.toString().trim(), "1 1");
    } finally {
      ac.abort();
      c.close();
    }
  });

  test("a run's open call survives as in flight, and is repaired once after kill -9", async () => {
    const d = await started();
    const c = new SessionClient({ workspace: d.workspace, autostart: false, timeoutMs: 15_000, retryWindowMs: 20_000 });
    try {
      const run = await c.attach("crash");
      await c.append("crash", [user("go"), assistant("", [{ id: "t1", name: "bash", arguments: "{}" }])], { runId: run.runId });
      const live = await c.load("crash");
      assert.deepEqual(
        live.inFlight.map((f) => f.toolCallId),
        ["t1"],
      );
      assert.equal(live.repairs.length, 0);
      await d.kill9();
      await d.start();
      const repaired = await c.load("crash");
      assert.deepEqual(
        repaired.repairs.map((r) => r.toolCallId),
        ["t1"],
      );
      const last = repaired.messages[repaired.messages.length - 1];
      assert.equal(last.role, Role.ROLE_TOOL);
      assert.equal(last.toolCallId, "t1");
      assert.ok(last.synthetic);
      assert.equal((await c.load("crash")).repairs.length, 0);
    } finally {
      c.close();
    }
  });

  test("a socket folder others can write is refused before anything is sent", async () => {
    const d = await started();
    const dir = path.dirname(d.socket);
    fs.chmodSync(dir, 0o777);
    const c = client(d);
    try {
      await assert.rejects(c.load("s"), (e: unknown) => e instanceof UntrustedPeerError && e.reason === "UNTRUSTED_PEER");
    } finally {
      fs.chmodSync(dir, 0o700);
      c.close();
    }
  });

  test("auto-start runs a daemon for the workspace when none answers", async () => {
    const ws = tempWorkspace();
    const c = new SessionClient({ workspace: ws, command: [PYTHON, "-m", "claw_sessiond"], timeoutMs: 15_000 });
    let pid = 0;
    try {
      await c.append("auto", [user("started for me")]);
      pid = Number((await c.stats()).pid);
      assert.ok(pid > 0);
      assert.equal((await c.load("auto")).messages[0].content, "started for me");
    } finally {
      c.close();
      if (pid) process.kill(pid, "SIGKILL");
    }
  });

  test("a blocked event loop does not lose the run: the real result is stored after the block", async () => {
    const d = await started(["--lease-s", "2"]);
    const c = new SessionClient({ workspace: d.workspace, autostart: false, timeoutMs: 15_000 });
    try {
      const run = await c.attach("blocked");
      await c.append("blocked", [user("run it"), assistant("", [{ id: "slow", name: "bash", arguments: "{}" }])], { runId: run.runId });
      // Another process Loads while this one is blocked for three leases.
      const other = spawn(
        PYTHON,
        [
          "-c",
          "import sys,time; time.sleep(3); from claw_sessiond_client import SessionClient; " +
            "c=SessionClient(workspace=sys.argv[1], autostart=False); r=c.load('blocked'); " +
            "print(len(r.repairs), [f.tool_call_id for f in r.in_flight])",
          d.workspace,
        ],
        { stdio: ["ignore", "pipe", "inherit"] },
      );
      let out = "";
      other.stdout?.on("data", (b: Buffer) => (out += b.toString()));
      execFileSync("sleep", ["6"]); // the event loop does nothing for 6 s: no ping is answered
      await new Promise((r) => other.once("exit", r));
      assert.equal(out.trim(), "0 ['slow']", "the other process repaired the call of a live, blocked run");
      const stored = await c.append("blocked", [tool("slow", "done after the block")], { runId: run.runId });
      assert.ok(stored.lastPosition >= 3);
      await run.end();
    } finally {
      c.close();
    }
  });

  test("ending a run is confirmed: a Load and a new Attach right after see it gone (20 of 20)", async () => {
    const d = await shared();
    const c = client(d);
    try {
      for (let i = 0; i < 20; i++) {
        const sid = `end-${i}`;
        const run = await c.attach(sid);
        await c.append(sid, [user("go"), assistant("", [{ id: `t${i}`, name: "bash", arguments: "{}" }])], { runId: run.runId });
        await run.end();
        const after = await c.load(sid);
        assert.equal(after.inFlight.length, 0, `round ${i}: the ended run's call is still in flight`);
        assert.deepEqual(
          after.repairs.map((r) => r.toolCallId),
          [`t${i}`],
        );
        const again = await c.attach(sid);
        await again.end();
        assert.equal(await again.closed, undefined);
      }
      const gone = await c.endRun("no-such-run");
      assert.equal(gone.wasLive, false);
    } finally {
      c.close();
    }
  });

  test("a symlinked spelling of the workspace and another XDG_RUNTIME_DIR find the same daemon", async () => {
    const d = await shared();
    const link = path.join(tempWorkspace(), "link");
    fs.symlinkSync(d.workspace, link);
    const saved = process.env.XDG_RUNTIME_DIR;
    process.env.XDG_RUNTIME_DIR = tempWorkspace("claw-xdg-");
    const a = new SessionClient({ workspace: link, autostart: false });
    const b = client(d);
    try {
      await a.append("via-link", [user("through the link")]);
      assert.equal((await b.load("via-link")).messages[0].content, "through the link");
      assert.equal(a.socket, b.socket);
      assert.equal(Number((await a.stats()).pid), d.proc?.pid);
    } finally {
      if (saved === undefined) delete process.env.XDG_RUNTIME_DIR;
      else process.env.XDG_RUNTIME_DIR = saved;
      a.close();
      b.close();
    }
  });
});
