// Messages in and out: building a proto Message from a short input, role names, and the check
// that an append's reply says what was stored (docs/PROTOCOL.md: a reply is success only if it
// says what was done).
import { InternalError } from "./errors";
import { randomUUID } from "node:crypto";
import { AppendRequest, type AppendResponse, Message, Role, roleToJSON, type ToolCall } from "./gen/claw/sessiond/v1/sessiond";

/** A message to append: role and text, plus whatever else the proto's Message allows. */
export type MessageInput = Partial<Message> & { role: Role };

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
/** A system message. */
export const system = (content: string): MessageInput => ({ role: Role.ROLE_SYSTEM, content });

/**
 * The role's name as the Python client gives it: "system", "user", "assistant", "tool", "other"
 * ("unspecified" for 0, "unrecognized" for a number this client does not know).
 */
export function roleName(role: Role): string {
  return roleToJSON(role).replace(/^ROLE_/, "").toLowerCase();
}

/**
 * The reply of an append, checked: an empty or malformed reply (no positions, or a span that is not
 * the number of messages sent) is never success.
 */
export function appendResult(res: AppendResponse | undefined, req: AppendRequest): AppendResponse {
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

/** Options of one append. */
export interface AppendOptions {
  /** Append only if the session's last position is still this (else `SequenceConflictError`); 0: no check. */
  expectedLastPosition?: number;
  /** The request id (default: a new one): a retry with the same id returns the first result. */
  requestId?: string;
  /** The run (Attach) whose tool calls these are: in flight, never repaired, while it lives. */
  runId?: string;
  /** The session's working folder, stored when the append creates the session. */
  workdir?: string;
}

/** The AppendRequest of one append (Append, or one item of an AppendStream). */
export function appendRequest(sessionId: string, messages: MessageInput[], opts: AppendOptions = {}): AppendRequest {
  return AppendRequest.fromPartial({
    sessionId,
    messages: messages.map(message),
    expectedLastPosition: opts.expectedLastPosition ?? 0,
    requestId: opts.requestId ?? randomUUID(),
    runId: opts.runId ?? "",
    workdir: opts.workdir ?? "",
  });
}
