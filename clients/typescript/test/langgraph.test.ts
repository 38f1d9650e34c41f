// ClawCheckpointSaver under a real LangGraph.js graph and a real daemon: a run stopped at an
// interrupt is resumed by a second Node process, which finds the thread in the daemon; the Python
// checkpointer reads what LangGraph.js wrote (serde type "json"), and what it writes itself with its
// default serde ("msgpack") is refused here with a CheckpointFormatError.
import assert from "node:assert/strict";
import type { RunnableConfig } from "@langchain/core/runnables";
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { after, describe, test } from "node:test";
import { SessionClient } from "../src";
import { ClawCheckpointSaver, layout } from "../src/langgraph";
import { Daemon, PYTHON, tempWorkspace } from "./daemon";
import { buildGraph } from "./langgraph_graph";

const daemons: Daemon[] = [];
after(async () => {
  for (const d of daemons) await d.stop();
});

async function started(): Promise<Daemon> {
  const d = await new Daemon(tempWorkspace("claw-lg-")).start();
  daemons.push(d);
  return d;
}

describe("LangGraph.js checkpointer", () => {
  test("an interrupted run is resumed by a second process; the Python checkpointer reads the thread, not the other way", async () => {
    const d = await started();
    const client = new SessionClient({ workspace: d.workspace, autostart: false, timeoutMs: 15_000 });
    try {
      const graph = buildGraph(client);
      const config = { configurable: { thread_id: "user/42 ✓" } };
      const first = await graph.invoke({ question: "proceed?" }, config);
      const interrupts = (first as { __interrupt__?: { value: unknown }[] }).__interrupt__;
      assert.deepEqual(interrupts?.map((i) => i.value), [{ question: "proceed?" }]);
      const paused = await graph.getState(config);
      assert.deepEqual(paused.next, ["ask"]);

      const out = execFileSync(process.execPath, [path.join(__dirname, "langgraph_graph.js"), d.workspace, "user/42 ✓", "yes"], {
        encoding: "utf8",
        timeout: 60_000,
      });
      const final = JSON.parse(out.trim().split("\n").pop() as string);
      assert.equal(final.answer, "yes");
      assert.deepEqual(final.log, ["asked proceed?", "answered yes"]);

      // This process sees what the other one stored: the thread is done, its history in one session.
      const done = await graph.getState(config);
      assert.deepEqual(done.next, []);
      assert.equal(done.values.answer, "yes");
      const [sid] = layout.sessionIds("langgraph", "user/42 ✓", "");
      assert.equal(sid, "langgraph~c~user%2F42%20%E2%9C%93~");
      const loaded = await client.load(sid, { noRepair: true });
      assert.ok(loaded.messages.length >= 4, `${loaded.messages.length} checkpoints`);
      assert.ok(loaded.messages.every((m) => m.format === layout.FORMAT_CHECKPOINT && m.clientId.length > 0));
      assert.equal(JSON.parse(loaded.messages[loaded.messages.length - 1].metadata).source, "loop");

      // The Python checkpointer reads the thread LangGraph.js wrote (its serde reads type "json"); a
      // checkpoint it writes with its default serde ("msgpack") is refused here, saying so.
      const script = [
        "import json, sys",
        "from claw_sessiond_client import SessionClient",
        "from claw_sessiond_client.contrib.langgraph import ClawCheckpointSaver",
        "from langgraph.checkpoint.base import empty_checkpoint",
        "with SessionClient(sys.argv[1], autostart=False) as c:",
        "    s = ClawCheckpointSaver(c)",
        "    cfg = {'configurable': {'thread_id': sys.argv[2]}}",
        "    t = s.get_tuple(cfg)",
        "    n = len(list(s.list(cfg)))",
        "    s.put({'configurable': {'thread_id': 'py', 'checkpoint_ns': ''}}, empty_checkpoint(), {'source': 'input', 'step': -1}, {})",
        "    print(json.dumps({'id': t.checkpoint['id'], 'answer': t.checkpoint['channel_values']['answer'], 'n': n}))",
      ].join("\n");
      const py = JSON.parse(execFileSync(PYTHON, ["-c", script, d.workspace, "user/42 ✓"], { encoding: "utf8", timeout: 60_000 }).trim());
      assert.deepEqual(py, { id: done.config.configurable?.checkpoint_id, answer: "yes", n: loaded.messages.length });
      await assert.rejects(new ClawCheckpointSaver(client).getTuple({ configurable: { thread_id: "py" } }), (err: Error) => {
        assert.equal(err.name, "CheckpointFormatError");
        assert.match(err.message, /serializer type "msgpack"/);
        return true;
      });
    } finally {
      client.close();
    }
  });

  test("an entry of a serializer type the serde cannot read is refused clearly", async () => {
    const d = await started();
    const client = new SessionClient({ workspace: d.workspace, autostart: false, timeoutMs: 15_000 });
    try {
      const saver = new ClawCheckpointSaver(client);
      const [sid] = layout.sessionIds("langgraph", "t", "");
      const item = layout.encodeCheckpoint(["msgpack", Buffer.from([0x80])], ["msgpack", Buffer.from([0x80])], undefined);
      await client.append(sid, [{ role: 5, format: layout.FORMAT_CHECKPOINT, item, clientId: "c1", metadata: "{}" }]);
      await assert.rejects(saver.getTuple({ configurable: { thread_id: "t" } }), (err: Error) => {
        assert.equal(err.name, "CheckpointFormatError");
        assert.match(err.message, /serializer type "msgpack"/);
        return true;
      });
      // A channel value whose item is not the checkpointer's is refused the same way.
      const [sid2, , bid2] = layout.sessionIds("langgraph", "t2", "");
      const cp = { v: 4, id: "c1", ts: "2026-01-01T00:00:01Z", channel_values: {}, channel_versions: { x: "1" }, versions_seen: {} };
      const cpItem = layout.encodeCheckpoint(await saver.serde.dumpsTyped(cp), await saver.serde.dumpsTyped({}), undefined);
      await client.append(sid2, [{ role: 5, format: layout.FORMAT_CHECKPOINT, item: cpItem, clientId: "c1", metadata: "{}" }]);
      await client.append(bid2, [{ role: 5, format: layout.FORMAT_BLOB, item: Buffer.from("no header"), clientId: layout.blobClientId("x", "1") }]);
      await assert.rejects(saver.getTuple({ configurable: { thread_id: "t2" } }), (err: Error) => {
        assert.equal(err.name, "CheckpointFormatError");
        assert.match(err.message, /channel value "x\/1": not an item of the LangGraph checkpointer/);
        return true;
      });
      await assert.rejects(() => saver.put({ configurable: { thread_id: "" + "x".repeat(300) } }, {} as never, {} as never, {}), RangeError);
    } finally {
      client.close();
    }
  });

  test("a daemon with a low --max-batch-messages serves a list page naming more values than its bound", async () => {
    const d = await new Daemon(tempWorkspace("claw-lg-"), ["--max-batch-messages", "5"]).start();
    daemons.push(d);
    const client = new SessionClient({ workspace: d.workspace, autostart: false, timeoutMs: 15_000 });
    try {
      const saver = new ClawCheckpointSaver(client);
      let config: RunnableConfig = { configurable: { thread_id: "t", checkpoint_ns: "" } };
      for (let i = 0; i < 4; i++) {
        const versions = Object.fromEntries([..."abcd"].map((ch) => [ch, String(i)]));
        const values = Object.fromEntries([..."abcd"].map((ch) => [ch, i]));
        const cp = { v: 4, id: `${i}`, ts: "2026-01-01T00:00:01Z", channel_values: values, channel_versions: versions, versions_seen: {} };
        config = await saver.put(config, cp, { source: "loop", step: i, parents: {} }, versions);
      }
      const got = [];
      for await (const t of saver.list({ configurable: { thread_id: "t" } }, { limit: 3 })) got.push(t.checkpoint.channel_values); // 12 values in one read
      assert.deepEqual(got, [3, 2, 1].map((i) => Object.fromEntries([..."abcd"].map((ch) => [ch, i]))));
    } finally {
      client.close();
    }
  });

  test("channels named as Object's own properties (constructor, toString) are channels like any other", async () => {
    const d = await started();
    const client = new SessionClient({ workspace: d.workspace, autostart: false, timeoutMs: 15_000 });
    try {
      const saver = new ClawCheckpointSaver(client);
      const config = { configurable: { thread_id: "proto", checkpoint_ns: "" } };
      const versions = { constructor: "1", toString: "1", a: "1" };
      const cp = { v: 4, id: "1", ts: "2026-01-01T00:00:01Z", channel_values: { a: 1 }, channel_versions: versions, versions_seen: {} };
      const stored = await saver.put(config, cp, { source: "input", step: 0, parents: {} }, versions); // constructor, toString: no value
      await saver.putWrites(stored, [["constructor", "w"]], "task");
      const got = await saver.getTuple(stored);
      assert.deepEqual(got?.checkpoint.channel_values, { a: 1 });
      assert.deepEqual(got?.pendingWrites, [["task", "constructor", "w"]]);
      const [, wid] = layout.sessionIds("langgraph", "proto", "");
      assert.deepEqual((await client.load(wid, { noRepair: true })).messages.map((e) => e.clientId), ["1/task/0"]);
      const child = { ...cp, id: "2", channel_values: { a: 1, constructor: "set" }, channel_versions: { ...versions, constructor: "2" } };
      const next = await saver.put(stored, child, { source: "loop", step: 1, parents: {} }, { constructor: "2" });
      assert.deepEqual((await saver.getTuple(next))?.checkpoint.channel_values, { a: 1, constructor: "set" });
    } finally {
      client.close();
    }
  });

  test("session ids, labels, write and blob client ids and items are the Python checkpointer's, byte for byte", () => {
    const names = ["t", "", "user/42 ✓", "a%b~c", "..", " x\n", "\u{1F600}", "\ud800", "é".repeat(90), "x".repeat(300), "\u0085 \u200b"];
    const mine = names.map((n) => [
      layout.sessionIds("p_1", n, n + "ns"),
      layout.labels("p_1", n.slice(0, 40), "ns", "writes"),
      layout.writePrefix(n, n + "task"),
      layout.writeClientId(n, "task", 3),
      layout.encodeCheckpoint(["json", Buffer.from("{}")], ["json", Buffer.from("[]")], n || undefined).toString("base64"),
      layout.encodeWrite(n, "ch\u00e9", "~", -1, ["bytes", Buffer.from([0, 10, 255])]).toString("base64"),
      layout.blobClientId(n, n + "v"),
      layout.encodeBlob(n, ["json", Buffer.from([0, 10, 255])]).toString("base64") + layout.encodeBlob(n, undefined).toString("base64"),
      layout.threadOf(layout.labels("p_1", n.slice(0, 40), n.slice(0, 40), "writes")),
    ]);
    const script = [
      "import base64, json, sys",
      "from claw_sessiond_client.contrib import _langgraph_entries as E",
      "out = []",
      "for n in json.loads(sys.stdin.read()):",
      "    out.append([list(E.session_ids('p_1', n, n + 'ns')), E.labels('p_1', n[:40], 'ns', 'writes'), E.write_prefix(n, n + 'task'),",
      "                E.write_client_id(n, 'task', 3), base64.b64encode(E.encode_checkpoint(('json', b'{}'), ('json', b'[]'), n or None)).decode(),",
      "                base64.b64encode(E.encode_write(n, 'ch\\u00e9', '~', -1, ('bytes', bytes([0, 10, 255])))).decode(),",
      "                E.blob_client_id(n, n + 'v'),",
      "                base64.b64encode(E.encode_blob(n, ('json', bytes([0, 10, 255])))).decode() + base64.b64encode(E.encode_blob(n, None)).decode(),",
      "                list(E.thread_of(E.labels('p_1', n[:40], n[:40], 'writes')))])",
      "print(json.dumps(out))",
    ].join("\n");
    // Lone surrogates travel to Python as JSON escapes (JSON.stringify writes them so).
    const theirs = JSON.parse(execFileSync(PYTHON, ["-c", script], { input: JSON.stringify(names), encoding: "utf8", timeout: 60_000 }));
    assert.deepEqual(mine, theirs);
    assert.match(layout.sessionIds("p_1", "x".repeat(300), "")[0], /^p_1~c~sha256~[0-9a-f]{64}$/);
  });

  test("a thread of whole checkpoints (header v 1, before channel values had their session) is read and continued", async () => {
    const d = await started();
    const client = new SessionClient({ workspace: d.workspace, autostart: false, timeoutMs: 15_000 });
    try {
      const saver = new ClawCheckpointSaver(client);
      const [sid, , bid] = layout.sessionIds("langgraph", "old", "");
      // The parent as the saver stored it before: the whole checkpoint (its values in it) in an item of header v 1.
      const whole = { v: 4, id: "1", ts: "2026-01-01T00:00:01Z", channel_values: { a: 1, b: 2 }, channel_versions: { a: "1", b: "1" }, versions_seen: {} };
      const [c, m] = [await saver.serde.dumpsTyped(whole), await saver.serde.dumpsTyped({ source: "input", step: 0, parents: {} })];
      const header = JSON.stringify({ v: 1, parent: null, c: c[0], m: m[0], n: c[1].length });
      const item = Buffer.concat([Buffer.from(header + "\n"), c[1], m[1]]);
      await client.createSession(sid, { labels: layout.labels("langgraph", "old", "", layout.KIND_CHECKPOINTS) });
      await client.append(sid, [{ role: 5, format: layout.FORMAT_CHECKPOINT, item, clientId: "1", metadata: "{}" }]);
      const read = await new ClawCheckpointSaver(client).getTuple({ configurable: { thread_id: "old" } });
      assert.deepEqual(read?.checkpoint.channel_values, { a: 1, b: 2 });
      assert.deepEqual((await client.load(bid, { noRepair: true })).messages, []); // a read writes nothing
      // A child names the channel it did not change (a) by its version alone: its value is found all the same.
      const child = { ...whole, id: "2", channel_values: { a: 1, b: 3 }, channel_versions: { a: "1", b: "2" } };
      const stored = await saver.put(read?.config as never, child, { source: "loop", step: 1, parents: {} }, { b: "2" });
      assert.deepEqual((await saver.getTuple(stored))?.checkpoint.channel_values, { a: 1, b: 3 });
      const values = [];
      for await (const t of saver.list({ configurable: { thread_id: "old" } })) values.push(t.checkpoint.channel_values);
      assert.deepEqual(values, [{ a: 1, b: 3 }, { a: 1, b: 2 }]);
      // Blobs of the values, one per channel and version; deleteThread takes them with the thread.
      assert.deepEqual((await client.load(bid, { noRepair: true })).messages.map((e) => e.clientId).sort(), ["a/1", "b/1", "b/2"]);
      await saver.deleteThread("old");
      assert.equal((await client.listSessions({ labels: { [layout.LABEL_SAVER]: "langgraph" } })).sessions.length, 0);
    } finally {
      client.close();
    }
  });

  test("two savers putting a child of one parent: the second gets CheckpointConflictError and nothing is stored", async () => {
    const d = await started();
    const client = new SessionClient({ workspace: d.workspace, autostart: false, timeoutMs: 15_000 });
    try {
      const a = new ClawCheckpointSaver(client);
      const b = new ClawCheckpointSaver(client);
      const cp = (id: string) => ({ v: 4, id, ts: `2026-01-01T00:00:0${id.length}Z`, channel_values: { x: id }, channel_versions: {}, versions_seen: {} });
      const meta = { source: "loop" as const, step: 0, parents: {} };
      const root = await a.put({ configurable: { thread_id: "t", checkpoint_ns: "" } }, cp("1"), meta, {});
      assert.equal((await b.getTuple({ configurable: { thread_id: "t" } }))?.checkpoint.id, "1");
      await a.put(root, cp("2a"), meta, {});
      await assert.rejects(b.put(root, cp("2b"), meta, {}), (err: Error) => {
        assert.equal(err.name, "CheckpointConflictError");
        assert.match(err.message, /moved on past checkpoint "1"/);
        return true;
      });
      const ids = [];
      for await (const t of a.list({ configurable: { thread_id: "t" } })) ids.push(t.checkpoint.id);
      assert.deepEqual(ids, ["2a", "1"]);
      // Read again, b goes on from the newest; the same checkpoint put twice is a no-op, another with its id a conflict.
      const newest = await b.getTuple({ configurable: { thread_id: "t" } });
      const third = cp("3");
      await b.put(newest?.config as never, third, meta, {});
      await b.put(newest?.config as never, third, meta, {});
      await assert.rejects(b.put(newest?.config as never, { ...third, ts: "other" }, meta, {}), /stored with other contents/);
      assert.equal((await client.load(layout.sessionIds("langgraph", "t", "")[0], { noRepair: true })).messages.length, 3);

      // A thread another saver deleted: a's next put conflicts, and a's puts after it create every session of the
      // thread with its labels again, so the next deleteThread finds them all.
      const withValues = (id: string) => ({ ...cp(id), channel_versions: { x: id } });
      const held = await a.put((await a.getTuple({ configurable: { thread_id: "t" } }))?.config as never, withValues("4"), meta, { x: "4" });
      await a.putWrites(held, [["x", "w4"]], "task");
      await b.deleteThread("t");
      await assert.rejects(a.put(held, withValues("5"), meta, { x: "5" }), /moved on past checkpoint "4"/);
      const fresh = await a.put({ configurable: { thread_id: "t", checkpoint_ns: "" } }, withValues("6"), meta, { x: "6" });
      await a.putWrites(fresh, [["x", "w6"]], "task");
      assert.deepEqual((await b.getTuple({ configurable: { thread_id: "t" } }))?.checkpoint.channel_values, { x: "6" });
      await b.deleteThread("t");
      for (const sid of layout.sessionIds("langgraph", "t", "")) {
        const left = await client.load(sid, { noRepair: true }).then(
          (r) => r.messages.length,
          (err: Error) => (err.name === "SessionNotFoundError" ? 0 : Promise.reject(err)),
        );
        assert.equal(left, 0, sid);
      }
    } finally {
      client.close();
    }
  });
});
