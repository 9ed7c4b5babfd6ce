import { runDoctor } from "../src/cli/doctor-checks.js";
import { jsonFlag } from "../src/cli/flags.js";
import { GwCommand } from "../src/cli/gw-command.js";
import { printLine } from "../src/cli/output.js";
import { resolveHome } from "../src/config/paths.js";

export default class Doctor extends GwCommand {
  static override description =
    "Check node, media engines (ffmpeg, espeak-ng, tesseract), the config, the ${NAME} variables it reads, which routable models are billed at the default price, " +
    "the data dir, the state and blob drivers (on Redis: that it answers, its version, maxmemory-policy noeviction, persistence and memory; an S3 bucket answers), " +
    "agents, keys and usage where the servers keep them, and the balances (agents, credits used this month and in all). " +
    "Exits non-zero when the config or data is broken, a variable the config reads is not set, or Redis or the bucket is unreachable or set up so that it can lose credits.";
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag };

  async run() {
    const { flags } = await this.parse(Doctor);
    const report = await runDoctor(resolveHome(flags.home));
    if (!report.ok) process.exitCode = 1;
    return this.shown(report, () => {
      const marks = { ok: "ok  ", warn: "warn", error: "FAIL" } as const;
      printLine(`home ${report.home}`);
      for (const check of report.checks) printLine(`${marks[check.status]}  ${check.name.padEnd(10)}  ${check.detail}`);
    });
  }
}
