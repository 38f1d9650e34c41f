// claw-sessiond's TypeScript client (Node.js 20+). See README.md.
export * from "./client";
export * from "./discovery";
export * from "./errors";
export { AUTOSTART_WAIT_MS, INSTALL_HINT } from "./autostart";
export { CERT_ENV, CERT_FILE, SERVER_NAME, TOKEN_ENV, TOKEN_FILE } from "./tcp";
export * as proto from "./gen/claw/sessiond/v1/sessiond";
