// LangGraph.js checkpoints kept by claw-sessiond: `ClawCheckpointSaver` (`@claw-sessiond/client/langgraph`;
// `@langchain/langgraph-checkpoint` is an optional peer dependency, needed only by this entry point).
// The layout is the Python checkpointer's (./langgraph_layout.ts), so either reads the other's threads
// as far as their serializers agree: this saver's serde writes type "json" (Python's reads it), and an
// entry of a type it cannot read (Python's default "msgpack") is refused with a CheckpointFormatError.
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
  TASKS,
  WRITES_IDX_MAP,
  compareWritesSortKeys,
  copyCheckpoint,
  maxChannelVersion,
  writesSortKey,
} from "@langchain/langgraph-checkpoint";
import { isDeepStrictEqual } from "node:util";
import { SessionClient } from "./client";
import { AlreadyExistsError, InvalidRequestError, SequenceConflictError, SessiondError, SessionNotFoundError } from "./errors";
import { type Message, Role, type SessionSummary } from "./gen/claw/sessiond/v1/sessiond";
import * as L from "./langgraph_layout";
import type { MessageInput } from "./messages";

export * as layout from "./langgraph_layout";

/** How many entries one page of a `list` (or of a scan) reads at most; a `list`'s first page is its limit's size. */
export const PAGE = 100;
/** At most this many client ids are asked for in one Load (a checkpoint's channel values, a batch's ids) until the daemon says its bound (`--max-batch-messages`) is lower: then that bound. */
const IDS_PER_LOAD = 1000;
/** At most this many checkpoint ids are remembered as having their values in blobs (a put of a child of one not remembered reads the parent once). */
const KNOWN = 10_000;
/** ListSessions page size when the saver looks for a thread's sessions, and at most this many pages (100,000 namespaces). */
const SESSION_PAGE = 100;
const MAX_SESSION_PAGES = 1000;

/**
 * Another writer changed the thread since this saver read it, or the checkpoint id is stored with
 * other contents: the checkpoint was not stored (channel values put before it stay, named by none). Read the
 * thread again (`getTuple`) to go on from its newest checkpoint.
 */
export class CheckpointConflictError extends SequenceConflictError {}

/** A stored entry this saver cannot read: not the checkpointer's layout, or a serializer type its serde does not know. */
export class CheckpointFormatError extends SessiondError {
  constructor(message: string) {
    super(message, -1, "FOREIGN_ENTRY");
  }
}

export interface ClawCheckpointSaverOptions {
  /** The first part of this saver's session ids and its `langgraph.saver` label (1-64 of `[A-Za-z0-9_-]`, default "langgraph"). */
  prefix?: string;
  /** LangGraph's serializer (default: the base saver's JsonPlusSerializer). */
  serde?: SerializerProtocol;
}

interface StoredWrite {
  taskId: string;
  channel: string;
  taskPath: string;
  idx: number;
  value: L.Typed;
}

/**
 * A LangGraph.js checkpointer whose threads live in a claw-sessiond daemon (the client is not closed
 * by the saver). A thread id and a namespace are strings of at most 256 bytes (as label values).
 */
export class ClawCheckpointSaver extends BaseCheckpointSaver {
  readonly prefix: string;
  /** [thread, ns] (JSON) -> [checkpoint id, position]: the newest checkpoint this saver read or wrote there. */
  private readonly tails = new Map<string, [string, number]>();
  /** The sessions this saver created (or found stored). */
  private readonly made = new Set<string>();
  /** Sessions this saver may have written to after another saver deleted them (an append recreates one without labels). */
  private readonly stale = new Set<string>();
  /** [thread, ns, checkpoint id] (JSON) of checkpoints whose channel values are blobs, oldest first: at most KNOWN. */
  private readonly inBlobs = new Set<string>();
  /** How many client ids one Load asks for: IDS_PER_LOAD, or the daemon's lower bound once it refused more. */
  private idsPerLoad = IDS_PER_LOAD;

  constructor(
    readonly client: SessionClient,
    options: ClawCheckpointSaverOptions = {},
  ) {
    super(options.serde);
    this.prefix = L.checkPrefix(options.prefix ?? "langgraph");
  }

  // -- reads

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    if (config.configurable?.thread_id === undefined) return undefined;
    const [thread, ns] = names(config);
    const cid: string | undefined = config.configurable?.checkpoint_id || undefined;
    const [sid] = L.sessionIds(this.prefix, thread, ns);
    let entry: Message | undefined;
    if (cid) {
      entry = await this.byClientId(sid, cid);
    } else {
      const loaded = await this.load(sid, { last: 1 });
      entry = loaded?.messages.filter((e) => e.format === L.FORMAT_CHECKPOINT).pop();
      if (entry && loaded) this.tails.set(key(thread, ns), [entry.clientId, loaded.session.lastPosition]);
    }
    if (!entry) return undefined;
    return (await this.tuples(thread, ns, [entry]))[0];
  }

  async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { filter, before } = options;
    let left = options.limit;
    if (left !== undefined && left <= 0) return;
    const onlyId: string | undefined = config?.configurable?.checkpoint_id || undefined;
    const beforeId: string | undefined = before?.configurable?.checkpoint_id || undefined;
    for (const [thread, ns] of await this.namespaces(config)) {
      const [sid] = L.sessionIds(this.prefix, thread, ns);
      for await (const page of this.pagesOf(sid, onlyId, beforeId, left)) {
        const chosen: Message[] = [];
        for (const entry of page) {
          if (left !== undefined && chosen.length >= left) break;
          if (beforeId && entry.clientId >= beforeId) continue;
          // The filter looks at the metadata alone: the checkpoint, its values and writes are read for a match only.
          if (filter && !matches(await this.loads(this.decoded(thread, entry)[1], what(thread, entry)), filter)) continue;
          chosen.push(entry);
        }
        if (chosen.length === 0) continue;
        yield* await this.tuples(thread, ns, chosen);
        if (left !== undefined && (left -= chosen.length) <= 0) return;
      }
    }
  }

  /** The checkpoints a `list` looks at in one session, newest first (the Python saver's `_pages`). */
  private async *pagesOf(sid: string, onlyId?: string, beforeId?: string, wanted?: number): AsyncGenerator<Message[]> {
    if (onlyId) {
      const entry = await this.byClientId(sid, onlyId);
      if (entry) yield [entry];
      return;
    }
    let before = 0;
    if (beforeId) before = (await this.byClientId(sid, beforeId))?.position ?? 0;
    yield* this.pages(sid, before, Math.min(wanted ?? PAGE, PAGE), L.FORMAT_CHECKPOINT);
  }

  // -- writes

  /**
   * Stores the values of the channels `newVersions` names (one blob each, kept once per channel and
   * version), then the checkpoint without its channel_values, as a child of `config`'s checkpoint.
   */
  async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    if (config.configurable?.thread_id === undefined) {
      throw new TypeError('put needs config.configurable.thread_id (graph.invoke(input, { configurable: { thread_id: "..." } }))');
    }
    const [thread, ns] = names(config);
    const parent: string | undefined = config.configurable?.checkpoint_id || undefined;
    const [sid, , bid] = L.sessionIds(this.prefix, thread, ns);
    const values = checkpoint.channel_values ?? {};
    const blobs = await Promise.all(
      Object.entries(newVersions ?? {}).map(async ([channel, version]) => {
        const value = Object.hasOwn(values, channel) ? ((await this.serde.dumpsTyped(values[channel])) as L.Typed) : undefined;
        return blob(channel, value, L.blobClientId(channel, version));
      }),
    );
    if (parent) blobs.push(...(await this.inherited(thread, ns, parent, new Set(blobs.map((b) => b.clientId)))));
    const [c, m] = await Promise.all([this.serde.dumpsTyped({ ...copyCheckpoint(checkpoint), channel_values: {} }), this.serde.dumpsTyped(metadata)]);
    const item = L.encodeCheckpoint(c as L.Typed, m as L.Typed, parent);
    const entry = { role: Role.ROLE_OTHER, format: L.FORMAT_CHECKPOINT, item, clientId: checkpoint.id, metadata: L.metadataJson(metadata) };
    if (blobs.length > 0) {
      // Before the checkpoint that names them: a stored checkpoint never lacks its values.
      await this.ensure(bid, thread, ns, L.KIND_BLOBS);
      await this.appendNew(bid, blobs);
    }
    if (parent) this.known(thread, ns, parent);
    await this.ensure(sid, thread, ns, L.KIND_CHECKPOINTS);
    const tail = this.tails.get(key(thread, ns));
    const expected = tail && parent && tail[0] === parent ? tail[1] : 0;
    try {
      const res = await this.client.append(sid, [entry], { expectedLastPosition: expected });
      this.tails.set(key(thread, ns), [checkpoint.id, res.lastPosition]);
    } catch (err) {
      if (err instanceof SequenceConflictError) {
        this.tails.delete(key(thread, ns));
        // deleted meanwhile, perhaps: the next puts create the thread's sessions with their labels again
        for (const id of L.sessionIds(this.prefix, thread, ns)) {
          this.made.delete(id);
          this.stale.add(id);
        }
        if (blobs.length > 0) await this.ensure(bid, thread, ns, L.KIND_BLOBS); // the values just written: found with the thread
        throw new CheckpointConflictError(
          `thread ${JSON.stringify(thread)} (namespace ${JSON.stringify(ns)}) moved on past checkpoint ${JSON.stringify(parent)} since this saver ` +
            `read it (another writer changed it: its last position is ${err.metadata.actual ?? "?"}, not ${expected}); the checkpoint was ` +
            "not stored (channel values it wrote stay unreferenced until the thread is deleted): read the thread again to go on from its newest checkpoint",
          err.code,
          err.reason,
          err.metadata,
        );
      }
      if (!(err instanceof AlreadyExistsError)) throw err;
      const stored = await this.byClientId(sid, checkpoint.id);
      if (!stored || !Buffer.from(stored.item).equals(item)) {
        throw new CheckpointConflictError(`checkpoint ${JSON.stringify(checkpoint.id)} of thread ${JSON.stringify(thread)} is stored with other contents`, -1, "CLIENT_ID_EXISTS");
      }
    }
    this.known(thread, ns, checkpoint.id);
    return { configurable: { thread_id: thread, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
  }

  /**
   * The values a child put stores for a parent that holds them itself (a checkpoint of header version 1, written
   * before the values had their session): the blob of each channel at the parent's version, those not in `named`
   * (the put's own), so the child finds the channels it did not change by their versions. None when the parent's
   * values are blobs already (known in memory, else one point read of the parent).
   */
  private async inherited(thread: string, ns: string, parent: string, named: Set<string>): Promise<(MessageInput & { clientId: string })[]> {
    if (this.inBlobs.has(key(thread, ns, parent))) return [];
    const entry = await this.byClientId(L.sessionIds(this.prefix, thread, ns)[0], parent);
    if (!entry) return [];
    const [c, , , inBlobs] = this.decoded(thread, entry);
    if (inBlobs) {
      this.known(thread, ns, parent);
      return [];
    }
    const whole: Checkpoint = await this.loads(c, what(thread, entry));
    const values = whole.channel_values ?? {};
    const out = [];
    for (const [ch, version] of Object.entries(whole.channel_versions ?? {})) {
      const clientId = L.blobClientId(ch, version);
      if (named.has(clientId)) continue;
      const value = Object.hasOwn(values, ch) ? ((await this.serde.dumpsTyped(values[ch])) as L.Typed) : undefined;
      out.push(blob(ch, value, clientId));
    }
    return out;
  }

  /** Remembers that a checkpoint's channel values are blobs (at most KNOWN ids, the oldest forgotten first). */
  private known(thread: string, ns: string, checkpointId: string): void {
    const k = key(thread, ns, checkpointId);
    this.inBlobs.delete(k);
    this.inBlobs.add(k);
    if (this.inBlobs.size > KNOWN) this.inBlobs.delete(this.inBlobs.values().next().value as string);
  }

  /** Stores a task's pending writes in one append: a regular write already stored stays, a special one (idx < 0) replaces it. */
  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ""): Promise<void> {
    const [thread, ns] = names(config);
    const cid = config.configurable?.checkpoint_id;
    if (typeof cid !== "string" || !cid) throw new TypeError("putWrites needs config.configurable.checkpoint_id");
    const [, wid] = L.sessionIds(this.prefix, thread, ns);
    const entries = await Promise.all(
      writes.map(async ([channel, value], i) => {
        const idx = Object.hasOwn(WRITES_IDX_MAP, channel) ? WRITES_IDX_MAP[channel] : i;
        const item = L.encodeWrite(taskId, channel, taskPath, idx, (await this.serde.dumpsTyped(value)) as L.Typed);
        return { role: Role.ROLE_OTHER, format: L.FORMAT_WRITE, item, clientId: L.writeClientId(cid, taskId, idx) };
      }),
    );
    if (entries.length === 0) return;
    await this.ensure(wid, thread, ns, L.KIND_WRITES);
    await this.appendNew(wid, entries);
  }

  /** Appends `entries` in one request; if some client ids are stored already, those stay and the rest are appended. */
  private async appendNew(sid: string, entries: (MessageInput & { clientId: string })[]): Promise<void> {
    try {
      await this.client.append(sid, entries);
      return;
    } catch (err) {
      if (!(err instanceof AlreadyExistsError)) throw err;
    }
    const taken = new Set((await this.byClientIds(sid, entries.map((e) => e.clientId))).map((e) => e.clientId));
    const rest = entries.filter((e) => !taken.has(e.clientId));
    if (rest.length > 0) await this.client.append(sid, rest);
  }

  /** Deletes every checkpoint and write of the thread, in every namespace. */
  async deleteThread(threadId: string): Promise<void> {
    L.checkNames(threadId, "");
    for (const s of await this.sessions({ [L.LABEL_THREAD]: L.labels(this.prefix, threadId, "", "")[L.LABEL_THREAD] })) {
      try {
        await this.client.delete(s.id);
      } catch (err) {
        if (!(err instanceof SessionNotFoundError)) throw err;
      }
      this.made.delete(s.id);
    }
    for (const k of [...this.tails.keys()]) if ((JSON.parse(k) as string[])[0] === threadId) this.tails.delete(k);
  }

  /**
   * The next channel version: a zero-padded counter, then a random part, as the Python checkpointer
   * (and LangGraph's SQL savers) write it, so a thread either side continues holds versions of one
   * kind. A string at run time (LangGraph.js compares versions of either type); typed as the base
   * class's number so that a graph takes this saver.
   */
  getNextVersion(current: number | undefined): number {
    const was = current as number | string | undefined;
    const n = was === undefined ? 0 : typeof was === "number" ? was : parseInt(was.split(".")[0], 10);
    return `${String(n + 1).padStart(32, "0")}.${Math.random().toFixed(16).slice(2)}` as unknown as number;
  }

  // -- helpers

  /** A checkpoint entry's item, decoded (a CheckpointFormatError if it is not the checkpointer's). */
  private decoded(thread: string, entry: Message): [L.Typed, L.Typed, string | undefined, boolean] {
    try {
      return L.decodeCheckpoint(entry.item);
    } catch (err) {
      throw new CheckpointFormatError(`${what(thread, entry)}: ${(err as Error).message}`);
    }
  }

  /** The tuples of checkpoint entries: their channel values (one Load of their client ids for all), each one's pending writes (a prefix read). */
  private async tuples(thread: string, ns: string, entries: Message[]): Promise<CheckpointTuple[]> {
    const [, wid, bid] = L.sessionIds(this.prefix, thread, ns);
    const decoded = entries.map((entry) => this.decoded(thread, entry));
    const checkpoints: Checkpoint[] = await Promise.all(decoded.map(([c], i) => this.loads(c, what(thread, entries[i]))));
    const ids = checkpoints.map((cp, i) => (decoded[i][3] ? Object.entries(cp.channel_versions ?? {}).map(([ch, v]) => [ch, L.blobClientId(ch, v)]) : []));
    const stored = await this.blobs(bid, ids.flat().map(([, id]) => id));
    const out: CheckpointTuple[] = [];
    for (const [i, entry] of entries.entries()) {
      const [, m, parent, inBlobs] = decoded[i];
      const checkpoint = checkpoints[i];
      if (inBlobs) {
        this.known(thread, ns, entry.clientId);
        checkpoint.channel_values = {};
        for (const [ch, id] of ids[i]) {
          const value = stored.get(id);
          if (value) checkpoint.channel_values[ch] = await this.loads(value, `the value of channel ${JSON.stringify(ch)}`);
        }
      }
      if (checkpoint.v < 4 && parent) await this.migrateSends(checkpoint, thread, ns, parent);
      const tuple: CheckpointTuple = {
        config: { configurable: { thread_id: thread, checkpoint_ns: ns, checkpoint_id: entry.clientId } },
        checkpoint,
        metadata: await this.loads(m, what(thread, entry)),
        pendingWrites: await this.pending(await this.writes(wid, entry.clientId)),
      };
      if (parent) tuple.parentConfig = { configurable: { thread_id: thread, checkpoint_ns: ns, checkpoint_id: parent } };
      out.push(tuple);
    }
    return out;
  }

  /**
   * The serialized channel values with these client ids, by client id (one Load of them): a value stored as none
   * (the channel had no value) is undefined, one not stored left out; either is absent from `channel_values`, as in
   * LangGraph's savers (the validation suite asks for it: a put whose newVersions leave a channel out stores none).
   */
  private async blobs(bid: string, clientIds: string[]): Promise<Map<string, L.Typed | undefined>> {
    const out = new Map<string, L.Typed | undefined>();
    for (const entry of await this.byClientIds(bid, [...new Set(clientIds)])) {
      if (entry.format !== L.FORMAT_BLOB) continue;
      let value: L.Typed | undefined;
      try {
        value = L.decodeBlob(entry.item)[1];
      } catch (err) {
        throw new CheckpointFormatError(`channel value ${JSON.stringify(entry.clientId)}: ${(err as Error).message}`);
      }
      out.set(entry.clientId, value);
    }
    return out;
  }

  /** A checkpoint of a format before v4 gets its parent's pending sends (TASKS writes) as a channel, as LangGraph's savers do. */
  private async migrateSends(checkpoint: Checkpoint, thread: string, ns: string, parent: string): Promise<void> {
    const [, wid] = L.sessionIds(this.prefix, thread, ns);
    const sends = (await this.pending(await this.writes(wid, parent))).filter(([, channel]) => channel === TASKS).map(([, , value]) => value);
    checkpoint.channel_values ??= {};
    checkpoint.channel_values[TASKS] = sends;
    checkpoint.channel_versions ??= {};
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] = versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }

  private async pending(writes: StoredWrite[]): Promise<[string, string, unknown][]> {
    return Promise.all(writes.map(async (w) => [w.taskId, w.channel, await this.loads(w.value, `a pending write of task ${JSON.stringify(w.taskId)}`)] as [string, string, unknown]));
  }

  /** `serde.loadsTyped`, a type it cannot read refused clearly (Python's "msgpack" to a JSON serde). */
  private async loads([type, data]: L.Typed, what: string): Promise<any> {
    try {
      return await this.serde.loadsTyped(type, data);
    } catch (err) {
      throw new CheckpointFormatError(
        `${what} was stored with serializer type ${JSON.stringify(type)}, which this saver's serde cannot read (${(err as Error).message}); ` +
          "the Python checkpointer writes it with its default serde: give that saver a serde writing \"json\" to share threads with LangGraph.js",
      );
    }
  }

  /** A look-only load (undefined if the session does not exist). */
  private async load(sid: string, opts: Parameters<SessionClient["load"]>[1]) {
    try {
      return await this.client.load(sid, { noRepair: true, ...opts });
    } catch (err) {
      if (err instanceof SessionNotFoundError) return undefined;
      throw err;
    }
  }

  /** The checkpoint entry with this client id (one point read). */
  private async byClientId(sid: string, clientId: string): Promise<Message | undefined> {
    const loaded = await this.load(sid, { clientIds: [clientId] });
    return loaded?.messages.find((e) => e.clientId === clientId && e.format === L.FORMAT_CHECKPOINT);
  }

  /**
   * The visible entries with these client ids (none if the session does not exist): a Load of each `idsPerLoad`
   * of them (a Load the daemon refuses as asking for more ids than its bound is asked again in parts of that bound).
   */
  private async byClientIds(sid: string, clientIds: string[]): Promise<Message[]> {
    const out: Message[] = [];
    for (let i = 0; i < clientIds.length; ) {
      // bounded: each pass moves on, or lowers idsPerLoad (never below 1)
      const chunk = clientIds.slice(i, i + this.idsPerLoad);
      let loaded;
      try {
        loaded = await this.load(sid, { clientIds: chunk });
      } catch (err) {
        const bound = err instanceof InvalidRequestError && err.reason === "FIELD_TOO_LARGE" ? Number(err.metadata.limit) : NaN;
        if (!(Number.isInteger(bound) && bound >= 1 && bound < chunk.length)) throw err;
        this.idsPerLoad = bound;
        continue;
      }
      out.push(...(loaded?.messages ?? []));
      i += chunk.length;
    }
    return out;
  }

  /**
   * Entries of format `fmt` newest first, from the newest before position `before` (0: of all): the
   * first page of `size` entries, each next one twice the size of the one before, up to PAGE.
   */
  private async *pages(sid: string, before: number, size: number, fmt: string): AsyncGenerator<Message[]> {
    for (;;) {
      // bounded: each page ends at a lower position than the one before
      const loaded = await this.load(sid, { last: size, beforePosition: before || undefined });
      const entries = loaded?.messages ?? [];
      if (entries.length === 0) return;
      yield entries.filter((e) => e.format === fmt).reverse();
      if (entries.length < size) return;
      before = entries[0].position;
      size = Math.min(size * 2, PAGE);
    }
  }

  /** Every visible entry whose client id starts with `prefix`, in position order (paged by the daemon's batch bound). */
  private async prefixed(sid: string, prefix: string): Promise<Message[]> {
    const out: Message[] = [];
    let after = 0;
    for (;;) {
      // bounded: each page starts after the last position of the one before
      const loaded = await this.load(sid, { clientIdPrefix: prefix, afterPosition: after || undefined });
      const entries = loaded?.messages ?? [];
      out.push(...entries);
      if (!loaded || loaded.complete || entries.length === 0) return out;
      after = entries[entries.length - 1].position;
    }
  }

  /** A checkpoint's pending writes in LangGraph's order; of a special write stored more than once, the newest. */
  private async writes(wid: string, checkpointId: string): Promise<StoredWrite[]> {
    const byKey = new Map<string, StoredWrite>();
    for (const entry of await this.prefixed(wid, L.writePrefix(checkpointId))) {
      if (entry.format !== L.FORMAT_WRITE) continue;
      let w: StoredWrite;
      try {
        const [taskId, channel, taskPath, idx, value] = L.decodeWrite(entry.item);
        w = { taskId, channel, taskPath, idx, value };
      } catch (err) {
        throw new CheckpointFormatError(`pending write ${JSON.stringify(entry.clientId)}: ${(err as Error).message}`);
      }
      byKey.set(JSON.stringify([w.taskId, w.idx]), w);
    }
    return [...byKey.values()].sort((a, b) => compareWritesSortKeys(writesSortKey(a.taskPath, a.taskId, a.idx), writesSortKey(b.taskPath, b.taskId, b.idx)));
  }

  /** The thread namespaces a `list` reads: the config's one, its thread's, or every thread's. */
  private async namespaces(config: RunnableConfig | undefined): Promise<[string, string][]> {
    const c = config?.configurable ?? {};
    if (c.thread_id !== undefined && c.checkpoint_ns !== undefined) return [names(config as RunnableConfig)];
    const wanted: Record<string, string> = { [L.LABEL_KIND]: L.KIND_CHECKPOINTS };
    const [thread, ns] = L.checkNames(c.thread_id ?? "", c.checkpoint_ns ?? "");
    const named = L.labels(this.prefix, thread, ns, L.KIND_CHECKPOINTS);
    if (c.thread_id !== undefined) wanted[L.LABEL_THREAD] = named[L.LABEL_THREAD];
    if (c.checkpoint_ns !== undefined) wanted[L.LABEL_NS] = named[L.LABEL_NS];
    const found = new Map<string, [string, string]>();
    for (const s of await this.sessions(wanted)) {
      const pair = L.threadOf(s.labels);
      if (pair) found.set(key(...pair), pair);
    }
    return [...found.values()].sort((a, b) => (a[0] !== b[0] ? (a[0] < b[0] ? -1 : 1) : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  }

  /** Every session of this saver carrying the `wanted` labels (paged, at most MAX_SESSION_PAGES pages). */
  private async sessions(wanted: Record<string, string>): Promise<SessionSummary[]> {
    const out: SessionSummary[] = [];
    let pageToken = "";
    for (let i = 0; i < MAX_SESSION_PAGES; i++) {
      const page = await this.client.listSessions({ limit: SESSION_PAGE, pageToken, labels: { [L.LABEL_SAVER]: this.prefix, ...wanted } });
      out.push(...page.sessions);
      pageToken = page.nextPageToken;
      if (!pageToken) return out;
    }
    throw new InvalidRequestError(`more than ${SESSION_PAGE * MAX_SESSION_PAGES} sessions carry the labels ${JSON.stringify(wanted)}`, -1);
  }

  /** Creates the session with its labels the first time this saver writes to it (and labels it again if it may have been recreated without them). */
  private async ensure(sid: string, thread: string, ns: string, kind: string): Promise<void> {
    if (this.made.has(sid)) return;
    const labels = L.labels(this.prefix, thread, ns, kind);
    try {
      await this.client.createSession(sid, { labels });
    } catch (err) {
      if (!(err instanceof AlreadyExistsError)) throw err;
      if (this.stale.has(sid)) await this.client.updateSession(sid, { setLabels: labels });
    }
    this.made.add(sid);
    this.stale.delete(sid);
  }
}

/** The entry of a channel's value (undefined: the channel has none) at the version `clientId` names. */
function blob(channel: string, value: L.Typed | undefined, clientId: string): MessageInput & { clientId: string } {
  return { role: Role.ROLE_OTHER, format: L.FORMAT_BLOB, item: L.encodeBlob(channel, value), clientId };
}

function what(thread: string, entry: Message): string {
  return `checkpoint ${JSON.stringify(entry.clientId)} of thread ${JSON.stringify(thread)}`;
}

/** Whether `metadata` has every item of `filter` (values compared deeply). */
function matches(metadata: unknown, filter: Record<string, unknown>): boolean {
  return Object.entries(filter).every(([k, v]) => isDeepStrictEqual((metadata as Record<string, unknown> | undefined)?.[k], v));
}

function names(config: RunnableConfig): [string, string] {
  return L.checkNames(config.configurable?.thread_id, config.configurable?.checkpoint_ns ?? "");
}

function key(...parts: string[]): string {
  return JSON.stringify(parts);
}
