// claw-sessiond's TypeScript client (Node.js 20+). See README.md.
export * from "./client";
export * from "./discovery";
export * from "./errors";
export * as proto from "./gen/claw/sessiond/v1/sessiond";
