import { Args, Flags } from "@oclif/core";
import { restoreHome } from "../src/cli/backup/restore-home.js";
import { jsonFlag } from "../src/cli/flags.js";
import { GwCommand } from "../src/cli/gw-command.js";
import { note, printLine } from "../src/cli/output.js";
import { resolveHome } from "../src/config/paths.js";

export default class Restore extends GwCommand {
  static override description =
    "Restore a `gw backup` archive into an empty or new home. Every file is checked against the archive's manifest (SHA-256) before anything is " +
    "written to the home; an archive with files outside the manifest, absolute or `..` paths, or links is refused. With --force a home that is not " +
    "empty has its gw files (config.json, data/, tls/) moved aside into .gw-replaced-<time>/ inside it, and everything else left as it is. Stop the server first.";
  static override examples = [
    "<%= config.bin %> restore gw-backup-20260315T120000Z.tar.gz --home /var/lib/gw",
    "ssh backup-host 'cat gw.tar.gz' | <%= config.bin %> restore - --home ./gw",
  ];
  static override args = { file: Args.string({ description: "the archive, or - for stdin", required: true }) };
  static override enableJsonFlag = true;
  static override flags = {
    force: Flags.boolean({ description: "restore into a home that is not empty (its gw files are moved aside, not deleted)", default: false }),
    json: jsonFlag,
  };

  async run() {
    const { args, flags } = await this.parse(Restore);
    const result = await restoreHome(args.file, resolveHome(flags.home), { force: flags.force });
    const { manifest } = result;
    const summary = {
      home: result.home,
      files: result.files,
      dataBytes: result.dataBytes,
      createdAt: manifest.createdAt,
      gwVersion: manifest.gwVersion,
      sourceHome: manifest.sourceHome,
      contents: manifest.contents,
      setAside: result.setAside,
      notes: result.notes,
    };
    return this.shown(summary, () => {
      const { agents, keys, storedFiles } = manifest.contents;
      printLine(`restored ${result.files} files (${result.dataBytes} bytes) into ${result.home}: ${agents} agents, ${keys} keys, ${storedFiles} stored files`);
      printLine(`  backup of ${manifest.sourceHome} taken ${manifest.createdAt} by gw ${manifest.gwVersion}`);
      if (result.setAside) printLine(`  the home's previous gw files were moved to ${result.setAside}`);
      for (const line of result.notes) note(`note: ${line}`);
    });
  }
}
