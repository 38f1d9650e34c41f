// The client's streams: reading a finite reply stream (Load, Export, Backup), following one
// (Watch, WatchAll: resumed after lag, restarts and lost connections, released on `break`), and
// writing many appends on one AppendStream.
import type { ClientDuplexStream, ClientReadableStream, ServiceError } from "@grpc/grpc-js";
import { abortReason, type CallOptions, type Connection, deadlinePassed, pause, type Stub } from "./connection";
import { DeadlineError, fromAppendError, fromServiceError, isRetryable, SessiondError, UnavailableError } from "./errors";
import type { AppendRequest, AppendResponse, AppendStreamRequest, AppendStreamResponse } from "./gen/claw/sessiond/v1/sessiond";
import { type AppendOptions, appendRequest, appendResult, type MessageInput } from "./messages";

/** Most resumptions of one following stream (each after a failure or lag). */
const MAX_RESUMES = 1000;

/**
 * Reads a finite reply stream to its end: `onReply` sees each reply, `finish` makes the result
 * once the stream ended. The call is cancelled when `signal` aborts; `deadline` bounds it.
 */
export function readAll<Reply, T>(
  open: (deadline: Date) => ClientReadableStream<Reply>,
  deadline: Date,
  onReply: (reply: Reply) => void,
  finish: () => T,
  signal?: AbortSignal,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const stream = open(deadline);
    const onAbort = (): void => stream.cancel();
    signal?.addEventListener("abort", onAbort, { once: true });
    const done = (): void => signal?.removeEventListener("abort", onAbort);
    stream.on("data", (reply: Reply) => {
      try {
        onReply(reply);
      } catch (e) {
        stream.cancel();
        done();
        reject(e);
      }
    });
    stream.on("error", (e: ServiceError) => {
      done();
      reject(fromServiceError(e));
    });
    stream.on("end", () => {
      done();
      try {
        resolve(finish());
      } catch (e) {
        reject(e);
      }
    });
  });
}

/** Where a following stream is: the request that resumes it, and which events are new. */
export interface Cursor<Req, Reply, Event> {
  request(): Req;
  /** The events of one reply to deliver, in order (those already delivered before a resume left out). */
  accept(reply: Reply): Event[];
}

/**
 * Follows a stream and yields its events one at a time. When the daemon drops a lagging watcher
 * (WATCH_LAGGED), restarts, or the connection is lost, the stream is opened again from the
 * cursor (the daemon found anew, a gone one auto-started once); other errors end the iteration by
 * throwing, and so does failing for the whole retry window. `signal` ends it quietly; a passed
 * `deadline` with a {@link DeadlineError}. A `break` or `return` in the caller's loop cancels the
 * stream at once (its slot on the daemon is freed).
 */
export async function* follow<Req, Reply, Event>(
  conn: Connection,
  name: string,
  open: (stub: Stub, req: Req, deadline: Date | undefined) => ClientReadableStream<Reply>,
  cursor: Cursor<Req, Reply, Event>,
  opts: CallOptions,
): AsyncGenerator<Event> {
  const { signal } = opts;
  let failingSince: number | undefined;
  let starts = 0;
  let wait = 50;
  for (let resumes = 0; resumes < MAX_RESUMES; resumes++) {
    if (signal?.aborted) return;
    let err: SessiondError;
    let stream: ClientReadableStream<Reply> | undefined;
    let stub: Stub | undefined;
    const onAbort = (): void => stream?.cancel();
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const canStart = conn.settings.autostart && starts < 1;
      if (canStart) starts++;
      stub = await conn.ready(canStart, signal);
      stream = open(stub, cursor.request(), opts.deadline);
      for await (const reply of stream as AsyncIterable<Reply>) {
        failingSince = undefined;
        wait = 50;
        conn.markServed();
        for (const ev of cursor.accept(reply)) yield ev;
      }
      err = new UnavailableError(`the daemon ended the ${name} stream`, 14);
    } catch (e) {
      if (signal?.aborted) return;
      if (!(e instanceof SessiondError) && (e as ServiceError).code === undefined) throw e;
      err = e instanceof SessiondError ? e : fromServiceError(e as ServiceError);
    } finally {
      stream?.cancel(); // a break or return in the caller's loop lands here: the stream is released
      signal?.removeEventListener("abort", onAbort);
    }
    if (opts.deadline && Date.now() >= opts.deadline.getTime()) throw err instanceof DeadlineError ? err : deadlinePassed(name);
    if (conn.lost(err)) conn.drop(stub);
    if (err.reason !== "WATCH_LAGGED" && !isRetryable(err)) throw err;
    if (conn.neverServed(err)) throw err;
    failingSince ??= Date.now();
    if (Date.now() - failingSince > conn.settings.retryWindowMs) throw err;
    try {
      await pause(wait, signal);
    } catch {
      return; // aborted while waiting
    }
    wait = Math.min(wait * 2, 1_000);
  }
  throw new UnavailableError(`${name} resumed ${MAX_RESUMES} times; giving up`, 14);
}

/** Appends over one AppendStream (see `SessionClient.appendStream`). */
export class AppendWriter {
  private readonly waiting: { req: AppendRequest; resolve: (r: AppendResponse) => void; reject: (e: unknown) => void }[] = [];
  private failed: unknown;

  constructor(
    private readonly stream: ClientDuplexStream<AppendStreamRequest, AppendStreamResponse>,
    private readonly check: (req: AppendRequest) => void,
    signal?: AbortSignal,
  ) {
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
    stream.on("error", (e: ServiceError) => this.fail(signal?.aborted ? abortReason(signal) : fromServiceError(e)));
    stream.on("end", () => this.fail(new UnavailableError("AppendStream ended", 14)));
    if (signal) {
      const onAbort = (): void => {
        this.fail(abortReason(signal));
        stream.cancel();
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
      stream.once("close", () => signal.removeEventListener("abort", onAbort));
    }
  }

  private fail(err: unknown): void {
    this.failed ??= err;
    for (const w of this.waiting.splice(0)) w.reject(this.failed);
  }

  /** Sends one append; resolves with its reply. A request id is made if none is given. */
  append(sessionId: string, messages: MessageInput[], opts: AppendOptions = {}): Promise<AppendResponse> {
    if (this.failed) return Promise.reject(this.failed);
    let req: AppendRequest;
    try {
      req = appendRequest(sessionId, messages, opts);
      this.check(req);
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise((resolve, reject) => {
      this.waiting.push({ req, resolve, reject });
      this.stream.write({ appends: [req] });
    });
  }

  /** Half-closes the stream once every reply has come. */
  close(): void {
    this.stream.end();
  }

  /** Cancels the stream now: appends still waiting for their reply fail (they may or may not be stored). */
  cancel(): void {
    this.stream.cancel();
  }
}
