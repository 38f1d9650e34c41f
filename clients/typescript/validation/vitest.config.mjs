// vitest's settings for the LangGraph validation suite (validation/langgraph.test.ts): its spec
// uses vitest's globals; one file, run in one fork.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: { globals: true, include: ["validation/**/*.test.ts"], pool: "forks", testTimeout: 30_000, hookTimeout: 30_000 },
});
