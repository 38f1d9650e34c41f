// LangGraph's checkpointer validation suite (@langchain/langgraph-checkpoint-validation) against
// ClawCheckpointSaver and a real daemon: `npx validate-checkpointer ./dist/test/langgraph_initializer.js`
// (tests/e2e/test_typescript_client.py runs it). Each checkpointer the suite makes has its own
// saver prefix, so none sees another's threads; the daemon is stopped by its pid after the suite.
import { randomUUID } from "node:crypto";
import { SessionClient } from "../src";
import { ClawCheckpointSaver } from "../src/langgraph";
import { Daemon, tempWorkspace } from "./daemon";

let daemon: Daemon | undefined;
const clients = new Map<ClawCheckpointSaver, SessionClient>();

export default {
  checkpointerName: "ClawCheckpointSaver",
  beforeAllTimeout: 30_000,
  async beforeAll(): Promise<void> {
    daemon = await new Daemon(tempWorkspace("claw-lg-")).start();
  },
  async afterAll(): Promise<void> {
    await daemon?.stop();
  },
  createCheckpointer(): ClawCheckpointSaver {
    const client = new SessionClient({ workspace: daemon?.workspace, autostart: false, timeoutMs: 15_000 });
    const saver = new ClawCheckpointSaver(client, { prefix: "v" + randomUUID().replace(/-/g, "") });
    clients.set(saver, client);
    return saver;
  },
  destroyCheckpointer(saver: ClawCheckpointSaver): void {
    clients.get(saver)?.close();
    clients.delete(saver);
  },
};
