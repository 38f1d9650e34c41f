// The client's connection to its daemon: found (docs/PROTOCOL.md "Discovery"), trusted before
// anything is sent, started when none answers (auto-start), found again after it was lost (the
// endpoint file reread: a daemon restarted at another socket is followed), and every attempt of a
// call bounded by a deadline and an AbortSignal, retried with the same request while transient.
import { credentials, Metadata, type ServiceError } from "@grpc/grpc-js";
import { acceptsConnections, autostart, healthCheck } from "./autostart";
import { checkPeer, socketPath } from "./discovery";
import { DeadlineError, fromServiceError, InvalidRequestError, isRetryable, SessiondError, UnavailableError } from "./errors";
import { SessionServiceClient } from "./gen/claw/sessiond/v1/sessiond";
import { readSmall, TLS_OPTIONS, tcpCredentials, type TcpTrust, tlsRefusal } from "./tcp";

export type Stub = InstanceType<typeof SessionServiceClient>;

/** Options every call takes. */
export interface CallOptions {
  /** Aborting it cancels the call and its retries; the call then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Deadline of each attempt, in ms (default: the client's `timeoutMs`). */
  timeoutMs?: number;
  /** No attempt or retry goes past this instant (default: none beyond `timeoutMs` and the retry window). */
  deadline?: Date;
}

/** How long the health check that opens a TCP connection waits for the TLS handshake, in ms. */
const PROVE_MS = 5_000;
/** Pauses between attempts: doubling from the first to the last. */
const FIRST_PAUSE_MS = 25;
const MAX_PAUSE_MS = 1_000;
/** How many daemons one call may start (a daemon idle-exiting as the first start was awaited needs a second). */
const MAX_STARTS = 2;
/** A UTF-16 surrogate not part of a pair (with the u flag a pair is one code point). */
const LONE_SURROGATE = /\p{Surrogate}/u;
/** How deep a request's strings are looked for (a request is a few levels of messages). */
const MAX_DEPTH = 16;

/** The settings a {@link Connection} needs from the client's options. */
export interface ConnectionSettings {
  workspace: string;
  fixedSocket: string | undefined;
  tcp: TcpTrust | undefined;
  autostart: boolean;
  command: string[] | undefined;
  timeoutMs: number;
  retryWindowMs: number;
  maxBytes: number;
}

/** What an aborted call rejects with: the signal's reason (an `AbortError` unless one was given). */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("the call was aborted", "AbortError");
}

/** Waits `ms`, or less when `signal` aborts (then rejects with its reason). */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortReason(signal as AbortSignal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** `p`, or the signal's reason as soon as it aborts (`p` goes on for whoever else awaits it). */
export function abortable<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortReason(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

/**
 * Refuses a request holding text UTF-8 cannot carry (a lone UTF-16 surrogate, which the encoder
 * would silently store as U+FFFD), before anything is sent: the same rule as the Python client.
 */
export function checkText(value: unknown, where = "request", depth = 0): void {
  if (typeof value === "string") {
    if (LONE_SURROGATE.test(value)) {
      throw new InvalidRequestError(
        `${where} holds a lone UTF-16 surrogate, which UTF-8 cannot carry: request cannot be encoded (strings must be ` +
          "valid Unicode); nothing was sent",
        -1,
        "INVALID_MESSAGE",
        { field: where },
      );
    }
    return;
  }
  if (value === null || typeof value !== "object" || value instanceof Uint8Array || value instanceof Date || depth > MAX_DEPTH) return;
  for (const [key, item] of Object.entries(value)) {
    checkText(key, `${where} key`, depth + 1);
    checkText(item, Array.isArray(value) ? `${where}[${key}]` : `${where}.${key}`, depth + 1);
  }
}

/** The connection of one {@link SessionClient} (see the module comment). */
export class Connection {
  private current: { socket: string; stub: Stub; pinned?: Buffer } | undefined;
  /** A daemon answered once: when it is gone later it is likely restarting, so calls retry instead of failing at once. */
  private served = false;
  private closed = false;
  private connecting: Promise<Stub> | undefined;

  constructor(readonly settings: ConnectionSettings) {}

  /** The socket (or TCP address) dialled now, or the one discovery names. */
  get socket(): string {
    return this.current?.socket ?? this.settings.fixedSocket ?? socketPath(this.settings.workspace);
  }

  close(): void {
    this.closed = true;
    this.drop();
  }

  /**
   * A failure of the connection rather than an answer about the request: no daemon, the
   * connection lost, the daemon stopping. The next attempt finds the daemon again.
   */
  lost(err: SessiondError): boolean {
    return err instanceof UnavailableError && ["", "DAEMON_UNAVAILABLE", "SHUTTING_DOWN"].includes(err.reason);
  }

  /** No daemon runs, and none ever answered this client: fail at once rather than retry. */
  neverServed(err: SessiondError): boolean {
    return !this.served && err.reason === "DAEMON_UNAVAILABLE" && err.code === -1;
  }

  /** A daemon answered. */
  markServed(): void {
    this.served = true;
  }

  /**
   * Forgets the channel (only if it is still `stub`'s, when given: a call that failed on an older
   * channel leaves a newer one alone): the next attempt discovers the daemon again.
   */
  drop(stub?: Stub): void {
    if (stub && this.current?.stub !== stub) return;
    this.current?.stub.close();
    this.current = undefined;
  }

  /** The deadline of one attempt. */
  deadline(opts: CallOptions): Date {
    const own = Date.now() + (opts.timeoutMs ?? this.settings.timeoutMs);
    return new Date(opts.deadline ? Math.min(own, opts.deadline.getTime()) : own);
  }

  private newStub(target: string, creds = credentials.createInsecure(), extra: object = {}): Stub {
    return new SessionServiceClient(target, creds, {
      "grpc.max_receive_message_length": this.settings.maxBytes,
      "grpc.max_send_message_length": this.settings.maxBytes,
      // A daemon that was down (auto-start, restart) is dialled again within 250 ms, not after
      // grpc's default backoff of up to 120 s.
      "grpc.initial_reconnect_backoff_ms": 100,
      "grpc.max_reconnect_backoff_ms": 250,
      ...extra,
    });
  }

  /** Connects to a `--tcp` listener: TLS pinned to the daemon's certificate, proven before anything else is sent. */
  private async readyTcp(trust: TcpTrust): Promise<Stub> {
    const pem = readSmall(trust.certPath);
    if (this.current && pem && this.current.pinned?.equals(pem)) return this.current.stub;
    this.drop(); // a restarted daemon has a new certificate: a new channel
    const stub = this.newStub(trust.address, tcpCredentials(trust, pem), TLS_OPTIONS);
    const answer = await healthCheck(stub, new Date(Date.now() + PROVE_MS));
    const refusal = typeof answer === "boolean" ? undefined : tlsRefusal(trust, answer.code, answer.details || answer.message, PROVE_MS);
    if (refusal) {
      stub.close();
      throw refusal;
    }
    this.current = { socket: trust.address, stub, pinned: pem };
    return stub;
  }

  /**
   * The stub to call: the current channel, else the daemon found anew (endpoint file first),
   * its socket and folder checked to be yours, and something accepting connections there; when
   * nothing does, a daemon is started if `start` (auto-start), else the call fails.
   */
  async ready(start: boolean, signal?: AbortSignal): Promise<Stub> {
    if (this.closed) throw new UnavailableError("this client is closed; create a new one", -1, "CLIENT_CLOSED");
    if (this.current && !this.settings.tcp) return this.current.stub;
    // One connection attempt at a time, shared by the calls waiting for it: concurrent calls
    // after a lost connection make one channel and start at most one daemon.
    this.connecting ??= this.connect(start).finally(() => (this.connecting = undefined));
    return abortable(this.connecting, signal);
  }

  private async connect(start: boolean): Promise<Stub> {
    const s = this.settings;
    if (s.tcp) return this.readyTcp(s.tcp);
    const socket = s.fixedSocket ?? socketPath(s.workspace);
    let answers = false;
    try {
      checkPeer(socket);
      answers = await acceptsConnections(socket);
    } catch (e) {
      if (!(e instanceof UnavailableError)) throw e; // an untrusted peer is never started over
    }
    if (!answers) {
      if (!start || s.fixedSocket) {
        throw new UnavailableError(
          `no daemon answers at ${socket}: no daemon runs for the workspace ${s.workspace}. Start one with: ` +
            `claw-sessiond serve --workspace ${s.workspace} (or leave the client's autostart on)`,
          -1,
          "DAEMON_UNAVAILABLE",
        );
      }
      await autostart(s.workspace, s.command);
      return this.connect(false);
    }
    this.current = { socket, stub: this.newStub(`unix:${socket}`) };
    return this.current.stub;
  }

  /**
   * Runs one call: `attempt` with the stub and the attempt's deadline, again (the same request:
   * the same request id) after a transient failure, within the retry window and `opts.deadline`.
   * After a lost connection the daemon is found again (a moved one followed, a gone one started).
   * No daemon at all, before one ever answered, fails at once. `retry` false: one attempt only.
   */
  async run<T>(opts: CallOptions, attempt: (stub: Stub, deadline: Date) => Promise<T>, retry = true): Promise<T> {
    const { signal } = opts;
    const until = Date.now() + this.settings.retryWindowMs;
    let wait = FIRST_PAUSE_MS;
    let starts = 0;
    for (;;) {
      if (signal?.aborted) throw abortReason(signal);
      let err: SessiondError;
      let stub: Stub | undefined;
      try {
        const canStart = this.settings.autostart && starts < MAX_STARTS;
        if (!this.current && canStart) starts++;
        stub = await this.ready(canStart, signal);
        const result = await attempt(stub, this.deadline(opts));
        this.served = true;
        return result;
      } catch (e) {
        if (signal?.aborted) throw abortReason(signal);
        if (!(e instanceof SessiondError)) throw e;
        err = e;
      }
      if (this.lost(err)) this.drop(stub);
      const next = Date.now() + wait;
      if (!retry || this.neverServed(err) || !isRetryable(err) || next > until || (opts.deadline && next > opts.deadline.getTime())) throw err;
      await pause(wait, signal);
      wait = Math.min(wait * 2, MAX_PAUSE_MS);
    }
  }

  /** A unary call as a promise, cancelled when `signal` aborts. */
  unary<Req, Res>(stub: Stub, method: string, req: Req, deadline: Date, signal?: AbortSignal): Promise<Res> {
    const fn = (stub as unknown as Record<string, (...a: unknown[]) => { cancel(): void }>)[method];
    return new Promise<Res>((resolve, reject) => {
      const call = fn.call(stub, req, new Metadata(), { deadline }, (e: ServiceError | null, r: Res) => {
        signal?.removeEventListener("abort", onAbort);
        if (e) reject(fromServiceError(e));
        else resolve(r);
      });
      const onAbort = (): void => call.cancel();
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
}

/** A deadline error raised by the client itself (a following stream's `deadline` passed). */
export function deadlinePassed(what: string): DeadlineError {
  return new DeadlineError(`${what}: the call's deadline passed`, 4, "DEADLINE_EXCEEDED");
}
