// How the client reaches a daemon's `--tcp` port (docs/PROTOCOL.md "TCP"): TLS that trusts only the
// certificate the daemon wrote to `.claw/tcp-cert.pem` at its start, then the token. Until the TLS
// handshake has proven the listener holds that certificate's key, nothing but a TLS ClientHello is
// sent: the token rides as call credentials, which grpc-js attaches only to calls on a verified
// secure connection. Over a Unix socket nothing of this applies.
import * as fs from "node:fs";
import * as path from "node:path";
import { type ChannelCredentials, credentials, Metadata } from "@grpc/grpc-js";
import { DeadlineError, SessiondError, UntrustedPeerError } from "./errors";

/** The daemon's certificate (PEM) inside `.claw/`. */
export const CERT_FILE = "tcp-cert.pem";
/** The daemon's token inside `.claw/`. */
export const TOKEN_FILE = "tcp-token";
/** Environment variable naming a file with the daemon's certificate. */
export const CERT_ENV = "CLAW_TLS_CERT";
/** Environment variable holding a token. */
export const TOKEN_ENV = "CLAW_TOKEN";
/** The name the daemon's certificate is issued to; checked whatever address is dialled. */
export const SERVER_NAME = "claw-sessiond";
/** A larger certificate or token file is not one (bounded reads). */
export const MAX_FILE_BYTES = 64 * 1024;
/** Channel options of a TCP channel. */
export const TLS_OPTIONS = { "grpc.ssl_target_name_override": SERVER_NAME };

/** Where a TCP client gets the certificate and the token (see {@link tcpTrust}). */
export interface TcpTrust {
  address: string;
  certPath: string | undefined;
  tokenPath: string | undefined;
  token: string | undefined;
  /** The workspace's `.claw/` when the certificate comes from there (checked before it is trusted). */
  clawDir: string | undefined;
}

/**
 * The certificate: `tlsCert`, else `<workspace>/.claw/tcp-cert.pem` when a workspace was given,
 * else the file `$CLAW_TLS_CERT` names. The token: `token`, else the workspace's `.claw/tcp-token`
 * (re-read at each call), else `$CLAW_TOKEN`. A workspace is never guessed for a TCP address.
 */
export function tcpTrust(address: string, opts: { workspace?: string; tlsCert?: string; token?: string }): TcpTrust {
  const claw = opts.workspace ? path.join(path.resolve(opts.workspace), ".claw") : undefined;
  const envCert = process.env[CERT_ENV];
  const certPath = opts.tlsCert ? path.resolve(opts.tlsCert) : claw ? path.join(claw, CERT_FILE) : envCert ? path.resolve(envCert) : undefined;
  return {
    address,
    certPath,
    tokenPath: opts.token ? undefined : claw ? path.join(claw, TOKEN_FILE) : undefined,
    token: opts.token ?? process.env[TOKEN_ENV],
    clawDir: opts.tlsCert ? undefined : claw,
  };
}

/**
 * Why the `.claw/` folder the certificate comes from cannot be trusted (another user owns it, or
 * others can write in it and so plant a certificate), or undefined. Root trusts the folder's owner.
 */
export function clawProblem(trust: TcpTrust): string | undefined {
  if (!trust.clawDir) return undefined;
  let st: fs.Stats;
  try {
    st = fs.lstatSync(trust.clawDir);
  } catch {
    return undefined; // no folder: no certificate either
  }
  const me = process.getuid?.() ?? -1;
  if (!st.isDirectory()) return `${trust.clawDir} is not a folder (a symlink or something else)`;
  if (me !== 0 && st.uid !== me) return `${trust.clawDir} belongs to uid ${st.uid}, not to you`;
  if ((st.mode & 0o022) !== 0) return `${trust.clawDir} is writable by others (mode ${(st.mode & 0o777).toString(8)})`;
  return undefined;
}

/** A small file's bytes, or undefined (missing, unreadable, not a regular file, empty or over the bound). */
export function readSmall(file: string | undefined): Buffer | undefined {
  if (!file) return undefined;
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK); // a planted FIFO cannot block
    if (!fs.fstatSync(fd).isFile()) return undefined;
    const buf = Buffer.alloc(MAX_FILE_BYTES + 1);
    const n = fs.readSync(fd, buf, 0, buf.length, 0);
    return n > 0 && n <= MAX_FILE_BYTES ? buf.subarray(0, n) : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

function currentToken(trust: TcpTrust): string | undefined {
  const fromFile = readSmall(trust.tokenPath)?.toString().trim();
  return fromFile || trust.token;
}

/**
 * TLS credentials trusting only `pem`, with the token as call credentials.
 *
 * @throws UntrustedPeerError when there is no certificate: nothing is sent then.
 */
export function tcpCredentials(trust: TcpTrust, pem: Buffer | undefined): ChannelCredentials {
  const problem = clawProblem(trust);
  if (!pem || problem) {
    const where = problem ?? (trust.certPath ? `${trust.certPath} cannot be read` : "none was named");
    throw new UntrustedPeerError(
      `refusing to talk to ${trust.address}: no certificate to check the daemon against (${where}); nothing was sent. ` +
        `Over TCP a client trusts only the daemon's certificate: pass workspace (its .claw/${CERT_FILE}), tlsCert, or set $${CERT_ENV}`,
      -1,
      "UNTRUSTED_PEER",
      { address: trust.address },
    );
  }
  const token = credentials.createFromMetadataGenerator((_params, callback) => {
    const md = new Metadata();
    const value = currentToken(trust);
    if (value) md.set("authorization", `Bearer ${value}`);
    callback(null, md);
  });
  return credentials.combineChannelCredentials(credentials.createSsl(pem), token);
}

/**
 * The error for the health check that opens a TCP connection, or undefined to leave the failure
 * to the call (nothing listens). A failed TLS handshake means the listener is not the daemon whose
 * certificate this client holds; a deadline means the handshake never finished.
 */
export function tlsRefusal(trust: TcpTrust, code: number, details: string, waitedMs: number): SessiondError | undefined {
  if (code === 14 && /certificate|handshake|ssl|tls|EPROTO|wrong version|self.signed|socket hang up/i.test(details)) {
    return new UntrustedPeerError(
      `refusing to talk to ${trust.address}: the listener there did not prove it is the daemon (the TLS handshake with ` +
        `the certificate of ${trust.certPath} failed: ${details}); nothing was sent`,
      -1,
      "UNTRUSTED_PEER",
      { address: trust.address },
    );
  }
  if (code === 4) {
    return new DeadlineError(
      `${trust.address} accepts connections but did not complete the TLS handshake within ${waitedMs / 1000} s ` +
        "(a stopped daemon, or a listener that is not the daemon); nothing was sent",
      4,
      "DEADLINE_EXCEEDED",
      { address: trust.address },
    );
  }
  return undefined;
}
