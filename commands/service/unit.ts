import { realpathSync } from "node:fs";
import path from "node:path";
import { Flags } from "@oclif/core";
import { GwCommand } from "../../src/cli/gw-command.js";
import { note } from "../../src/cli/output.js";
import { environmentFile, pathsUnderTemp, systemdUnit } from "../../src/cli/systemd-unit.js";
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
    const node = realpathSync(process.execPath);
    process.stdout.write(systemdUnit({ node, script, home, ...(flags.user !== undefined ? { user: flags.user } : {}) }));
    const underTemp = pathsUnderTemp({ home, node, script });
    if (underTemp.length > 0)
      note(
        `note: ${underTemp.join(" and ")} ${underTemp.length === 1 ? "is" : "are"} under /tmp or /var/tmp: the unit leaves PrivateTmp off so the service can see ${underTemp.length === 1 ? "it" : "them"}; old files there are cleaned away (systemd-tmpfiles), so a home belongs elsewhere (e.g. /var/lib/gw)`,
      );
    if (!isInitialised(home))
      note(`note: ${home} is not a gw home yet: run \`gw init --home ${home}\`${flags.user ? ` as ${flags.user}` : ""} before starting the service`);
    note(`note: vendor keys for \${NAME} references go in ${environmentFile(home)} (NAME=value lines, mode 600)`);
  }
}
