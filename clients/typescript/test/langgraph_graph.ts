// A small LangGraph.js graph kept by ClawCheckpointSaver: `ask` stops at an interrupt for a human's
// answer, `finish` records it. test/langgraph.test.ts runs it up to the interrupt; this file, run as
// `node langgraph_graph.js <workspace> <thread> <answer>`, resumes it in a second process and prints
// the final state as JSON.
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { SessionClient } from "../src";
import { ClawCheckpointSaver } from "../src/langgraph";

const State = Annotation.Root({
  question: Annotation<string>(),
  answer: Annotation<string>(),
  log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

/** The graph, compiled with a saver of the daemon of `workspace`. */
export function buildGraph(client: SessionClient) {
  return new StateGraph(State)
    .addNode("ask", (s: typeof State.State) => {
      const answer = interrupt({ question: s.question }) as string;
      return { answer, log: [`asked ${s.question}`] };
    })
    .addNode("finish", (s: typeof State.State) => ({ log: [`answered ${s.answer}`] }))
    .addEdge(START, "ask")
    .addEdge("ask", "finish")
    .addEdge("finish", END)
    .compile({ checkpointer: new ClawCheckpointSaver(client) });
}

export { Command };

async function resume(workspace: string, thread: string, answer: string): Promise<void> {
  const client = new SessionClient({ workspace, autostart: false, timeoutMs: 15_000 });
  try {
    const out = await buildGraph(client).invoke(new Command({ resume: answer }), { configurable: { thread_id: thread } });
    process.stdout.write(JSON.stringify(out) + "\n");
  } finally {
    client.close();
  }
}

// Run as a script with its three arguments only (node's test runner loads this file too: then it does nothing).
if (require.main === module && process.argv.length === 5) {
  resume(process.argv[2], process.argv[3], process.argv[4]).catch((err) => {
    process.stderr.write(`${err}\n`);
    process.exit(1);
  });
}
