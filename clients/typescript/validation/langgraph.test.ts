// LangGraph's checkpointer validation suite (@langchain/langgraph-checkpoint-validation, run by
// vitest: `npx vitest run --config validation/vitest.config.mjs`) against ClawCheckpointSaver and
// a real daemon (test/langgraph_initializer.ts).
import { validate } from "@langchain/langgraph-checkpoint-validation";
import initializer from "../test/langgraph_initializer";

validate(initializer);
