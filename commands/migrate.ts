import { Flags } from "@oclif/core";
import { jsonFlag } from "../src/cli/flags.js";
import { GwCommand } from "../src/cli/gw-command.js";
import { openHome } from "../src/cli/home.js";
import { type MigrationSummary, migrateHome } from "../src/cli/migrate/migrate-home.js";
import { note, printLine } from "../src/cli/output.js";

export default class Migrate extends GwCommand {
  static override description =
    "Move an embedded home's state into Redis, so several `gw serve` instances can share it: the config, agents and keys, the whole usage " +
    "history (with the same balances), stored files (their bytes into S3 or a shared folder with --blobs-to), projects, video jobs and stored " +
    "responses. Refused while a `gw serve` runs on the home. Safe to run again after a run cut short. The home's config.json is switched to " +
    "Redis last, once the balances in Redis equal the home's; its embedded files are kept. S3 credentials are read from AWS_ACCESS_KEY_ID and " +
    "AWS_SECRET_ACCESS_KEY and written into the config as references to them.";
  static override examples = [
    "<%= config.bin %> migrate --to redis --redis-url redis://10.0.0.5:6379 --blobs-to s3 --s3-endpoint https://s3.eu-west-1.amazonaws.com --s3-bucket gw-files --s3-region eu-west-1",
    "REDIS_URL=redis://:secret@redis:6379 <%= config.bin %> migrate --to redis --redis-url '${REDIS_URL}' --blobs-to fs --blobs-dir /mnt/shared/gw-blobs",
  ];
  static override enableJsonFlag = true;
  static override flags = {
    to: Flags.option({ description: "where the state goes", options: ["redis"] as const, required: true })(),
    "redis-url": Flags.string({ description: "redis://[user:password@]host:port[/db], or '${NAME}' to keep a reference in the config", required: true }),
    prefix: Flags.string({ description: "prefix of every Redis key", default: "gw:" }),
    "blobs-to": Flags.option({
      description: "where the stored files' bytes go (needed when they are on this machine's disk)",
      options: ["s3", "fs"] as const,
    })(),
    "s3-endpoint": Flags.string({ description: "the S3 API's address (with --blobs-to s3)" }),
    "s3-bucket": Flags.string({ description: "the bucket (with --blobs-to s3)" }),
    "s3-region": Flags.string({ description: "the bucket's region (with --blobs-to s3) [default: us-east-1]" }),
    "blobs-dir": Flags.string({ description: "a folder every instance mounts (with --blobs-to fs)" }),
    json: jsonFlag,
  };

  async run() {
    const { flags } = await this.parse(Migrate);
    const paths = await openHome(flags.home);
    const summary = await migrateHome(paths, {
      redisUrl: flags["redis-url"],
      prefix: flags.prefix,
      blobsTo: flags["blobs-to"],
      s3Endpoint: flags["s3-endpoint"],
      s3Bucket: flags["s3-bucket"],
      s3Region: flags["s3-region"],
      blobsDir: flags["blobs-dir"],
    });
    return this.shown(summary, printSummary);
  }
}

function printSummary(summary: MigrationSummary): void {
  printLine(`migrated ${summary.home} to Redis ${summary.redis} (prefix ${summary.prefix}); files' bytes: ${summary.blobs}`);
  printLine(
    `  agents ${summary.agents}, keys ${summary.keys}, projects ${summary.projects}, responses ${summary.responses.copied} (${summary.responses.expired} past their retention not copied)`,
  );
  printLine(`  usage rows ${summary.usage.rows}: ${summary.usage.months.map((month) => `${month.period} ${month.rows}`).join(", ") || "none"}`);
  printLine(
    `  files ${summary.files.records} (${summary.files.bytes} bytes; ${summary.files.blobsCopied} blobs copied, ${summary.files.blobsPresent} already there), storage operations ${summary.operations}`,
  );
  printLine(`  video jobs ${summary.videoJobs.jobs} (${summary.videoJobs.running} running)`);
  printLine(`  batches ${summary.batches.batches} (${summary.batches.running} running)`);
  printLine("  credits used (this month, lifetime), home -> Redis:");
  for (const balance of summary.balances)
    printLine(`    ${balance.name}: ${balance.monthBefore} -> ${balance.monthAfter}, ${balance.lifetimeBefore} -> ${balance.lifetimeAfter}`);
  for (const line of summary.usage.skipped) note(`note: ${line}`);
  for (const line of summary.notes) note(`note: ${line}`);
}
