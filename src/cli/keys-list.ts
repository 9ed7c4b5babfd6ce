// `gw keys list`: the listing and its table, shared by the oclif command (commands/keys/list.ts)
// and the start-up fast path (fast-path.ts), so that both list and draw alike.
import { type KeyListing, keyListing } from "../admin/key-listing.js";
import { findAgent } from "../store/provisioning.js";
import { formatLifetime } from "../text/durations.js";
import { CliError } from "./cli-error.js";
import type { CommandOutcome } from "./command-outcome.js";
import { openHome, withUsageHistory } from "./home.js";
import { loadHomeConfig } from "./home-config.js";
import { printTable } from "./output.js";
import { remoteAdmin, remotely } from "./remote-admin-call.js";

export interface KeysListFlags {
  home?: string;
  agent?: string;
  revoked: boolean;
  json: boolean;
  url?: string;
  "admin-token"?: string;
}

export async function keysList(flags: KeysListFlags): Promise<CommandOutcome<KeyListing[]>> {
  const admin = remoteAdmin(flags);
  const listing = admin ? await remotely(() => admin.keys({ agent: flags.agent, revoked: flags.revoked || flags.json })) : await localListing(flags);
  return { result: listing, view: () => printKeys(listing, flags.revoked) };
}

function printKeys(listing: KeyListing[], revoked: boolean): void {
  // Most homes give no key a cache lifetime: the column appears once one does, as REVOKED with --revoked.
  const withCache = listing.some((key) => key.cacheTtlSeconds !== null);
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
      ...(revoked ? ["REVOKED"] : []),
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
      ...(revoked ? [key.revokedAt ?? "-"] : []),
    ]),
    "no keys (create one with `gw keys create --agent NAME`)",
  );
}

async function localListing(flags: KeysListFlags): Promise<KeyListing[]> {
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
