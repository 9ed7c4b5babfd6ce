import { Flags } from "@oclif/core";
import { type KeyListing, keyListing } from "../../src/admin/key-listing.js";
import { CliError } from "../../src/cli/cli-error.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome, withUsageHistory } from "../../src/cli/home.js";
import { loadHomeConfig } from "../../src/cli/home-config.js";
import { printTable } from "../../src/cli/output.js";
import { remoteAdmin, remoteAdminFlags, remotely } from "../../src/cli/remote-admin.js";
import { findAgent } from "../../src/store/provisioning.js";
import { formatLifetime } from "../../src/text/durations.js";

export default class KeysList extends GwCommand {
  static override description =
    "List API keys by visible prefix (keys and their hashes are never shown): label, agent, plan, the key's own limits (requests and tokens per minute, model patterns, budget; - where it has none and only its plan's apply), how long the response cache keeps its answers (when any key listed has a cache lifetime), credits spent in the budget's period (this month unless the budget is a lifetime one), expiry and last use.";
  static override enableJsonFlag = true;
  static override flags = {
    agent: Flags.string({ description: "only this agent's keys" }),
    revoked: Flags.boolean({ description: "include revoked keys", default: false }),
    json: jsonFlag,
    ...remoteAdminFlags,
  };

  async run() {
    const { flags } = await this.parse(KeysList);
    const admin = remoteAdmin(flags);
    const listing = admin ? await remotely(() => admin.keys({ agent: flags.agent, revoked: flags.revoked || flags.json })) : await this.localListing(flags);
    // Most homes give no key a cache lifetime: the column appears once one does, as REVOKED with --revoked.
    const withCache = listing.some((key) => key.cacheTtlSeconds !== null);
    return this.shown(listing, () => {
      printTable(
        [
          "NAME",
          "PREFIX",
          "AGENT",
          "PLAN",
          "RPM",
          "TPM",
          ...(withCache ? ["CACHE"] : []),
          "MODELS",
          "BUDGET",
          "SPENT",
          "EXPIRES",
          "LAST USED",
          ...(flags.revoked ? ["REVOKED"] : []),
        ],
        listing.map((key) => [
          key.name ?? "-",
          key.prefix,
          key.agent,
          key.plan,
          // The key's own limits; "-" where it has none and its plan's apply alone.
          key.rpm,
          key.tpm,
          ...(withCache ? [key.cacheTtlSeconds === null ? "-" : formatLifetime(key.cacheTtlSeconds)] : []),
          key.models?.join(","),
          key.budget ? `${key.budget.credits}/${key.budget.period}` : "-",
          key.spent,
          key.expiresAt ? `${key.expiresAt}${key.expired ? " (expired)" : ""}` : "never",
          key.lastUsedAt ?? "never",
          ...(flags.revoked ? [key.revokedAt ?? "-"] : []),
        ]),
        "no keys (create one with `gw keys create --agent NAME`)",
      );
    });
  }

  private async localListing(flags: { home?: string; agent?: string; revoked: boolean; json: boolean }): Promise<KeyListing[]> {
    const paths = await openHome(flags.home);
    const config = await loadHomeConfig(paths);
    // Spend and last use: this home's usage log, or on a Redis state the streams every instance writes.
    return withUsageHistory(paths, (data, history) => {
      const only = flags.agent === undefined ? undefined : findAgent(data, flags.agent);
      if (flags.agent !== undefined && !only) throw new CliError(`no agent "${flags.agent}"`);
      const keys = data.keys.filter((key) => (!only || key.agentId === only.id) && (flags.revoked || flags.json || key.revokedAt === null));
      return keyListing(config, data, history, keys, new Date());
    });
  }
}
