// What `gw serve` does once its command line is parsed, shared by the oclif command
// (commands/serve.ts) and the start-up fast path (fast-path.ts), so both start the same server the
// same way: the home made or refused, the TLS files checked, the home's serve lock taken, the
// server started, `listening on URL` as the first line on stdout, and SIGTERM / SIGINT draining it.
// Imports nothing from oclif: a server never pays for the CLI's command tree and plugins.
import path from "node:path";
import { initHome, isInitialised } from "../config/init-home.js";
import { homePaths, resolveHome } from "../config/paths.js";
import type { LogFormat, LogLevel } from "../server/server-logger.js";
import { type RunningServer, startServer } from "../server/start-server.js";
import { readTlsPair } from "../server/tls-pair.js";
import type { TlsOptions } from "../server/tls-setup.js";
import { type ServeLock, ServeLockedError, takeServeLock } from "../store/serve-lock.js";
import { listenFailure, missingHomeParent } from "./serve-start.js";

export interface ServeFlags {
  home?: string;
  init: boolean;
  host?: string;
  port?: number;
  https?: boolean;
  "tls-cert"?: string;
  "tls-key"?: string;
  "log-level": LogLevel;
  "log-format"?: LogFormat;
}

/**
 * Start the server and serve until a signal stops it (the process then exits 0, or 1 when the
 * drain failed). Resolves only with the exit status of a start that was refused (2 for a command
 * line wrong in itself, 1 for a failure), its reason already on stderr.
 */
export async function serve(flags: ServeFlags): Promise<number> {
  // --https beside the two files is allowed: they say which certificate the HTTPS serves.
  if (Boolean(flags["tls-cert"]) !== Boolean(flags["tls-key"])) {
    process.stderr.write("gw serve: --tls-cert and --tls-key go together: give both files (or --https alone for a self-signed certificate)\n");
    return 2;
  }
  const tls: TlsOptions | undefined =
    flags["tls-cert"] && flags["tls-key"]
      ? { certFile: path.resolve(flags["tls-cert"]), keyFile: path.resolve(flags["tls-key"]) }
      : flags.https
        ? { selfSigned: true }
        : undefined;
  const home = resolveHome(flags.home);
  if (!isInitialised(home)) {
    // A path that leads nowhere is more often a typo than a wish for a new home: refuse it unless asked.
    const missing = missingHomeParent(home);
    if (missing && !flags.init) {
      process.stderr.write(
        `gw serve: ${missing} does not exist, so ${home} cannot be a home yet (a typo in --home or GW_HOME?); pass --init to make it and the folders on the way\n`,
      );
      return 2;
    }
    process.stderr.write(`creating a new home at ${home}\n`);
    try {
      await initHome(home);
    } catch (error) {
      process.stderr.write(`gw serve: cannot create the home at ${home}: ${(error as Error).message}\n`);
      return 1;
    }
  }
  if (tls && "certFile" in tls) {
    // Checked before the home is claimed: a start that cannot serve is refused for its files,
    // whatever else runs on the home (startServer reads them again, and watches them).
    try {
      readTlsPair(tls.certFile, tls.keyFile);
    } catch (error) {
      process.stderr.write(`gw serve: ${(error as Error).message}\n`);
      return 1;
    }
  }
  let lock: ServeLock;
  try {
    lock = await takeServeLock(homePaths(home).dataDir);
  } catch (error) {
    if (!(error instanceof ServeLockedError)) throw error;
    process.stderr.write(
      `gw serve: ${error.message} (${home}): stop it first. Two servers on one home would each hold their own credit reservations and spend past the balances.\n`,
    );
    return 1;
  }
  let server: RunningServer;
  try {
    server = await startServer({ home, host: flags.host, port: flags.port, logLevel: flags["log-level"], logFormat: flags["log-format"], tls });
  } catch (error) {
    lock.release();
    // One plain line (oclif's error box wraps long paths), then a non-zero exit.
    process.stderr.write(`gw serve: ${listenFailure(error, homePaths(home).config) ?? (error as Error).message}\n`);
    return 1;
  }
  lock.listening(server.url);
  process.stdout.write(`listening on ${server.url}\n`);
  const stop = () => {
    server.shutdown().then(
      () => {
        lock.release();
        process.exit(0);
      },
      () => {
        lock.release();
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  return new Promise(() => undefined);
}
