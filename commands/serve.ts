import { Flags } from "@oclif/core";
import { GwCommand } from "../src/cli/gw-command.js";
import { serve } from "../src/cli/serve-command.js";
import { LOG_LEVELS, type LogFormat, type LogLevel } from "../src/server/server-logger.js";

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
    const refused = await serve({ ...flags, "log-level": flags["log-level"] as LogLevel, "log-format": flags["log-format"] as LogFormat | undefined });
    return this.exit(refused);
  }
}
