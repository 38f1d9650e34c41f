// The claw-sessiond client for Node.js: typed calls over the workspace's Unix socket, request ids
// and safe retry, chunked Load assembly, AppendStream, Watch with resume, and runs (Attach).
import { randomUUID } from "node:crypto";
import { credentials, Metadata, status as Code, type ClientDuplexStream, type ClientReadableStream, type ServiceError } from "@grpc/grpc-js";
import { checkPeer, findWorkspace, socketPath, spawnDaemon } from "./discovery";
import { errorInfo, fromAppendError, fromServiceError, InternalError, isRetryable, SessiondError, UnavailableError } from "./errors";
import {
  AppendRequest,
  type AppendResponse,
  type AppendStreamRequest,
  type AppendStreamResponse,
  type AttachResponse,
  ClearRequest,
  type ClearResponse,
  DeleteRequest,
  type DeleteResponse,
  EditTailRequest,
  type EditTailResponse,
  EndRunRequest,
  type EndRunResponse,
  PingRunRequest,
  type PingRunResponse,
  type GetStatsResponse,
  type InFlightCall,
  ListSessionsRequest,
  type ListSessionsResponse,
  LoadRequest,
  type LoadResponse,
  Message,
  type Repair,
  RecordUsageRequest,
  type RecordUsageResponse,
  Role,
  type Session,
  SessionServiceClient,
  type ToolCall,
  type WatchResponse,
} from "./gen/claw/sessiond/v1/sessiond";
import { readSmall, TLS_OPTIONS, tcpCredentials, type TcpTrust, tcpTrust, tlsRefusal } from "./tcp";

/** A message to append: role and text, plus whatever else the proto's Message allows. */
export type MessageInput = Partial<Message> & { role: Role };

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
  /** Deadline of one call in ms (default 30000). */
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
  /** False when a bounded read (`last`, `afterPosition`) left entries out. */
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
  end(): Promise<void>;
}

type UnaryMethod =
  | "append"
  | "recordUsage"
  | "clear"
  | "editTail"
  | "listSessions"
  | "delete"
  | "getStats"
  | "endRun"
  | "pingRun";

/** How long the health check that opens a TCP connection waits for the TLS handshake, in ms. */
const PROVE_MS = 5_000;

/**
 * The reply of an append, checked: an empty or malformed reply (no positions, or a span that is not
 * the number of messages sent) is never success.
 */
function appendResult(res: AppendResponse | undefined, req: AppendRequest): AppendResponse {
  const sent = req.messages.length;
  const span = res ? res.lastPosition - res.firstPosition + 1 : 0;
  if (!res || res.firstPosition < 1 || span < 1 || (span !== sent && !res.replayed)) {
    throw new InternalError(
      `the reply to an append of ${sent} message(s) to ${JSON.stringify(req.sessionId)} is malformed (positions ` +
        `${res?.firstPosition ?? "none"}..${res?.lastPosition ?? "none"}): the append is not known to be stored; Load the session to see what it holds`,
      -1,
      "INTERNAL",
    );
  }
  return res;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Builds a proto Message from an input (defaults for every unset field). */
export function message(input: MessageInput): Message {
  return Message.fromPartial(input as Parameters<typeof Message.fromPartial>[0]);
}

/** A user message. */
export const user = (content: string): MessageInput => ({ role: Role.ROLE_USER, content });
/** An assistant message, optionally with tool calls. */
export const assistant = (content: string, toolCalls: Partial<ToolCall>[] = []): MessageInput => ({
  role: Role.ROLE_ASSISTANT,
  content,
  toolCalls: toolCalls.map((c) => ({ id: "", name: "", arguments: "{}", pending: false, argumentsNotJson: false, ...c })),
});
/** A tool result answering `toolCallId`. */
export const tool = (toolCallId: string, content: string): MessageInput => ({ role: Role.ROLE_TOOL, toolCallId, content });

/** A client of one workspace's daemon. Call {@link SessionClient.close} when done. */
export class SessionClient {
  readonly workspace: string;
  private readonly fixedSocket: string | undefined;
  private readonly maxBytes: number;
  private current: { socket: string; stub: InstanceType<typeof SessionServiceClient>; pinned?: Buffer } | undefined;
  private readonly tcp: TcpTrust | undefined;
  private readonly timeoutMs: number;
  private readonly retryWindowMs: number;
  private readonly autostart: boolean;
  private readonly command: string[] | undefined;
  private started = false;

  constructor(options: ClientOptions = {}) {
    this.workspace = options.workspace ? findWorkspace(options.workspace, true) : findWorkspace();
    this.fixedSocket = options.socket;
    this.tcp = options.address ? tcpTrust(options.address, options) : undefined;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.retryWindowMs = options.retryWindowMs ?? 10_000;
    this.autostart = options.autostart ?? true;
    this.command = options.command;
    this.maxBytes = options.maxReceiveBytes ?? 20 * 1024 * 1024;
  }

  /** The socket this client dials (found at the first call: docs/PROTOCOL.md "Discovery"). */
  get socket(): string {
    return this.current?.socket ?? this.fixedSocket ?? socketPath(this.workspace);
  }

  private get stub(): InstanceType<typeof SessionServiceClient> {
    if (!this.current) throw new UnavailableError("not connected", -1, "DAEMON_UNAVAILABLE");
    return this.current.stub;
  }

  /** Closes the channel (open streams end). */
  close(): void {
    this.current?.stub.close();
  }

  private deadline(): Date {
    return new Date(Date.now() + this.timeoutMs);
  }

  /** Connects to a `--tcp` listener: TLS pinned to the daemon's certificate, proven before anything else is sent. */
  private async readyTcp(trust: TcpTrust): Promise<void> {
    const pem = readSmall(trust.certPath);
    if (this.current && pem && this.current.pinned?.equals(pem)) return;
    this.current?.stub.close(); // a restarted daemon has a new certificate: a new channel
    this.current = undefined;
    const stub = new SessionServiceClient(trust.address, tcpCredentials(trust, pem), {
      "grpc.max_receive_message_length": this.maxBytes,
      "grpc.max_send_message_length": this.maxBytes,
      ...TLS_OPTIONS,
    });
    const refusal = await new Promise<SessiondError | undefined>((resolve) => {
      const deadline = new Date(Date.now() + PROVE_MS);
      const raw = (b: Buffer): Buffer => b;
      stub.makeUnaryRequest("/grpc.health.v1.Health/Check", raw, raw, Buffer.alloc(0), new Metadata(), { deadline }, (e) =>
        resolve(e ? tlsRefusal(trust, e.code, e.details || e.message, PROVE_MS) : undefined),
      );
    });
    if (refusal) {
      stub.close();
      throw refusal;
    }
    this.current = { socket: trust.address, stub, pinned: pem };
  }

  /** Finds the daemon, checks the peer (and auto-starts a daemon once) before the first call. */
  private async ready(): Promise<void> {
    if (this.tcp) return this.readyTcp(this.tcp);
    if (this.current) return;
    const connect = (): void => {
      const socket = this.fixedSocket ?? socketPath(this.workspace);
      checkPeer(socket);
      // Run liveness rests on the connection and the kernel's view of the pid, never on this
      // process answering pings (docs/PROTOCOL.md "Runs"): no keepalive options are needed.
      const stub = new SessionServiceClient(`unix:${socket}`, credentials.createInsecure(), {
        "grpc.max_receive_message_length": this.maxBytes,
        "grpc.max_send_message_length": this.maxBytes,
      });
      this.current = { socket, stub };
    };
    try {
      connect();
      return;
    } catch (e) {
      if (!(e instanceof UnavailableError) || !this.autostart || this.started) throw e;
    }
    this.started = true;
    spawnDaemon(this.workspace, this.command);
    const until = Date.now() + 20_000;
    for (;;) {
      try {
        connect();
        return;
      } catch (e) {
        if (!(e instanceof UnavailableError) || Date.now() > until) throw e;
      }
      await sleep(50);
    }
  }

  /** Runs a unary call, retrying retryable failures (same request, same id) within the retry window. */
  private async unary<Req, Res>(method: UnaryMethod, req: Req): Promise<Res> {
    const until = Date.now() + this.retryWindowMs;
    let wait = 25;
    for (;;) {
      await this.ready(); // over TCP also after a failure: a restarted daemon has a new certificate
      const stub = this.stub;
      const fn = stub[method] as unknown as (
        req: Req,
        md: Metadata,
        opts: { deadline: Date },
        cb: (e: ServiceError | null, r: Res) => void,
      ) => unknown;
      try {
        return await new Promise<Res>((resolve, reject) => {
          fn.call(stub, req, new Metadata(), { deadline: this.deadline() }, (e, r) => (e ? reject(fromServiceError(e)) : resolve(r)));
        });
      } catch (e) {
        if (!isRetryable(e) || Date.now() + wait > until) throw e;
        await sleep(wait);
        wait = Math.min(wait * 2, 500);
      }
    }
  }

  /** Reads a session (repairing interrupted tool calls unless `noRepair`), assembling Load's chunks. */
  async load(
    sessionId: string,
    opts: { workdir?: string; noRepair?: boolean; last?: number; afterPosition?: number } = {},
  ): Promise<LoadResult> {
    await this.ready();
    const req = LoadRequest.fromPartial({
      sessionId,
      workdir: opts.workdir ?? process.cwd(),
      noRepair: opts.noRepair ?? false,
      last: opts.last ?? 0,
      afterPosition: opts.afterPosition ?? 0,
    });
    const until = Date.now() + this.retryWindowMs;
    for (;;) {
      try {
        await this.ready(); // over TCP also after a failure: a restarted daemon has a new certificate
        return await this.loadOnce(req);
      } catch (e) {
        if (!isRetryable(e) || Date.now() > until) throw e;
        await sleep(100);
      }
    }
  }

  private loadOnce(req: LoadRequest): Promise<LoadResult> {
    return new Promise((resolve, reject) => {
      const stream: ClientReadableStream<LoadResponse> = this.stub.load(req, { deadline: this.deadline() });
      let first: LoadResponse | undefined;
      const messages: Message[] = [];
      let done = false;
      stream.on("data", (chunk: LoadResponse) => {
        if (!first) first = chunk;
        messages.push(...chunk.messages);
        if (chunk.done) done = true;
      });
      stream.on("error", (e: ServiceError) => reject(fromServiceError(e)));
      stream.on("end", () => {
        if (!first || !done || !first.session) {
          reject(new UnavailableError("Load ended before its last chunk", Code.UNAVAILABLE));
          return;
        }
        resolve({
          session: first.session,
          messages,
          repairs: first.repairs,
          inFlight: first.inFlight,
          complete: first.complete,
          startPosition: first.startPosition,
          traceId: first.traceId,
        });
      });
    });
  }

  /** Appends messages, all or none. A request id is made if none is given, so a retry never writes twice. */
  append(
    sessionId: string,
    messages: MessageInput[],
    opts: { expectedLastPosition?: number; requestId?: string; runId?: string; workdir?: string } = {},
  ): Promise<AppendResponse> {
    const req = AppendRequest.fromPartial({
      sessionId,
      messages: messages.map(message),
      expectedLastPosition: opts.expectedLastPosition ?? 0,
      requestId: opts.requestId ?? randomUUID(),
      runId: opts.runId ?? "",
      workdir: opts.workdir ?? "",
    });
    return this.unary<AppendRequest, AppendResponse>("append", req).then((res) => appendResult(res, req));
  }

  /** Adds token counts and cost to the session's totals. */
  recordUsage(sessionId: string, usage: Partial<RecordUsageRequest>): Promise<RecordUsageResponse> {
    const req = RecordUsageRequest.fromPartial({ requestId: randomUUID(), ...usage, sessionId });
    return this.unary<RecordUsageRequest, RecordUsageResponse>("recordUsage", req).then((res) => {
      if (!res?.usage) throw new InternalError("the reply to RecordUsage holds no totals: the usage is not known to be recorded", -1, "INTERNAL");
      return res;
    });
  }

  /** Empties the visible history (`erase`: also removes it from the log). */
  clear(sessionId: string, opts: { erase?: boolean; expectedLastPosition?: number; requestId?: string } = {}): Promise<ClearResponse> {
    const req = ClearRequest.fromPartial({
      sessionId,
      erase: opts.erase ?? false,
      expectedLastPosition: opts.expectedLastPosition ?? 0,
      requestId: opts.requestId ?? randomUUID(),
    });
    return this.unary<ClearRequest, ClearResponse>("clear", req);
  }

  /** Removes the last entries (or those after a position) and appends replacements, atomically. */
  editTail(sessionId: string, opts: Partial<Omit<EditTailRequest, "replacements">> & { replacements?: MessageInput[] } = {}): Promise<EditTailResponse> {
    const req = EditTailRequest.fromPartial({
      requestId: randomUUID(),
      ...opts,
      replacements: (opts.replacements ?? []).map(message),
      sessionId,
    });
    return this.unary<EditTailRequest, EditTailResponse>("editTail", req);
  }

  /** One page of sessions. */
  listSessions(opts: Partial<ListSessionsRequest> = {}): Promise<ListSessionsResponse> {
    return this.unary<ListSessionsRequest, ListSessionsResponse>("listSessions", ListSessionsRequest.fromPartial(opts));
  }

  /** Erases a session. */
  delete(sessionId: string): Promise<DeleteResponse> {
    return this.unary<DeleteRequest, DeleteResponse>("delete", DeleteRequest.fromPartial({ sessionId }));
  }

  /** Daemon and database figures. */
  stats(): Promise<GetStatsResponse> {
    return this.unary<object, GetStatsResponse>("getStats", {});
  }

  /**
   * Declares that this process runs the session. Resolves with the run once the daemon has
   * registered it. The run lives while its stream's connection is open.
   */
  async attach(sessionId: string, opts: { label?: string; pingTimeoutSeconds?: number } = {}): Promise<Run> {
    await this.ready();
    const stream: ClientReadableStream<AttachResponse> = this.stub.attach({
      sessionId,
      pid: process.pid,
      label: opts.label ?? "",
      pingTimeoutSeconds: opts.pingTimeoutSeconds ?? 0,
    } as never);
    return new Promise((resolve, reject) => {
      let run: Run | undefined;
      let settle!: (e: SessiondError | undefined) => void;
      const closed = new Promise<SessiondError | undefined>((r) => (settle = r));
      stream.on("data", (reply: AttachResponse) => {
        if (run) return;
        const runId = reply.runId;
        run = {
          runId,
          leaseSeconds: reply.leaseSeconds,
          pidVerified: reply.pidVerified,
          closed,
          end: async () => {
            await this.endRun(runId);
            stream.cancel();
          },
        };
        resolve(run);
      });
      stream.on("error", (e: ServiceError) => {
        const ended = run && (e.code === Code.CANCELLED || errorInfo(e.metadata)?.metadata.cause === "ended");
        const err = ended ? undefined : fromServiceError(e);
        if (!run && err) reject(err);
        settle(err);
      });
      stream.on("end", () => settle(undefined));
    });
  }

  /** Ends a run and returns once its calls are no longer in flight; `wasLive` false if it already was not. */
  endRun(runId: string): Promise<EndRunResponse> {
    return this.unary<EndRunRequest, EndRunResponse>("endRun", EndRunRequest.fromPartial({ runId }));
  }

  /** Renews a run that asked for ping liveness. */
  pingRun(runId: string): Promise<PingRunResponse> {
    return this.unary<PingRunRequest, PingRunResponse>("pingRun", PingRunRequest.fromPartial({ runId }));
  }

  /**
   * Follows a session's history events after `afterPosition`. When the daemon drops a watcher
   * that fell behind (WATCH_LAGGED) or the connection breaks, the watch resumes after the last
   * event received, on the same incarnation; other errors end the iteration by throwing. The
   * daemon packs events into batches (`WatchRequest.batch`); this yields them one at a time.
   * The request names this process (`WatchRequest.pid`): on the Unix socket the daemon confirms
   * it with the kernel and counts the stream against this process's share of Watch streams.
   */
  async *watch(sessionId: string, opts: { afterPosition?: number; signal?: AbortSignal } = {}): AsyncGenerator<WatchResponse> {
    await this.ready();
    let after = opts.afterPosition ?? 0;
    let incarnation = "";
    for (let resumes = 0; resumes < 1000; resumes++) {
      const stream = this.stub.watch({ sessionId, afterPosition: after, incarnation, batch: true, pid: process.pid } as never) as ClientReadableStream<WatchResponse>;
      const abort = () => stream.cancel();
      opts.signal?.addEventListener("abort", abort);
      try {
        for await (const reply of stream as AsyncIterable<WatchResponse>) {
          for (const ev of reply.events.length > 0 ? reply.events : [reply]) {
            if (opts.signal?.aborted) return;
            if (ev.position <= after) continue; // already delivered before a resume
            after = ev.position;
            incarnation = ev.incarnation;
            yield ev;
          }
        }
        return;
      } catch (e) {
        if (opts.signal?.aborted) return;
        const err = fromServiceError(e as ServiceError);
        if (err.reason !== "WATCH_LAGGED" && !isRetryable(err)) throw err;
        await sleep(50);
      } finally {
        opts.signal?.removeEventListener("abort", abort);
      }
    }
    throw new UnavailableError("watch resumed 1000 times; giving up", Code.UNAVAILABLE);
  }

  /**
   * An AppendStream writer: many appends in flight on one stream, each with its own reply (in
   * order) and its own error. Call `close()` when done.
   */
  async appendStream(): Promise<AppendWriter> {
    await this.ready();
    return new AppendWriter(this.stub.appendStream() as ClientDuplexStream<AppendStreamRequest, AppendStreamResponse>);
  }
}

/** Appends over one AppendStream (see {@link SessionClient.appendStream}). */
export class AppendWriter {
  private readonly waiting: { req: AppendRequest; resolve: (r: AppendResponse) => void; reject: (e: unknown) => void }[] = [];
  private failed: SessiondError | undefined;

  constructor(private readonly stream: ClientDuplexStream<AppendStreamRequest, AppendStreamResponse>) {
    stream.on("data", (res: AppendStreamResponse) => {
      for (const reply of res.replies) {
        const w = this.waiting.shift();
        if (!w) continue;
        if (reply.error) w.reject(fromAppendError(reply.error));
        else {
          try {
            w.resolve(appendResult(reply.result, w.req)); // a reply with neither result nor error is malformed
          } catch (e) {
            w.reject(e);
          }
        }
      }
    });
    stream.on("error", (e: ServiceError) => this.fail(fromServiceError(e)));
    stream.on("end", () => this.fail(new UnavailableError("AppendStream ended", Code.UNAVAILABLE)));
  }

  private fail(err: SessiondError): void {
    this.failed ??= err;
    for (const w of this.waiting.splice(0)) w.reject(err);
  }

  /** Sends one append; resolves with its reply. A request id is made if none is given. */
  append(sessionId: string, messages: MessageInput[], opts: { expectedLastPosition?: number; requestId?: string; runId?: string } = {}): Promise<AppendResponse> {
    if (this.failed) return Promise.reject(this.failed);
    const req = AppendRequest.fromPartial({
      sessionId,
      messages: messages.map(message),
      expectedLastPosition: opts.expectedLastPosition ?? 0,
      requestId: opts.requestId ?? randomUUID(),
      runId: opts.runId ?? "",
    });
    return new Promise((resolve, reject) => {
      this.waiting.push({ req, resolve, reject });
      this.stream.write({ appends: [req] });
    });
  }

  /** Half-closes the stream once every reply has come. */
  close(): void {
    this.stream.end();
  }
}

export { Role };
