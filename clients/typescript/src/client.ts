// The claw-sessiond client for Node.js: one method per RPC of the proto, each with an AbortSignal
// and a deadline (CallOptions), request ids and safe retry, chunked Load assembly, AppendStream,
// Watch and WatchAll with resume, and runs (Attach). The connection (discovery, peer check,
// auto-start, reconnection) is connection.ts's; the streams are streams.ts's.
import { randomUUID } from "node:crypto";
import type { ClientDuplexStream, ClientReadableStream, ServiceError } from "@grpc/grpc-js";
import { type CallOptions, checkText, Connection, type Stub } from "./connection";
import { findWorkspace } from "./discovery";
import { DeadlineError, errorInfo, fromServiceError, InternalError, type SessiondError, UnavailableError } from "./errors";
import {
  type AppendResponse,
  type AppendStreamRequest,
  type AppendStreamResponse,
  AttachRequest,
  type AttachResponse,
  type BackupFigures,
  type BackupResponse,
  ClearRequest,
  type ClearResponse,
  CreateSessionRequest,
  type CreateSessionResponse,
  DeleteRequest,
  type DeleteResponse,
  DeleteEntriesRequest,
  type DeleteEntriesResponse,
  EditTailRequest,
  type EditTailResponse,
  EndRunRequest,
  type EndRunResponse,
  EventKind,
  type ExportResponse,
  ForkSessionRequest,
  type ForkSessionResponse,
  GetScopeStatesRequest,
  type GetScopeStatesResponse,
  type GetStatsResponse,
  GetUsageReportRequest,
  type GetUsageReportResponse,
  GetUsageRequest,
  type GetUsageResponse,
  ImportMode,
  ImportRequest,
  type ImportResponse,
  type InFlightCall,
  ListSessionsRequest,
  type ListSessionsResponse,
  LoadRequest,
  type LoadResponse,
  type Message,
  PingRunRequest,
  type PingRunResponse,
  RecordEventRequest,
  type RecordEventResponse,
  RecordUsageRequest,
  type RecordUsageResponse,
  type Repair,
  Role,
  SearchRequest,
  type SearchResponse,
  type Session,
  UpdateSessionRequest,
  type UpdateSessionResponse,
  WatchAllRequest,
  type WatchAllResponse,
  WatchRequest,
  type WatchResponse,
} from "./gen/claw/sessiond/v1/sessiond";
import { type AppendOptions, appendRequest, appendResult, type MessageInput, message, roleName } from "./messages";
import { AppendWriter, follow, readAll } from "./streams";
import { tcpTrust } from "./tcp";

export { type CallOptions } from "./connection";
export { type AppendOptions, assistant, type MessageInput, message, roleName, system, tool, user } from "./messages";
export { AppendWriter } from "./streams";

/** Options of a {@link SessionClient}. */
export interface ClientOptions {
  /**
   * Workspace folder, or a folder inside one (default: the current folder): the nearest of it and its
   * parents holding `.claw/` is the workspace, which must be yours (see {@link findWorkspace}).
   */
  workspace?: string;
  /** Dial this socket instead of discovering it. */
  socket?: string;
  /**
   * Dial this `host:port` (a daemon's `--tcp` listener) instead: over TLS trusting only the daemon's
   * certificate, then the token (docs/PROTOCOL.md "TCP"). No auto-start.
   */
  address?: string;
  /** Over TCP: the daemon's token (default: the workspace's `.claw/tcp-token`, else `$CLAW_TOKEN`). */
  token?: string;
  /**
   * Over TCP: a file holding the daemon's certificate, the only one trusted (default: the workspace's
   * `.claw/tcp-cert.pem` when `workspace` is given, else the file `$CLAW_TLS_CERT` names).
   */
  tlsCert?: string;
  /** Start a daemon when none answers (default true). */
  autostart?: boolean;
  /** The daemon command for auto-start (default `claw-sessiond`, or `$CLAW_SESSIOND_COMMAND`). */
  command?: string[];
  /** Deadline of one call (each attempt) in ms (default 30000); a call's own `timeoutMs` overrides it. */
  timeoutMs?: number;
  /** How long retryable failures are retried with the same request id, in ms (default 10000). */
  retryWindowMs?: number;
  /** Largest reply accepted, in bytes (default 20 MiB: one 16 MiB entry plus room). */
  maxReceiveBytes?: number;
}

/** What Load returns, assembled from its chunks. */
export interface LoadResult {
  session: Session;
  messages: Message[];
  repairs: Repair[];
  inFlight: InFlightCall[];
  /** False when a bounded read or a filter (`last`, `afterPosition`, `beforePosition`, `clientIds`, `clientIdPrefix`) left entries out. */
  complete: boolean;
  startPosition: number;
  traceId: string;
}

/** A run declared with Attach: tool calls appended with `runId` are in flight while it lives. */
export interface Run {
  runId: string;
  leaseSeconds: number;
  /** True if the daemon verified this process's pid with the kernel (Unix socket). */
  pidVerified: boolean;
  /** Settles when the run's stream ends (with the reason, if the daemon dropped it). */
  closed: Promise<SessiondError | undefined>;
  /**
   * Ends the run (EndRun) and resolves once its calls are no longer in flight: a Load or a new
   * Attach right after sees it gone.
   */
  end(opts?: CallOptions): Promise<void>;
}

/** A Watch event, with its message's role name ("user", ...; "" when the event carries no message). */
export type WatchEvent = WatchResponse & { roleName: string };
/** A WatchAll event (the start marker is not yielded), with its message's role name. */
export type WatchAllEvent = WatchAllResponse & { roleName: string };

function named<T extends { message?: Message | undefined }>(ev: T): T & { roleName: string } {
  return { ...ev, roleName: ev.message ? roleName(ev.message.role) : "" };
}

/** A client of one workspace's daemon. Call {@link SessionClient.close} when done. */
export class SessionClient {
  readonly workspace: string;
  private readonly conn: Connection;

  constructor(options: ClientOptions = {}) {
    this.workspace = options.workspace ? findWorkspace(options.workspace, true) : findWorkspace();
    this.conn = new Connection({
      workspace: this.workspace,
      fixedSocket: options.socket,
      tcp: options.address ? tcpTrust(options.address, options) : undefined,
      autostart: (options.autostart ?? true) && !options.address,
      command: options.command,
      timeoutMs: options.timeoutMs ?? 30_000,
      retryWindowMs: options.retryWindowMs ?? 10_000,
      maxBytes: options.maxReceiveBytes ?? 20 * 1024 * 1024,
    });
  }

  /** The socket this client dials (found anew after a lost connection: docs/PROTOCOL.md "Discovery"). */
  get socket(): string {
    return this.conn.socket;
  }

  /** Closes the channel (open streams end). */
  close(): void {
    this.conn.close();
  }

  /** A unary call, its request checked first, retried with the same request while transient (`retry`). */
  private unary<Req, Res>(method: string, req: Req, opts: CallOptions, retry = true): Promise<Res> {
    try {
      checkText(req);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.conn.run(opts, (stub, deadline) => this.conn.unary<Req, Res>(stub, method, req, deadline, opts.signal), retry);
  }

  /** Reads a session (repairing interrupted tool calls unless `noRepair`), assembling Load's chunks. */
  async load(
    sessionId: string,
    opts: CallOptions & {
      workdir?: string;
      noRepair?: boolean;
      last?: number;
      afterPosition?: number;
      /** Only entries before this position (with `last`: paging backwards; with `afterPosition`: a range). */
      beforePosition?: number;
      /** Point read: only the visible entries with these client ids (ids not stored are absent). */
      clientIds?: string[];
      /** Range read: only the visible entries whose client id starts with this. */
      clientIdPrefix?: string;
    } = {},
  ): Promise<LoadResult> {
    const req = LoadRequest.fromPartial({
      sessionId,
      workdir: opts.workdir ?? process.cwd(),
      noRepair: opts.noRepair ?? false,
      last: opts.last ?? 0,
      afterPosition: opts.afterPosition ?? 0,
      beforePosition: opts.beforePosition ?? 0,
      clientIds: opts.clientIds ?? [],
      clientIdPrefix: opts.clientIdPrefix ?? "",
    });
    checkText(req);
    return this.conn.run(opts, (stub, deadline) => {
      let first: LoadResponse | undefined;
      const messages: Message[] = [];
      let done = false;
      return readAll(
        (dl) => stub.load(req, { deadline: dl }) as ClientReadableStream<LoadResponse>,
        deadline,
        (chunk: LoadResponse) => {
          first ??= chunk;
          messages.push(...chunk.messages);
          if (chunk.done) done = true;
        },
        (): LoadResult => {
          if (!first || !done || !first.session) throw new UnavailableError("Load ended before its last chunk", 14);
          const { session, repairs, inFlight, complete, startPosition, traceId } = first;
          return { session, messages, repairs, inFlight, complete, startPosition, traceId };
        },
        opts.signal,
      );
    });
  }

  /** Appends messages, all or none. A request id is made if none is given, so a retry never writes twice. */
  async append(sessionId: string, messages: MessageInput[], opts: CallOptions & AppendOptions = {}): Promise<AppendResponse> {
    const req = appendRequest(sessionId, messages, opts);
    return appendResult(await this.unary<typeof req, AppendResponse>("append", req, opts), req);
  }

  /** Adds token counts and cost to the session's totals. */
  async recordUsage(sessionId: string, usage: Partial<RecordUsageRequest>, opts: CallOptions = {}): Promise<RecordUsageResponse> {
    const req = RecordUsageRequest.fromPartial({ requestId: randomUUID(), ...usage, sessionId });
    const res = await this.unary<RecordUsageRequest, RecordUsageResponse>("recordUsage", req, opts);
    if (!res?.usage) throw new InternalError("the reply to RecordUsage holds no totals: the usage is not known to be recorded", -1, "INTERNAL");
    return res;
  }

  /** Empties the visible history (`erase`: also removes it from the log). */
  clear(sessionId: string, opts: CallOptions & { erase?: boolean; expectedLastPosition?: number; requestId?: string } = {}): Promise<ClearResponse> {
    const req = ClearRequest.fromPartial({
      sessionId,
      erase: opts.erase ?? false,
      expectedLastPosition: opts.expectedLastPosition ?? 0,
      requestId: opts.requestId ?? randomUUID(),
    });
    return this.unary("clear", req, opts);
  }

  /** Records a non-message event (`payload`: JSON text) in the session's log. */
  recordEvent(sessionId: string, kind: EventKind, payload: string, opts: CallOptions & { requestId?: string; traceId?: string } = {}): Promise<RecordEventResponse> {
    const req = RecordEventRequest.fromPartial({ sessionId, kind, payload, requestId: opts.requestId ?? randomUUID(), traceId: opts.traceId ?? "" });
    return this.unary("recordEvent", req, opts);
  }

  /** Removes the last entries (or those after a position) and appends replacements, atomically. */
  editTail(
    sessionId: string,
    opts: CallOptions & Partial<Omit<EditTailRequest, "replacements">> & { replacements?: MessageInput[] } = {},
  ): Promise<EditTailResponse> {
    const { signal, timeoutMs, deadline, replacements, ...fields } = opts;
    const req = EditTailRequest.fromPartial({ requestId: randomUUID(), ...fields, replacements: (replacements ?? []).map(message), sessionId });
    return this.unary("editTail", req, { signal, timeoutMs, deadline });
  }

  /**
   * Removes visible entries anywhere in the history, chosen by exactly one of `clientIds`,
   * `clientIdPrefix` or the range `fromPosition`..`toPosition` (inclusive; 0: to the end), recorded
   * as an edit event. A request id is made if none is given, so a retry never removes twice.
   */
  deleteEntries(sessionId: string, opts: CallOptions & Partial<Omit<DeleteEntriesRequest, "sessionId">> = {}): Promise<DeleteEntriesResponse> {
    const { signal, timeoutMs, deadline, ...fields } = opts;
    const req = DeleteEntriesRequest.fromPartial({ requestId: randomUUID(), ...fields, sessionId });
    return this.unary("deleteEntries", req, { signal, timeoutMs, deadline });
  }

  /** One page of sessions. */
  listSessions(opts: CallOptions & Partial<ListSessionsRequest> = {}): Promise<ListSessionsResponse> {
    const { signal, timeoutMs, deadline, ...fields } = opts;
    return this.unary("listSessions", ListSessionsRequest.fromPartial(fields), { signal, timeoutMs, deadline });
  }

  /** A session's usage totals, per model too. */
  usage(sessionId: string, opts: CallOptions = {}): Promise<GetUsageResponse> {
    return this.unary("getUsage", GetUsageRequest.fromPartial({ sessionId }), opts);
  }

  /** Usage over a time range, overall and per model (and per session with `bySession`). */
  usageReport(opts: CallOptions & Partial<GetUsageReportRequest> = {}): Promise<GetUsageReportResponse> {
    const { signal, timeoutMs, deadline, ...fields } = opts;
    return this.unary("getUsageReport", GetUsageReportRequest.fromPartial(fields), { signal, timeoutMs, deadline });
  }

  /** Erases a session. Retried like the others: a retry of a delete that took effect gets `SessionNotFoundError`. */
  delete(sessionId: string, opts: CallOptions = {}): Promise<DeleteResponse> {
    return this.unary("delete", DeleteRequest.fromPartial({ sessionId }), opts);
  }

  /** Daemon and database figures. */
  stats(opts: CallOptions = {}): Promise<GetStatsResponse> {
    return this.unary("getStats", {}, opts);
  }

  /** Full-text search over message content. */
  search(query: string, opts: CallOptions & Partial<Omit<SearchRequest, "query">> = {}): Promise<SearchResponse> {
    const { signal, timeoutMs, deadline, ...fields } = opts;
    return this.unary("search", SearchRequest.fromPartial({ ...fields, query }), { signal, timeoutMs, deadline });
  }

  /** Creates a session (labels, state, tool policy) before its first append. */
  createSession(sessionId: string, opts: CallOptions & Partial<Omit<CreateSessionRequest, "sessionId">> = {}): Promise<CreateSessionResponse> {
    const { signal, timeoutMs, deadline, ...fields } = opts;
    const req = CreateSessionRequest.fromPartial({ requestId: randomUUID(), ...fields, sessionId });
    return this.unary("createSession", req, { signal, timeoutMs, deadline });
  }

  /** Copies a session's history (up to a position) into a new session. */
  forkSession(
    sourceSessionId: string,
    sessionId: string,
    opts: CallOptions & Partial<Omit<ForkSessionRequest, "sourceSessionId" | "sessionId">> = {},
  ): Promise<ForkSessionResponse> {
    const { signal, timeoutMs, deadline, ...fields } = opts;
    const req = ForkSessionRequest.fromPartial({ requestId: randomUUID(), ...fields, sourceSessionId, sessionId });
    return this.unary("forkSession", req, { signal, timeoutMs, deadline });
  }

  /** Changes a session's state (deltas), labels or tool policy. */
  updateSession(sessionId: string, opts: CallOptions & Partial<Omit<UpdateSessionRequest, "sessionId">> = {}): Promise<UpdateSessionResponse> {
    const { signal, timeoutMs, deadline, ...fields } = opts;
    const req = UpdateSessionRequest.fromPartial({ requestId: randomUUID(), ...fields, sessionId });
    return this.unary("updateSession", req, { signal, timeoutMs, deadline });
  }

  /** The states of shared scopes. */
  scopeStates(scopes: string[], opts: CallOptions = {}): Promise<GetScopeStatesResponse> {
    return this.unary("getScopeStates", GetScopeStatesRequest.fromPartial({ scopes }), opts);
  }

  /**
   * A session's (or, with no id, every session's) export lines (JSON Lines), read whole: the
   * reply is held in memory (as large as the history it exports; the CLI's `export` streams a
   * large one to a file).
   */
  exportLines(sessionId = "", opts: CallOptions = {}): Promise<string[]> {
    return this.conn.run(opts, (stub, deadline) => {
      const lines: string[] = [];
      return readAll(
        (dl) => stub.export({ sessionId }, { deadline: dl }) as ClientReadableStream<ExportResponse>,
        deadline,
        (r: ExportResponse) => lines.push(r.line),
        () => lines,
        opts.signal,
      );
    });
  }

  /**
   * Imports export lines (one session). Not retried by the client: Import takes no request id,
   * and a retry of one that took effect would be refused (or, with `replace`, import again).
   */
  importLines(lines: string[], opts: CallOptions & { mode?: ImportMode } = {}): Promise<ImportResponse> {
    const req = ImportRequest.fromPartial({ lines, mode: opts.mode ?? ImportMode.IMPORT_MODE_UNSPECIFIED });
    return this.unary("import", req, opts, false);
  }

  /**
   * Copies the database: each chunk of the copy goes to `write` (awaited, in order); resolves with
   * the copy's figures. Not retried once a chunk was written (the copy would be torn).
   */
  async backup(write: (chunk: Uint8Array) => unknown, opts: CallOptions = {}): Promise<BackupFigures> {
    let wrote = false;
    return this.conn.run(
      opts,
      (stub, deadline) => {
        let figures: BackupFigures | undefined;
        let chain = Promise.resolve();
        return readAll(
          (dl) => stub.backup({}, { deadline: dl }) as ClientReadableStream<BackupResponse>,
          deadline,
          (r: BackupResponse) => {
            if (r.data.length > 0) {
              wrote = true;
              chain = chain.then(() => write(r.data) as Promise<void>);
            }
            figures = r.figures ?? figures;
          },
          () => chain.then(() => {
            if (!figures) throw new InternalError("the backup ended without its figures: the copy is not known to be whole", -1, "INTERNAL");
            return figures;
          }),
          opts.signal,
        );
      },
      true,
    ).then(
      (p) => p,
      (e) => {
        if (wrote && e instanceof UnavailableError) throw new UnavailableError(`the backup broke off after its first chunk: ${e.message}`, e.code, e.reason);
        throw e;
      },
    );
  }

  /**
   * Declares that this process runs the session. Resolves with the run once the daemon has
   * registered it (`timeoutMs`/`deadline` bound that wait, `signal` cancels it). The run lives
   * while its stream's connection is open.
   */
  attach(sessionId: string, opts: CallOptions & { label?: string; pingTimeoutSeconds?: number } = {}): Promise<Run> {
    const req = AttachRequest.fromPartial({ sessionId, pid: process.pid, label: opts.label ?? "", pingTimeoutSeconds: opts.pingTimeoutSeconds ?? 0 });
    checkText(req);
    return this.conn.run(opts, (stub, deadline) => this.attachOnce(stub, req, deadline, opts.signal));
  }

  private attachOnce(stub: Stub, req: AttachRequest, deadline: Date, signal?: AbortSignal): Promise<Run> {
    const stream = stub.attach(req) as ClientReadableStream<AttachResponse>;
    return new Promise((resolve, reject) => {
      let run: Run | undefined;
      let settle!: (e: SessiondError | undefined) => void;
      const closed = new Promise<SessiondError | undefined>((r) => (settle = r));
      const onAbort = (): void => stream.cancel();
      const timer = setTimeout(() => {
        stream.cancel();
        reject(new DeadlineError("Attach: no reply before the call's deadline", 4, "DEADLINE_EXCEEDED"));
      }, Math.max(0, deadline.getTime() - Date.now()));
      signal?.addEventListener("abort", onAbort, { once: true });
      stream.on("data", (reply: AttachResponse) => {
        if (run) return;
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        const runId = reply.runId;
        run = {
          runId,
          leaseSeconds: reply.leaseSeconds,
          pidVerified: reply.pidVerified,
          closed,
          end: async (o: CallOptions = {}) => {
            try {
              await this.endRun(runId, o);
            } finally {
              stream.cancel();
            }
          },
        };
        resolve(run);
      });
      stream.on("error", (e: ServiceError) => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        const ended = run && (e.code === 1 || errorInfo(e.metadata)?.metadata.cause === "ended");
        const err = ended ? undefined : fromServiceError(e);
        if (!run && err) reject(err);
        settle(err);
      });
      stream.on("end", () => settle(undefined));
    });
  }

  /** Ends a run and returns once its calls are no longer in flight; `wasLive` false if it already was not. */
  endRun(runId: string, opts: CallOptions = {}): Promise<EndRunResponse> {
    return this.unary("endRun", EndRunRequest.fromPartial({ runId }), opts);
  }

  /** Renews a run that asked for ping liveness. */
  pingRun(runId: string, opts: CallOptions = {}): Promise<PingRunResponse> {
    return this.unary("pingRun", PingRunRequest.fromPartial({ runId }), opts);
  }

  /**
   * Follows a session's history events after `afterPosition`. When the daemon drops a watcher
   * that fell behind (WATCH_LAGGED), restarts, or the connection breaks, the watch resumes after
   * the last event received, on the same incarnation; other errors end the iteration by throwing.
   * The daemon packs events into batches (`WatchRequest.batch`); this yields them one at a time,
   * each with its role's name (`roleName`). `signal` ends the iteration; a `break` releases the
   * stream at once. The request names this process (`WatchRequest.pid`): on the Unix socket the
   * daemon confirms it with the kernel and counts the stream against this process's share.
   */
  watch(sessionId: string, opts: CallOptions & { afterPosition?: number } = {}): AsyncGenerator<WatchEvent> {
    let after = opts.afterPosition ?? 0;
    let incarnation = "";
    return follow<WatchRequest, WatchResponse, WatchEvent>(
      this.conn,
      "Watch",
      (stub, req, deadline) => stub.watch(req, deadline ? { deadline } : {}) as ClientReadableStream<WatchResponse>,
      {
        request: () => WatchRequest.fromPartial({ sessionId, afterPosition: after, incarnation, batch: true, pid: process.pid }),
        accept: (reply) =>
          (reply.events.length > 0 ? reply.events : [reply]).filter((ev) => ev.position > after).map((ev) => {
            after = ev.position;
            incarnation = ev.incarnation;
            return named(ev);
          }),
      },
      opts,
    );
  }

  /**
   * Follows every session's history events (after the last `last` ones, at most 1000), resumed
   * after lag and restarts from the last event id received, like {@link SessionClient.watch}.
   */
  watchAll(opts: CallOptions & { last?: number } = {}): AsyncGenerator<WatchAllEvent> {
    let after = 0;
    let resume = false;
    return follow<WatchAllRequest, WatchAllResponse, WatchAllEvent>(
      this.conn,
      "WatchAll",
      (stub, req, deadline) => stub.watchAll(req, deadline ? { deadline } : {}) as ClientReadableStream<WatchAllResponse>,
      {
        request: () => WatchAllRequest.fromPartial({ afterEventId: after, last: resume ? 0 : (opts.last ?? 0), resume, batch: true, pid: process.pid }),
        accept: (reply) => {
          if (reply.started) {
            if (!resume) after = reply.eventId;
            resume = true;
            return [];
          }
          return (reply.events.length > 0 ? reply.events : [reply]).filter((ev) => ev.eventId > after).map((ev) => {
            after = ev.eventId;
            return named(ev);
          });
        },
      },
      opts,
    );
  }

  /**
   * An AppendStream writer: many appends in flight on one stream, each with its own reply (in
   * order) and its own error. `signal` cancels the stream, `deadline` bounds it. Call `close()` when done.
   */
  async appendStream(opts: CallOptions = {}): Promise<AppendWriter> {
    const stub = await this.conn.run(opts, async (s) => s);
    const stream = stub.appendStream(opts.deadline ? { deadline: opts.deadline } : {}) as ClientDuplexStream<AppendStreamRequest, AppendStreamResponse>;
    return new AppendWriter(stream, checkText, opts.signal);
  }
}

export { EventKind, ImportMode, Role };
