import { realpathSync } from "node:fs";
import path from "node:path";
import { Flags } from "@oclif/core";
import { GwCommand } from "../../src/cli/gw-command.js";
import { note } from "../../src/cli/output.js";
import { environmentFile, systemdUnit } from "../../src/cli/systemd-unit.js";
import { isInitialised } from "../../src/config/init-home.js";
import { resolveHome } from "../../src/config/paths.js";

export default class ServiceUnit extends GwCommand {
  static override description = [
    "Print a systemd unit that runs `gw serve` for a home: restarted on failure, vendor keys read from HOME/gw.env (NAME=value lines for the ${NAME} references of config.json), in a sandbox where the home is the only writable place.",
    "",
    "ExecStart names this Node and this gw by absolute path: print the unit again after moving or upgrading either.",
  ].join("\n");
  static override examples = [
    "<%= config.bin %> service unit --user gw --home /var/lib/gw | sudo tee /etc/systemd/system/gw.service",
    "sudo systemctl daemon-reload && sudo systemctl enable --now gw",
  ];
  static override flags = {
    user: Flags.string({ description: "the user the service runs as [default: root; a dedicated system user is better]" }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(ServiceUnit);
    const home = resolveHome(flags.home);
    // Real paths: a unit outlives the shell's symlinks and relative paths.
    const script = realpathSync(path.join(this.config.root, "bin", "run.js"));
    process.stdout.write(systemdUnit({ node: realpathSync(process.execPath), script, home, ...(flags.user !== undefined ? { user: flags.user } : {}) }));
    if (!isInitialised(home))
      note(`note: ${home} is not a gw home yet: run \`gw init --home ${home}\`${flags.user ? ` as ${flags.user}` : ""} before starting the service`);
    note(`note: vendor keys for \${NAME} references go in ${environmentFile(home)} (NAME=value lines, mode 600)`);
  }
}
