import path from "node:path";
import { Flags } from "@oclif/core";
import { GwCommand } from "../src/cli/gw-command.js";
import { listenFailure, missingHomeParent } from "../src/cli/serve-start.js";
import { initHome, isInitialised } from "../src/config/init-home.js";
import { homePaths, resolveHome } from "../src/config/paths.js";
import { LOG_LEVELS, type LogFormat, type LogLevel } from "../src/server/server-logger.js";
import { type RunningServer, startServer } from "../src/server/start-server.js";
import { readTlsPair } from "../src/server/tls-pair.js";
import type { TlsOptions } from "../src/server/tls-setup.js";
import { type ServeLock, ServeLockedError, takeServeLock } from "../src/store/serve-lock.js";

export default class Serve extends GwCommand {
  static override summary = "Start the gateway server.";
  static override description =
    "Prints `listening on http://HOST:PORT` (`https://` with --https or --tls-cert) as its first line on stdout; logs (one access line per request, JSON lines unless stderr is a terminal) go to stderr. SIGTERM or SIGINT drains in-flight requests and streams, then exits 0. --https serves a self-signed certificate made on first use and kept in HOME/tls (its SHA-256 fingerprint is logged on stderr at each start); --tls-cert with --tls-key serve your own files (e.g. certbot's fullchain.pem and privkey.pem) and pick up renewed files without a restart.";
  static override flags = {
    home: Flags.string({ description: "gw home directory (default: $GW_HOME or ~/.gw); a new one is made when it has no config.json yet" }),
    init: Flags.boolean({ description: "make the home even when its parent folder is missing (creating the folders on the way)", default: false }),
    host: Flags.string({ description: "address to listen on (default: config server.host)" }),
    port: Flags.integer({ description: "port to listen on; 0 picks a free port (default: config server.port)", min: 0, max: 65535 }),
    https: Flags.boolean({ description: "serve HTTPS with a self-signed certificate kept in HOME/tls (made on first use)" }),
    "tls-cert": Flags.string({ description: "serve HTTPS with this certificate file (PEM, chain after the leaf); needs --tls-key", helpValue: "FILE" }),
    "tls-key": Flags.string({ description: "the private key file (PEM) of --tls-cert", helpValue: "FILE" }),
    "log-level": Flags.string({
      description: "least severe log lines written (info includes one access line per request)",
      options: [...LOG_LEVELS],
      default: "info",
    }),
    "log-format": Flags.string({ description: "json lines, or readable lines (default: pretty on a terminal, json otherwise)", options: ["json", "pretty"] }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Serve);
    // --https beside the two files is allowed: they say which certificate the HTTPS serves.
    if (Boolean(flags["tls-cert"]) !== Boolean(flags["tls-key"])) {
      process.stderr.write("gw serve: --tls-cert and --tls-key go together: give both files (or --https alone for a self-signed certificate)\n");
      return this.exit(2);
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
        return this.exit(2);
      }
      process.stderr.write(`creating a new home at ${home}\n`);
      try {
        await initHome(home);
      } catch (error) {
        process.stderr.write(`gw serve: cannot create the home at ${home}: ${(error as Error).message}\n`);
        return this.exit(1);
      }
    }
    if (tls && "certFile" in tls) {
      // Checked before the home is claimed: a start that cannot serve is refused for its files,
      // whatever else runs on the home (startServer reads them again, and watches them).
      try {
        readTlsPair(tls.certFile, tls.keyFile);
      } catch (error) {
        process.stderr.write(`gw serve: ${(error as Error).message}\n`);
        return this.exit(1);
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
      return this.exit(1);
    }
    let server: RunningServer;
    try {
      server = await startServer({
        home,
        host: flags.host,
        port: flags.port,
        logLevel: flags["log-level"] as LogLevel,
        logFormat: flags["log-format"] as LogFormat | undefined,
        tls,
      });
    } catch (error) {
      lock.release();
      // One plain line (oclif's error box wraps long paths), then a non-zero exit.
      process.stderr.write(`gw serve: ${listenFailure(error, homePaths(home).config) ?? (error as Error).message}\n`);
      return this.exit(1);
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
    await new Promise(() => undefined);
  }
}
