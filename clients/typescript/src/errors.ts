// Errors of the claw-sessiond client: one class per gRPC outcome a caller acts on, each with the
// daemon's machine-readable reason (google.rpc.ErrorInfo, domain "claw-sessiond") and metadata.
import { Metadata, status as Status, type ServiceError } from "@grpc/grpc-js";
import { ErrorInfo } from "./gen/google/rpc/error_details";
import { Status as RpcStatus } from "./gen/google/rpc/status";

/** The ErrorInfo domain of every error the daemon sends. */
export const ERROR_DOMAIN = "claw-sessiond";

/** Base of every error the client raises. */
export class SessiondError extends Error {
  /** gRPC status code (a number of `@grpc/grpc-js`'s `status`), or -1 when raised by the client. */
  readonly code: number;
  /** The ErrorInfo reason (for example "SEQUENCE_CONFLICT"); "" when the daemon sent none. */
  readonly reason: string;
  /** The ErrorInfo metadata (for example `expected` and `actual`). */
  readonly metadata: Record<string, string>;

  constructor(message: string, code: number, reason = "", metadata: Record<string, string> = {}) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.reason = reason;
    this.metadata = metadata;
  }

  /**
   * Transient: the same request (same request id) may succeed if sent again later, and never
   * writes twice (the daemon restarting or its storage busy, a deadline, a full Watch slot). False
   * when the request must change first, or an operator must act (a full disk, a corrupt database).
   */
  get retryable(): boolean {
    return false;
  }

  /** The status code's name ("ABORTED", ...), or "CLIENT" for errors raised by the client. */
  get codeName(): string {
    return this.code < 0 ? "CLIENT" : (Status[this.code] ?? String(this.code));
  }
}

/** The request is malformed; nothing was written. */
export class InvalidRequestError extends SessiondError {}
/** The session must exist and does not. */
export class SessionNotFoundError extends SessiondError {}
/** The session, or an entry's client id, already exists. */
export class AlreadyExistsError extends SessiondError {}
/** A precondition failed (unknown tool call, run owned elsewhere, unknown run, ...). */
export class PreconditionError extends SessiondError {}
/** The session changed since the expected last position: reload, then decide. */
export class SequenceConflictError extends SessiondError {}
/** Storage is full (STORAGE_FULL), or a stream limit was reached (TOO_MANY_STREAMS: retryable, a slot frees up). */
export class ResourceExhaustedError extends SessiondError {
  override get retryable(): boolean {
    return this.reason === "TOO_MANY_STREAMS";
  }
}
/**
 * The daemon is starting, stopping, gone, or its storage is busy: retryable with the same request
 * id; except reason CORRUPT_DATABASE (the database is damaged: not retryable).
 */
export class UnavailableError extends SessiondError {
  override get retryable(): boolean {
    return this.reason !== "CORRUPT_DATABASE";
  }
}
/** The call's deadline passed; a write may have committed (retryable: send it again with the same request id). */
export class DeadlineError extends SessiondError {
  override get retryable(): boolean {
    return true;
  }
}
/** The socket is not the workspace owner's daemon (or its folder could be tampered with); nothing was sent. */
export class UntrustedPeerError extends SessiondError {}
/** A bug in the daemon. */
export class InternalError extends SessiondError {}

const BY_CODE: Record<number, new (m: string, c: number, r?: string, md?: Record<string, string>) => SessiondError> = {
  [Status.INVALID_ARGUMENT]: InvalidRequestError,
  [Status.NOT_FOUND]: SessionNotFoundError,
  [Status.ALREADY_EXISTS]: AlreadyExistsError,
  [Status.FAILED_PRECONDITION]: PreconditionError,
  [Status.ABORTED]: SequenceConflictError,
  [Status.RESOURCE_EXHAUSTED]: ResourceExhaustedError,
  [Status.UNAVAILABLE]: UnavailableError,
  [Status.CANCELLED]: UnavailableError,
  [Status.DEADLINE_EXCEEDED]: DeadlineError,
};

/** The ErrorInfo of a status's `grpc-status-details-bin` trailer, if the daemon sent one. */
export function errorInfo(metadata: Metadata | undefined): ErrorInfo | undefined {
  const raw = metadata?.get("grpc-status-details-bin")[0];
  if (!raw || typeof raw === "string") return undefined;
  const st = RpcStatus.decode(raw);
  for (const detail of st.details) {
    if (detail.typeUrl.endsWith("/google.rpc.ErrorInfo")) {
      const info = ErrorInfo.decode(detail.value);
      if (info.domain === ERROR_DOMAIN) return info;
    }
  }
  return undefined;
}

/** Turns a grpc-js error into the client's typed error. */
export function fromServiceError(err: ServiceError): SessiondError {
  const info = errorInfo(err.metadata);
  const cls = BY_CODE[err.code] ?? InternalError;
  return new cls(err.details || err.message, err.code, info?.reason ?? "", info?.metadata ?? {});
}

/** An AppendStream reply's error as the same typed error a unary Append would raise. */
export function fromAppendError(e: { code: number; message: string; reason: string; metadata: Record<string, string> }): SessiondError {
  const cls = BY_CODE[e.code] ?? InternalError;
  return new cls(e.message, e.code, e.reason, e.metadata);
}

/**
 * Errors after which the client itself sends the same request (same request id) again, within its
 * retry window: the transient ones (`retryable`), except a refused stream slot (waiting for one is
 * the caller's decision).
 */
export function isRetryable(err: unknown): boolean {
  return err instanceof SessiondError && err.retryable && !(err instanceof ResourceExhaustedError);
}
