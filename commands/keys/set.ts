import { Args } from "@oclif/core";
import type { KeyLimitsBody } from "../../src/admin/admin-requests.js";
import { UsageError } from "../../src/cli/cli-error.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome, withMetadata } from "../../src/cli/home.js";
import { loadHomeConfig } from "../../src/cli/home-config.js";
import { keyLimitFlags, keyLimitsFrom } from "../../src/cli/key-limit-flags.js";
import { keyPlanNotes } from "../../src/cli/key-plan-notes.js";
import { note } from "../../src/cli/output.js";
import { remoteAdmin, remoteAdminFlags, remotely } from "../../src/cli/remote-admin.js";
import { setKeyLimits } from "../../src/store/provisioning.js";

export default class KeysSet extends GwCommand {
  static override description =
    "Change a key's own limits (a running server applies them to the next request). `none` removes a budget or rate limit, `never` an expiry, `all` a model restriction, `off` the cache lifetime.";
  static override examples = [
    "<%= config.bin %> keys set gw_3fK9 --budget 500000 --budget-period total",
    "<%= config.bin %> keys set gw_3fK9 --expires never --models all --rpm none",
    "<%= config.bin %> keys set gw_3fK9 --cache 2h",
  ];
  static override args = {
    prefix: Args.string({ description: "the key's visible prefix (as gw keys list shows it) or id", required: true }),
  };
  static override enableJsonFlag = true;
  static override flags = { ...keyLimitFlags, json: jsonFlag, ...remoteAdminFlags };

  async run() {
    const { args, flags } = await this.parse(KeysSet);
    const admin = remoteAdmin(flags);
    if (admin) {
      // The gateway keeps a budget's period when only the amount changes, and checks the cache lifetime against its config.
      const limits: KeyLimitsBody = keyLimitsFrom({ ...flags, "budget-period": undefined }, { now: new Date(), maxCacheTtlSeconds: Number.POSITIVE_INFINITY });
      const period = flags["budget-period"] as "month" | "total" | undefined;
      if (limits.budget) limits.budget = { credits: limits.budget.credits, ...(period === undefined ? {} : { period }) };
      else if (period !== undefined) {
        const budget = (await remotely(() => admin.keys())).find((key) => key.prefix.startsWith(args.prefix) || key.id === args.prefix)?.budget;
        if (!budget) throw new UsageError("--budget-period needs --budget CREDITS (this key has no budget)");
        limits.budget = { credits: budget.credits, period };
      }
      if (Object.keys(limits).length === 0)
        throw new UsageError("nothing to change: give at least one of --name, --budget, --budget-period, --expires, --models, --rpm, --tpm, --cache");
      const listing = await remotely(() => admin.updateKey(args.prefix, limits));
      return this.shown(listing, () => note(`key ${listing.prefix}… updated`));
    }
    const paths = await openHome(flags.home);
    const config = await loadHomeConfig(paths);
    const { record, agent } = await withMetadata(paths, async (store) => {
      const existing = store.data.keys.find((key) => key.revokedAt === null && (key.prefix.startsWith(args.prefix) || key.id === args.prefix));
      const limits = keyLimitsFrom(flags, { now: new Date(), maxCacheTtlSeconds: config.cache.maxTtlSeconds, existing });
      if (Object.keys(limits).length === 0)
        throw new UsageError("nothing to change: give at least one of --name, --budget, --budget-period, --expires, --models, --rpm, --tpm, --cache");
      const changed = await setKeyLimits(store, args.prefix, limits);
      return { record: changed, agent: store.data.agents.find((candidate) => candidate.id === changed.agentId) };
    });
    if (agent && flags.rpm !== undefined) for (const line of keyPlanNotes(config, { agent, key: record })) note(line);
    const { hash: _hash, ...shown } = record;
    return this.shown(shown, () => note(`key ${record.prefix}… updated`));
  }
}
