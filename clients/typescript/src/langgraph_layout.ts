// How the LangGraph.js checkpointer lays a thread out in the daemon (pure, no I/O): the same layout
// as the Python checkpointer (claw_sessiond_client.contrib._langgraph_entries and _names), so a
// thread written by one is found by the other. One thread namespace (thread_id, checkpoint_ns) is
// three sessions: its checkpoints (`<prefix>~c~<thread>~<ns>`, each checkpoint one ROLE_OTHER entry
// of format FORMAT_CHECKPOINT, client id the checkpoint id, its channel_values left out), its
// pending writes (`<prefix>~w~<thread>~<ns>`, client ids `<checkpoint>/<task>/<idx>`) and its
// channel values (`<prefix>~b~<thread>~<ns>`, one FORMAT_BLOB entry per channel and version, client
// id `<channel>/<version>`, written when a put's newVersions names the channel), thread and
// namespace escaped; a pair whose id would pass 256 bytes is `<prefix>~c~sha256~<digest>`. A
// checkpoint item of header v 1 (before the channel values had their session) holds its values.
import { createHash, randomUUID } from "node:crypto";

/** The entry format of a checkpoint, and of a pending write. */
export const FORMAT_CHECKPOINT = "langgraph.checkpoint";
export const FORMAT_WRITE = "langgraph.write";
/** The entry format of one channel's value at one version. */
export const FORMAT_BLOB = "langgraph.blob";
/** A blob's serde type when newVersions names a channel the checkpoint holds no value of. */
export const EMPTY = "empty";
/** The labels every session of the checkpointer carries. */
export const LABEL_SAVER = "langgraph.saver";
export const LABEL_THREAD = "langgraph.thread";
export const LABEL_NS = "langgraph.ns";
export const LABEL_KIND = "langgraph.kind";
export const KIND_CHECKPOINTS = "checkpoints";
export const KIND_WRITES = "writes";
export const KIND_BLOBS = "blobs";
/** The daemon's limits: a session id and a label value are at most 256 bytes. */
export const MAX_NAME_BYTES = 256;
/** A client id part longer than this is its digest instead (a write's client id stays under 256 bytes). */
const MAX_PART = 96;
const PREFIX = /^[A-Za-z0-9_-]{1,64}$/;
const PLAIN = /^[A-Za-z0-9_-]$/;

/**
 * The UTF-8 bytes of `text`, a lone surrogate as its 3-byte form (as Python's "surrogatepass"), so
 * every string has one encoding and the escapes match the Python checkpointer's.
 */
export function utf8(text: string): Buffer {
  const out: number[] = [];
  for (const ch of text) {
    const code = ch.codePointAt(0) as number;
    if (code < 0x80) out.push(code);
    else if (code < 0x800) out.push(0xc0 | (code >> 6), 0x80 | (code & 0x3f));
    else if (code < 0x10000) out.push(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f));
    else out.push(0xf0 | (code >> 18), 0x80 | ((code >> 12) & 0x3f), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f));
  }
  return Buffer.from(out);
}

/** The text of `utf8`'s bytes (its inverse; a 3-byte surrogate back to a lone surrogate). */
export function fromUtf8(raw: Uint8Array): string {
  let out = "";
  for (let i = 0; i < raw.length; ) {
    const b = raw[i];
    const n = b < 0x80 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
    let code = n === 1 ? b : b & (0xff >> (n + 1));
    for (let k = 1; k < n; k++) code = (code << 6) | (raw[i + k] & 0x3f);
    out += String.fromCodePoint(code);
    i += n;
  }
  return out;
}

function percent(ch: string): string {
  return [...utf8(ch)].map((b) => "%" + b.toString(16).toUpperCase().padStart(2, "0")).join("");
}

/** `name` with every character but `[A-Za-z0-9_-]` as %XX of its UTF-8 bytes (injective, no `~`). */
export function escape(name: string): string {
  let out = "";
  for (const ch of name) out += PLAIN.test(ch) ? ch : percent(ch);
  return out;
}

/** The name an `escape` or a `labelValue` spells: each %XX back to its byte. */
export function unescape(value: string): string {
  if (!value.includes("%")) return value;
  const raw: number[] = [];
  for (let i = 0; i < value.length; ) {
    if (value[i] === "%") {
      raw.push(parseInt(value.slice(i + 1, i + 3), 16));
      i += 3;
    } else {
      const ch = String.fromCodePoint(value.codePointAt(i) as number);
      raw.push(...utf8(ch));
      i += ch.length;
    }
  }
  return fromUtf8(Buffer.from(raw));
}

/** SHA-256 (hex) of `parts`, each length-prefixed so that no two tuples share it. */
export function digest(...parts: string[]): string {
  const h = createHash("sha256");
  for (const part of parts) {
    const raw = utf8(part);
    const len = Buffer.alloc(8);
    len.writeBigUInt64BE(BigInt(raw.length));
    h.update(len);
    h.update(raw);
  }
  return h.digest("hex");
}

/** `name` as a label value: as is, but `%`, control characters and lone surrogates as %XX of their UTF-8 bytes. */
export function labelValue(name: string): string {
  let out = "";
  for (const ch of name) {
    const code = ch.codePointAt(0) as number;
    const odd = ch === "%" || code < 0x20 || (code >= 0x7f && code <= 0x9f) || (code >= 0xd800 && code <= 0xdfff);
    out += odd ? percent(ch) : ch;
  }
  return out;
}

/** `prefix` if it is 1-64 characters of `[A-Za-z0-9_-]`; else a TypeError. */
export function checkPrefix(prefix: string): string {
  if (typeof prefix !== "string" || !PREFIX.test(prefix)) {
    throw new TypeError(`prefix must be 1-64 characters of A-Z, a-z, 0-9, '_' and '-', not ${JSON.stringify(prefix)}`);
  }
  return prefix;
}

function label(name: string, what: string): string {
  const value = labelValue(name);
  if (utf8(value).length > MAX_NAME_BYTES) {
    throw new RangeError(`a LangGraph ${what} is at most ${MAX_NAME_BYTES} bytes here (a label value), got ${JSON.stringify(name.slice(0, 40))}...`);
  }
  return value;
}

/** The thread id and namespace of a config, checked: strings, each fitting a label (TypeError, RangeError). */
export function checkNames(threadId: unknown, checkpointNs: unknown): [string, string] {
  if (typeof threadId !== "string") throw new TypeError(`thread_id must be a string, not ${threadId === null ? "null" : typeof threadId}`);
  if (typeof checkpointNs !== "string") throw new TypeError(`checkpoint_ns must be a string, not ${checkpointNs === null ? "null" : typeof checkpointNs}`);
  label(threadId, "thread_id");
  label(checkpointNs, "checkpoint_ns");
  return [threadId, checkpointNs];
}

/** The checkpoints session, the writes session and the channel values session of one thread namespace. */
export function sessionIds(prefix: string, threadId: string, checkpointNs: string): [string, string, string] {
  const ids = ["c", "w", "b"].map((kind) => {
    const readable = `${prefix}~${kind}~${escape(threadId)}~${escape(checkpointNs)}`;
    return utf8(readable).length > MAX_NAME_BYTES ? `${prefix}~${kind}~sha256~${digest(threadId, checkpointNs)}` : readable;
  });
  return [ids[0], ids[1], ids[2]];
}

/** The labels of a session of the thread namespace. */
export function labels(prefix: string, threadId: string, checkpointNs: string, kind: string): Record<string, string> {
  return {
    [LABEL_SAVER]: prefix,
    [LABEL_THREAD]: label(threadId, "thread_id"),
    [LABEL_NS]: label(checkpointNs, "checkpoint_ns"),
    [LABEL_KIND]: kind,
  };
}

/** The [thread_id, checkpoint_ns] a session's labels name, or undefined if they are not the checkpointer's. */
export function threadOf(sessionLabels: Record<string, string>): [string, string] | undefined {
  if (!Object.hasOwn(sessionLabels, LABEL_THREAD) || !Object.hasOwn(sessionLabels, LABEL_NS)) return undefined;
  return [unescape(sessionLabels[LABEL_THREAD]), unescape(sessionLabels[LABEL_NS])];
}

function part(value: string): string {
  const escaped = escape(value);
  return escaped.length <= MAX_PART ? escaped : "#" + digest(value);
}

/** The client id prefix of every pending write of a checkpoint (of one of its tasks, if given). */
export function writePrefix(checkpointId: string, taskId?: string): string {
  return part(checkpointId) + "/" + (taskId === undefined ? "" : part(taskId) + "/");
}

/**
 * The client id of a pending write, `<checkpoint>/<task>/<idx>`: one id for a regular write (the
 * first one stored stays); a special one (idx < 0) gets a fresh suffix, and a read keeps the newest.
 */
export function writeClientId(checkpointId: string, taskId: string, idx: number): string {
  const base = `${writePrefix(checkpointId, taskId)}${idx}`;
  return idx >= 0 ? base : `${base}/${randomUUID().replace(/-/g, "")}`;
}

/**
 * The client id of a channel's value at one version, `<channel>/<version>` (each part as a write's). A
 * version is a string or an integer: the Python saver writes the same id for either (a float's text differs).
 */
export function blobClientId(channel: string, version: unknown): string {
  return `${part(channel)}/${part(String(version))}`;
}

/** JSON as Python's json.dumps writes it with its default ensure_ascii and compact separators. */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u0080-\uffff]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
}

function frame(header: Record<string, unknown>, ...blobs: Uint8Array[]): Buffer {
  return Buffer.concat([Buffer.from(asciiJson(header) + "\n"), ...blobs]);
}

function unframe(item: Uint8Array): [Record<string, unknown>, Buffer] {
  const raw = Buffer.from(item);
  const nl = raw.indexOf(0x0a);
  let header: unknown;
  try {
    header = JSON.parse(raw.subarray(0, nl < 0 ? raw.length : nl).toString("utf8"));
  } catch {
    header = undefined;
  }
  if (nl < 0 || typeof header !== "object" || header === null || Array.isArray(header)) {
    throw new TypeError("not an item of the LangGraph checkpointer (no JSON header line)");
  }
  return [header as Record<string, unknown>, raw.subarray(nl + 1)];
}

/** A serializer's output: its type name and bytes. */
export type Typed = [string, Uint8Array];

/** The header version of a checkpoint item whose channel values are blobs (1: the values are in the checkpoint). */
export const CHECKPOINT_V = 2;

/**
 * A checkpoint's item: a JSON header line (version CHECKPOINT_V, parent id, both serde types, the
 * checkpoint's length), then both serialized parts; the checkpoint's channel_values are left out (blobs).
 */
export function encodeCheckpoint(checkpoint: Typed, metadata: Typed, parentId: string | undefined): Buffer {
  const header = { v: CHECKPOINT_V, parent: parentId ?? null, c: checkpoint[0], m: metadata[0], n: checkpoint[1].length };
  return frame(header, checkpoint[1], metadata[1]);
}

/**
 * The serialized checkpoint, the serialized metadata, the parent id of an `encodeCheckpoint` item,
 * and whether its channel values are blobs (false: an item of version 1 holds them itself).
 */
export function decodeCheckpoint(item: Uint8Array): [Typed, Typed, string | undefined, boolean] {
  const [header, rest] = unframe(item);
  const n = Number(header.n);
  const parent = typeof header.parent === "string" && header.parent ? header.parent : undefined;
  return [[String(header.c), rest.subarray(0, n)], [String(header.m), rest.subarray(n)], parent, Number(header.v) >= CHECKPOINT_V];
}

/** A channel value's item: a JSON header line (channel, serde type: EMPTY for no value), then the value. */
export function encodeBlob(channel: string, value: Typed | undefined): Buffer {
  return frame({ ch: channel, t: value ? value[0] : EMPTY }, value ? value[1] : Buffer.alloc(0));
}

/** [channel, serialized value] of an `encodeBlob` item (undefined: the channel had no value). */
export function decodeBlob(item: Uint8Array): [string, Typed | undefined] {
  const [h, rest] = unframe(item);
  return [String(h.ch), h.t === EMPTY ? undefined : [String(h.t), rest]];
}

/** A pending write's item: a JSON header line (task, channel, task path, index, serde type), then the value. */
export function encodeWrite(taskId: string, channel: string, taskPath: string, idx: number, value: Typed): Buffer {
  return frame({ task: taskId, ch: channel, path: taskPath, idx, t: value[0] }, value[1]);
}

/** [task id, channel, task path, index, serialized value] of an `encodeWrite` item. */
export function decodeWrite(item: Uint8Array): [string, string, string, number, Typed] {
  const [h, rest] = unframe(item);
  return [String(h.task), String(h.ch), String(h.path), Number(h.idx), [String(h.t), rest]];
}

/** The checkpoint metadata as the entry's JSON metadata (a value JSON cannot hold written as its text). */
export function metadataJson(metadata: unknown): string {
  return JSON.stringify(metadata ?? {}, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v));
}
