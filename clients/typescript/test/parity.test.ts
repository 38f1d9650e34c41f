// The TypeScript client at parity with the Python one, against real daemons: every RPC, an
// AbortSignal and a deadline on every call, the endpoint file reread after a lost connection, calls
// made while the daemon stops retried, auto-start after kill -9, streams released on `break`, and
// text UTF-8 cannot carry refused before sending.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  DeadlineError,
  EventKind,
  ImportMode,
  InvalidRequestError,
  Role,
  SessionClient,
  UnavailableError,
  UntrustedPeerError,
  assistant,
  roleName,
  tool,
  user,
} from "../src";
import { Daemon, PYTHON, sleep, tempWorkspace } from "./daemon";

const daemons: Daemon[] = [];
after(async () => {
  for (const d of daemons) await d.kill9();
});

async function started(args: string[] = [], workspace = tempWorkspace()): Promise<Daemon> {
  const d = await new Daemon(workspace, args).start();
  daemons.push(d);
  return d;
}

/** Waits (at most `ms`) until `check` holds. */
async function until(check: () => Promise<boolean> | boolean, ms = 10_000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await sleep(50);
  }
  return false;
}

function isAbort(e: unknown): boolean {
  return e instanceof Error && e.name === "AbortError";
}

describe("one shared daemon", () => {
  let d: Daemon;
  let c: SessionClient;
  before(async () => {
    d = await started();
    c = new SessionClient({ workspace: d.workspace, autostart: false, timeoutMs: 15_000 });
  });
  after(() => c.close());

  test("every RPC of the proto has a method that works against the daemon", async () => {
    const created = await c.createSession("rpc", { labels: { team: "a" }, state: '{"k":1}' });
    assert.equal(created.session?.id, "rpc");
    await c.append("rpc", [user("hello world"), assistant("", [{ id: "t1", name: "bash", arguments: "{}" }])]);
    await c.append("rpc", [tool("t1", "done")]);
    const updated = await c.updateSession("rpc", { setLabels: { stage: "two" }, stateDeltas: [{ scope: "app:x", delta: '{"n":2}' }] });
    assert.equal(updated.session?.labels.stage, "two");
    const scopes = await c.scopeStates(["app:x"]);
    assert.equal(JSON.parse(scopes.states[0].state).n, 2);
    const event = await c.recordEvent("rpc", EventKind.EVENT_KIND_ERROR, '{"error":"e"}');
    assert.ok(event);
    await c.recordUsage("rpc", { model: "m", inputTokens: 10, outputTokens: 5 });
    assert.equal((await c.usage("rpc")).total?.inputTokens, 10);
    assert.ok((await c.usageReport({ bySession: true })).rows.some((r) => r.sessionId === "rpc"));
    const hits = await c.search("hello");
    assert.deepEqual(
      hits.hits.map((h) => [h.sessionId, h.position]),
      [["rpc", 1]],
    );
    const fork = await c.forkSession("rpc", "rpc-fork", { upToPosition: 1 });
    assert.equal(fork.entriesCopied, 1);
    const edit = await c.editTail("rpc-fork", { removeLast: 1, replacements: [user("edited")] });
    assert.ok(edit);
    assert.equal((await c.load("rpc-fork")).messages.at(-1)?.content, "edited");
    await c.append("rpc-ids", [{ ...user("a"), clientId: "k/1" }, { ...user("b"), clientId: "k/2" }, { ...user("c"), clientId: "j" }]);
    const picked = await c.load("rpc-ids", { noRepair: true, clientIds: ["j", "nope"] });
    assert.deepEqual([picked.messages.map((m) => m.position), picked.complete], [[3], false]);
    const ranged = await c.load("rpc-ids", { noRepair: true, clientIdPrefix: "k/" });
    assert.deepEqual(ranged.messages.map((m) => m.position), [1, 2]);
    const back = await c.load("rpc-ids", { noRepair: true, last: 1, beforePosition: 3 });
    assert.deepEqual(back.messages.map((m) => m.position), [2]);
    const removed = await c.deleteEntries("rpc-ids", { clientIdPrefix: "k/" });
    assert.deepEqual([removed.removedPositions, removed.editPosition, removed.replayed], [[1, 2], 4, false]);
    assert.deepEqual((await c.load("rpc-ids", { noRepair: true })).messages.map((m) => m.content), ["c"]);
    const lines = await c.exportLines("rpc");
    assert.ok(lines.length > 1);
    await c.delete("rpc");
    assert.ok(!(await c.listSessions()).sessions.some((s) => s.id === "rpc"));
    const imported = await c.importLines(lines, { mode: ImportMode.IMPORT_MODE_UNSPECIFIED });
    assert.equal(imported.sessionId, "rpc");
    assert.deepEqual(
      (await c.load("rpc")).messages.map((m) => [roleName(m.role), m.content]),
      [
        ["user", "hello world"],
        ["assistant", ""],
        ["tool", "done"],
      ],
    );
    const chunks: Uint8Array[] = [];
    const figures = await c.backup((chunk) => chunks.push(chunk));
    assert.equal(
      chunks.reduce((n, b) => n + b.length, 0),
      figures.bytes,
    );
    assert.ok(figures.sessions >= 2);
    assert.ok((await c.listSessions()).sessions.some((s) => s.id === "rpc-fork"));
    const run = await c.attach("rpc");
    assert.equal((await c.pingRun(run.runId)).pingTimeoutSeconds, 0);
    await run.end();
    assert.equal((await c.endRun(run.runId)).wasLive, false);
    assert.ok(Number((await c.stats()).pid) > 0);
  });

  test("Watch and WatchAll events carry role names", async () => {
    await c.append("roles", [user("u"), assistant("a")]);
    const ac = new AbortController();
    const seen: string[] = [];
    for await (const ev of c.watch("roles", { signal: ac.signal })) {
      seen.push(ev.roleName);
      if (seen.length === 2) break;
    }
    assert.deepEqual(seen, ["user", "assistant"]);
    const all: string[] = [];
    for await (const ev of c.watchAll({ last: 2 })) {
      all.push(`${ev.sessionId} ${ev.roleName}`);
      if (all.length === 2) break;
    }
    assert.deepEqual(all, ["roles user", "roles assistant"]);
  });

  test("a break or return in a loop over Watch or WatchAll releases the stream at once", async () => {
    await c.append("rel", [user("one"), user("two")]);
    const watchers = async () => Number((await c.stats()).activeWatchers);
    assert.ok(await until(async () => (await watchers()) === 0), "watchers left open before the test");
    for await (const ev of c.watch("rel")) {
      assert.equal(ev.position, 1);
      assert.equal(await watchers(), 1);
      break;
    }
    assert.ok(await until(async () => (await watchers()) === 0, 3_000), "the Watch stream outlived the break");
    const first = async () => {
      for await (const ev of c.watchAll({ last: 1 })) return ev;
      return undefined;
    };
    assert.equal((await first())?.sessionId, "rel");
    assert.ok(await until(async () => (await watchers()) === 0, 3_000), "the WatchAll stream outlived the return");
    const it = c.watch("rel");
    await it.next();
    await it.return(undefined);
    assert.ok(await until(async () => (await watchers()) === 0, 3_000), "the Watch stream outlived return()");
  });

  test("a lone UTF-16 surrogate is refused before sending, by every call that carries text", async () => {
    const bad = "half a pair: \uD83D";
    const refused = (e: unknown) => e instanceof InvalidRequestError && e.reason === "INVALID_MESSAGE" && e.code === -1 && /surrogate/.test(e.message);
    await assert.rejects(c.append("utf", [user(bad)]), refused);
    await assert.rejects(c.append("utf", [assistant("", [{ id: "x", name: "n", arguments: `{"a":"${bad}"}` }])]), refused);
    await assert.rejects(c.createSession("utf", { labels: { k: bad } }), refused);
    await assert.rejects(c.search(bad), refused);
    const w = await c.appendStream();
    await assert.rejects(w.append("utf", [user(bad)]), refused);
    assert.equal((await w.append("utf", [user("a whole pair: \uD83D\uDE00")])).lastPosition, 1);
    w.close();
    const stored = await c.load("utf");
    assert.deepEqual(
      stored.messages.map((m) => m.content),
      ["a whole pair: \uD83D\uDE00"],
    );
  });
});

describe("a stopped daemon (SIGSTOP)", () => {
  let d: Daemon;
  let c: SessionClient;
  before(async () => {
    d = await started();
    c = new SessionClient({ workspace: d.workspace, autostart: false, timeoutMs: 15_000, retryWindowMs: 0 });
    await c.append("s", [user("x")]);
    await c.load("s");
    d.proc?.kill("SIGSTOP");
  });
  after(() => {
    d.proc?.kill("SIGCONT");
    c.close();
  });

  const calls: [string, (o: { signal?: AbortSignal; timeoutMs?: number; deadline?: Date }) => Promise<unknown>][] = [
    ["load", (o) => c.load("s", o)],
    ["append", (o) => c.append("s", [user("y")], o)],
    ["stats", (o) => c.stats(o)],
    ["listSessions", (o) => c.listSessions(o)],
    ["search", (o) => c.search("x", o)],
    ["createSession", (o) => c.createSession("n", o)],
    ["exportLines", (o) => c.exportLines("s", o)],
    ["attach", (o) => c.attach("s", o)],
    ["appendStream", async (o) => (await c.appendStream(o)).append("s", [user("z")])],
    [
      "watch",
      async (o) => {
        for await (const ev of c.watch("s", { ...o, afterPosition: 1 })) return ev;
        return "ended";
      },
    ],
  ];

  test("every call takes an AbortSignal: aborting it ends the call at once", async () => {
    for (const [name, call] of calls) {
      const ac = new AbortController();
      const t0 = Date.now();
      const pending = call({ signal: ac.signal }).then(
        (v) => v,
        (e: unknown) => e,
      );
      await sleep(100);
      ac.abort();
      const outcome = await pending;
      const ms = Date.now() - t0;
      // watch ends quietly on abort; every other call rejects with the signal's AbortError
      assert.ok(name === "watch" ? outcome === "ended" || outcome === undefined : isAbort(outcome), `${name}: ${String(outcome)}`);
      assert.ok(ms < 5_000, `${name} took ${ms} ms to end after its abort`);
    }
  });

  test("every call takes a deadline: one that passes ends the call with DeadlineError", async () => {
    for (const [name, call] of calls) {
      const t0 = Date.now();
      const opts = name === "watch" || name === "appendStream" ? { deadline: new Date(Date.now() + 300) } : { timeoutMs: 300 };
      const outcome = await call(opts).then(
        (v) => v,
        (e: unknown) => e,
      );
      const ms = Date.now() - t0;
      assert.ok(outcome instanceof DeadlineError, `${name}: ${String(outcome)}`);
      assert.ok(ms < 5_000, `${name} took ${ms} ms past a 300 ms deadline`);
    }
  });
});

describe("a daemon that goes away", () => {
  test("a client follows a daemon restarted at another socket (the endpoint file is read again)", async () => {
    const ws = tempWorkspace();
    const first = await started(["--socket", path.join(tempWorkspace("claw-sock-"), "a.sock")], ws);
    const c = new SessionClient({ workspace: ws, autostart: false, timeoutMs: 10_000, retryWindowMs: 20_000 });
    try {
      await c.append("moved", [user("to the first daemon")]);
      const before = c.socket;
      await first.stop();
      const second = await started(["--socket", path.join(tempWorkspace("claw-sock-"), "b.sock")], ws);
      await c.append("moved", [user("to the second daemon")]);
      assert.notEqual(c.socket, before);
      assert.equal(Number((await c.stats()).pid), second.proc?.pid);
      assert.equal((await c.load("moved")).messages.length, 2);
    } finally {
      c.close();
    }
  });

  test("calls made while the daemon stops (SHUTTING_DOWN, UNAVAILABLE) are retried with their request id: each stored once", async () => {
    const d = await started();
    const c = new SessionClient({ workspace: d.workspace, autostart: false, timeoutMs: 10_000, retryWindowMs: 30_000 });
    try {
      await c.append("stop", [user("warm")]);
      let sent = 0;
      let stopping = false;
      const writers = Array.from({ length: 16 }, async (_, w) => {
        for (let i = 0; i < 200 && !(stopping && sent > 300); i++) {
          sent++;
          await c.append("stop", [user(`w${w}-${i}`)]);
        }
      });
      await until(() => sent > 100);
      stopping = true;
      await d.stop();
      await d.start();
      await Promise.all(writers);
      const texts = (await c.load("stop")).messages.map((m) => m.content).slice(1);
      assert.equal(texts.length, sent, "a call was lost or stored twice");
      assert.equal(new Set(texts).size, texts.length);
    } finally {
      c.close();
    }
  });

  test("auto-start after kill -9: the next call starts a new daemon", async () => {
    const ws = tempWorkspace();
    const c = new SessionClient({ workspace: ws, command: [PYTHON, "-m", "claw_sessiond"], timeoutMs: 10_000 });
    const pids: number[] = [];
    try {
      await c.append("crash", [user("first daemon")]);
      pids.push(Number((await c.stats()).pid));
      process.kill(pids[0], "SIGKILL");
      assert.ok(await until(() => !fs.existsSync(`/proc/${pids[0]}`) || fs.readFileSync(`/proc/${pids[0]}/stat`, "utf8").includes(") Z")));
      await c.append("crash", [user("second daemon")]);
      pids.push(Number((await c.stats()).pid));
      assert.notEqual(pids[1], pids[0]);
      assert.deepEqual(
        (await c.load("crash")).messages.map((m) => [m.role, m.content]),
        [
          [Role.ROLE_USER, "first daemon"],
          [Role.ROLE_USER, "second daemon"],
        ],
      );
      assert.ok(fs.readFileSync(path.join(ws, ".claw", "sessiond.log"), "utf8").length > 0);
    } finally {
      c.close();
      for (const pid of pids.slice(1)) process.kill(pid, "SIGKILL");
    }
  });

  test("with auto-start off and no daemon ever seen, the first call fails at once", async () => {
    const c = new SessionClient({ workspace: tempWorkspace(), autostart: false, retryWindowMs: 20_000 });
    const t0 = Date.now();
    await assert.rejects(c.stats(), (e: unknown) => e instanceof UnavailableError && e.reason === "DAEMON_UNAVAILABLE" && /claw-sessiond serve/.test(e.message));
    assert.ok(Date.now() - t0 < 3_000);
    c.close();
  });
});

describe("auto-start's files in .claw/", () => {
  test("a link planted at .claw/sessiond.stderr is refused, and where it points is not written", async () => {
    const ws = tempWorkspace();
    const claw = path.join(ws, ".claw");
    fs.mkdirSync(claw, { mode: 0o700 });
    const target = path.join(tempWorkspace("claw-target-"), "victim");
    fs.writeFileSync(target, "untouched");
    fs.symlinkSync(target, path.join(claw, "sessiond.stderr"));
    const c = new SessionClient({ workspace: ws, command: [PYTHON, "-m", "claw_sessiond"], retryWindowMs: 1_000 });
    try {
      await assert.rejects(c.stats(), (e: unknown) => e instanceof UnavailableError && /sessiond\.stderr/.test(e.message));
      assert.equal(fs.readFileSync(target, "utf8"), "untouched");
      assert.ok(!fs.existsSync(path.join(claw, "sessiond.lock")), "a daemon was started");
    } finally {
      c.close();
    }
  });

  test("a .claw/ others can write is refused before a daemon is started there", async () => {
    const ws = tempWorkspace();
    const claw = path.join(ws, ".claw");
    fs.mkdirSync(claw);
    fs.chmodSync(claw, 0o777);
    const c = new SessionClient({ workspace: ws, command: [PYTHON, "-m", "claw_sessiond"], retryWindowMs: 1_000 });
    try {
      await assert.rejects(c.stats(), (e: unknown) => e instanceof UntrustedPeerError && /writable by others/.test(e.message));
      assert.deepEqual(fs.readdirSync(claw), []);
    } finally {
      c.close();
    }
  });
});


describe("auto-start waits for a health check", () => {
  test("a started daemon whose socket accepts before it answers (stopped 2 s) is waited for: the first call succeeds", async () => {
    const ws = tempWorkspace();
    const sock = path.join(ws, ".claw", "sessiond.sock");
    // The real daemon, stopped (SIGSTOP) for 2 s as soon as its socket exists: the kernel accepts
    // connections there meanwhile, but nothing answers.
    const wrapper = path.join(tempWorkspace("claw-wrap-"), "slow-daemon.sh");
    fs.writeFileSync(
      wrapper,
      `"${PYTHON}" -m claw_sessiond "$@" &\npid=$!\ni=0\n` +
        `while [ ! -S "${sock}" ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done\n` +
        `kill -STOP $pid\nsleep 2\nkill -CONT $pid\nwait $pid\n`,
      { mode: 0o700 },
    );
    // One attempt of 1 s, no retry: a client that called as soon as the socket accepted would fail.
    const c = new SessionClient({ workspace: ws, command: ["/bin/sh", wrapper], timeoutMs: 1_000, retryWindowMs: 0 });
    try {
      assert.ok(Number((await c.stats()).pid) > 0);
      await c.append("slow", [user("after the wait")]);
      assert.equal((await c.load("slow")).messages[0].content, "after the wait");
    } finally {
      c.close();
      // The daemon started here, by the pid its lock file names (a failed call never learnt it).
      const lock = path.join(ws, ".claw", "sessiond.lock");
      const pid = fs.existsSync(lock) ? Number(fs.readFileSync(lock, "utf8").trim()) : 0;
      if (pid > 0) process.kill(pid, "SIGCONT");
      if (pid > 0) process.kill(pid, "SIGKILL");
    }
  });
});
