// What `gw serve --https` / `--tls-cert --tls-key` serve: the certificate pair to start with, its
// fingerprint logged on stderr (stdout's first line stays `listening on https://...`), and for
// given files, the watch that swaps in renewed ones (docs/decisions.md §13).
import type { RequestListener, ServerOptions } from "node:http";
import { createServer, type Server } from "node:https";
import type { HomePaths } from "../config/paths.js";
import type { ServerLogger } from "./server-logger.js";
import { readTlsPair, type TlsPair } from "./tls-pair.js";
import { watchTlsPair } from "./tls-reload.js";
import { selfSignedPair } from "./tls-self-signed.js";

export type TlsOptions =
  /** A certificate made and kept in the home. */
  | { selfSigned: true }
  /** The operator's files, reloaded when they change. */
  | { certFile: string; keyFile: string; reloadIntervalMs?: number };

export interface PreparedTls {
  pair: TlsPair;
  /** The HTTPS server (with the plain server's `options`), watching given files for renewals. */
  createServer(handler: RequestListener, options: ServerOptions): Server;
  /** Stop watching the files (on shutdown). */
  stopWatching(): void;
}

const RELOAD_INTERVAL_MS = 1000;

export async function prepareTls(options: TlsOptions, paths: HomePaths, host: string, now: Date, logger: ServerLogger): Promise<PreparedTls> {
  if ("selfSigned" in options) {
    const { pair, madeBecause } = await selfSignedPair(paths, host, now);
    if (madeBecause !== null) logger.info(`made a self-signed TLS certificate in ${paths.tlsCert} (${madeBecause}) for ${pair.x509.subjectAltName}`);
    logger.info(describe(`self-signed certificate ${paths.tlsCert}`, pair));
    return {
      pair,
      createServer: (handler, serverOptions) => createServer({ ...serverOptions, cert: pair.cert, key: pair.key }, handler),
      stopWatching: () => undefined,
    };
  }
  const pair = readTlsPair(options.certFile, options.keyFile);
  logger.info(describe(`certificate ${options.certFile}`, pair));
  let stopWatching: () => void = () => undefined;
  return {
    pair,
    createServer(handler, serverOptions) {
      const server = createServer({ ...serverOptions, cert: pair.cert, key: pair.key }, handler);
      const watcher = watchTlsPair({
        certFile: options.certFile,
        keyFile: options.keyFile,
        intervalMs: options.reloadIntervalMs ?? RELOAD_INTERVAL_MS,
        current: pair,
        // New connections get the new pair; open ones finish on the one they started with.
        apply: (next) => server.setSecureContext({ cert: next.cert, key: next.key }),
        onReload: (next) => logger.info(describe(`reloaded certificate ${options.certFile}`, next)),
        onRejected: (message, kept) =>
          logger.warn(`TLS files changed but cannot be served: ${message}; still serving the certificate with SHA-256 fingerprint ${kept.fingerprint256}`),
      });
      stopWatching = () => watcher.close();
      return server;
    },
    stopWatching: () => stopWatching(),
  };
}

/** The line a client reads to pin the certificate. */
function describe(what: string, pair: TlsPair): string {
  return `TLS ${what}: SHA-256 fingerprint ${pair.fingerprint256}, valid until ${pair.validTo.toISOString()}`;
}
