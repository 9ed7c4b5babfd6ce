import { Command, Flags } from "@oclif/core";
import { resolveHome } from "../src/config/paths.js";
import { LOG_LEVELS, type LogFormat, type LogLevel } from "../src/server/server-logger.js";
import { type RunningServer, startServer } from "../src/server/start-server.js";

export default class Serve extends Command {
  static override summary = "Start the gateway server.";
  static override description =
    "Prints `listening on http://HOST:PORT` as its first line on stdout; logs (one access line per request, JSON lines unless stderr is a terminal) go to stderr. SIGTERM or SIGINT drains in-flight requests and streams, then exits 0.";
  static override flags = {
    home: Flags.string({ description: "gw home directory (default: $GW_HOME or ~/.gw)" }),
    host: Flags.string({ description: "address to listen on (default: config server.host)" }),
    port: Flags.integer({ description: "port to listen on; 0 picks a free port (default: config server.port)", min: 0, max: 65535 }),
    "log-level": Flags.string({
      description: "least severe log lines written (info includes one access line per request)",
      options: [...LOG_LEVELS],
      default: "info",
    }),
    "log-format": Flags.string({ description: "json lines, or readable lines (default: pretty on a terminal, json otherwise)", options: ["json", "pretty"] }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Serve);
    let server: RunningServer;
    try {
      server = await startServer({
        home: resolveHome(flags.home),
        host: flags.host,
        port: flags.port,
        logLevel: flags["log-level"] as LogLevel,
        logFormat: flags["log-format"] as LogFormat | undefined,
      });
    } catch (error) {
      // One plain line (oclif's error box wraps long paths), then a non-zero exit.
      process.stderr.write(`gw serve: ${(error as Error).message}\n`);
      return this.exit(1);
    }
    process.stdout.write(`listening on ${server.url}\n`);
    const stop = () => {
      server.shutdown().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
    await new Promise(() => undefined);
  }
}
