// A short conversation from TypeScript, for the README and the interop check (scripts/interop):
// node dist/examples/conversation.js <workspace> <session id>
// Loads what others wrote, answers every open tool call it finds (as a harness would after
// running the tool), adds a user turn, and prints the history as JSON lines.
import { assistant, Role, SessionClient, tool, user } from "../src";

async function main(): Promise<void> {
  const [workspace, sessionId] = process.argv.slice(2);
  const client = new SessionClient({ workspace, autostart: false });
  try {
    const before = await client.load(sessionId, { workdir: workspace });
    const answered = new Set(before.messages.filter((m) => m.role === Role.ROLE_TOOL).map((m) => m.toolCallId));
    const open = before.messages.flatMap((m) => m.toolCalls).filter((c) => !answered.has(c.id));
    const last = before.session.lastPosition;
    await client.append(
      sessionId,
      [...open.map((c) => tool(c.id, `ran ${c.name} from TypeScript`)), user("thanks, from TypeScript"), assistant("you're welcome")],
      { expectedLastPosition: last },
    );
    const after = await client.load(sessionId, { workdir: workspace });
    for (const m of after.messages) {
      console.log(JSON.stringify({ position: m.position, role: Role[m.role], content: m.content, toolCallId: m.toolCallId }));
    }
  } finally {
    client.close();
  }
}

main().catch((e: Error & { reason?: string }) => {
  console.error(`${e.name}: ${e.message}${e.reason ? ` (${e.reason})` : ""}`);
  process.exit(1);
});
