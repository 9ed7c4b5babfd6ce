import { Flags } from "@oclif/core";
import { takeBackup } from "../src/cli/backup/take-backup.js";
import { defaultArchiveName } from "../src/cli/backup/write-archive.js";
import { CliError } from "../src/cli/cli-error.js";
import { jsonFlag } from "../src/cli/flags.js";
import { GwCommand } from "../src/cli/gw-command.js";
import { openHome } from "../src/cli/home.js";
import { note } from "../src/cli/output.js";

export default class Backup extends GwCommand {
  static override description =
    "Write a consistent snapshot of the home (config, agents and keys, usage logs, stored files, projects, video jobs, signing key, TLS certificate) " +
    "to a .tar.gz with a manifest of SHA-256 checksums, while the server keeps serving. Uploads in flight are left out. " +
    "The summary goes to stdout, or to stderr when the archive does (-o -).";
  static override examples = [
    "<%= config.bin %> backup",
    "<%= config.bin %> backup --home /var/lib/gw -o /backups/gw-$(date +%F).tar.gz --json",
    "<%= config.bin %> backup -o - | ssh backup-host 'cat > gw.tar.gz'",
  ];
  static override enableJsonFlag = true;
  static override flags = {
    output: Flags.string({ char: "o", description: "archive to write, or - for stdout [default: ./gw-backup-<UTC time>.tar.gz]" }),
    json: jsonFlag,
  };

  async run() {
    const { flags } = await this.parse(Backup);
    const paths = await openHome(flags.home);
    const now = new Date();
    const output = flags.output ?? defaultArchiveName(now);
    if (output === "-" && process.stdout.isTTY) throw new CliError("refusing to write the archive to a terminal: redirect stdout, or pass -o FILE");
    const result = await takeBackup(paths, output, now);
    // The archive owns stdout when it goes there; the summary then goes to stderr.
    const print = (text: string) => (output === "-" ? process.stderr : process.stdout).write(`${text}\n`);
    const { manifest } = result;
    const summary = {
      path: result.path ?? "-",
      files: result.files,
      bytes: result.bytes,
      dataBytes: result.dataBytes,
      createdAt: manifest.createdAt,
      gwVersion: manifest.gwVersion,
      sourceHome: manifest.sourceHome,
      contents: manifest.contents,
      notes: result.notes,
    };
    if (this.jsonEnabled()) {
      // oclif prints a returned result on stdout, which the archive owns with -o -.
      if (output !== "-") return summary;
      print(JSON.stringify(summary, null, 2));
      return;
    }
    for (const line of result.notes) note(`note: ${line}`);
    const { agents, keys, storedFiles, usagePeriods } = manifest.contents;
    print(`wrote ${result.path ?? "stdout"}: ${result.files} files, ${result.bytes} bytes (${result.dataBytes} before compression)`);
    print(`  ${agents} agents, ${keys} keys, ${storedFiles} stored files, usage of ${usagePeriods.length} ${usagePeriods.length === 1 ? "month" : "months"}`);
  }
}
