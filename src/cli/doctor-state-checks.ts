// `gw doctor`: the home's state, wherever its config puts it (docs/decisions.md §21). The config
// the home's servers run, a line naming the drivers, the blob store, and then agents, keys and
// usage read from where the servers keep them: this home's files (here), or Redis
// (doctor-redis-state.ts), never the unused files of a Redis home. The balances line is the same on
// both drivers for the same history, so an operator can compare a home before and after `gw migrate`.
import { readBootstrap } from "../config/bootstrap-sections.js";
import type { StateSettings } from "../config/config-schema.js";
import { loadConfigFile } from "../config/load-config.js";
import type { HomePaths } from "../config/paths.js";
import type { Config } from "../config/resolved-config.js";
import { MetadataStore } from "../store/metadata-store.js";
import { periodOf, UsageLog } from "../store/usage-log.js";
import { type UsageRange, usageLogSlices, usageRows } from "../store/usage-rows.js";
import { blobsCheck } from "./doctor-blobs-check.js";
import type { BalanceTotals, DoctorCheck } from "./doctor-check-types.js";
import { openRedisHomeState } from "./doctor-redis-state.js";
import { balancesCheck, countsOf, countsOfMetadata, driversCheck, type HomeState, messageOf, rawOf } from "./doctor-state-lines.js";

const EVERYTHING: UsageRange = { since: Number.NEGATIVE_INFINITY, until: Number.POSITIVE_INFINITY };

/** Read the home's config, and on Redis connect (bounded by the state's command timeout; never throws). */
export async function openHomeState(paths: HomePaths, env: NodeJS.ProcessEnv, now = new Date()): Promise<HomeState> {
  const unreadable = (error: unknown): HomeState => ({
    // Which driver is unknown: the home's own files are all there is to read.
    configCheck: { name: "config", status: "error", path: paths.config, detail: messageOf(error) },
    config: undefined,
    raw: rawOf(paths.config),
    checks: async () => [...(await embeddedChecks(paths, now)).checks],
    close() {},
  });
  let state: StateSettings;
  try {
    // The driver comes from the local sections alone: an instance's config.json on a Redis state
    // may hold only `server` and `state`, the rest being the shared document in Redis (§21).
    state = readBootstrap(paths.config, env).state;
  } catch (error) {
    return unreadable(error);
  }
  let file: Config | Error;
  try {
    file = loadConfigFile(paths.config, env);
  } catch (error) {
    if (state.driver !== "redis") return unreadable(error);
    file = error instanceof Error ? error : new Error(String(error));
  }
  if (state.driver === "redis") return openRedisHomeState(paths, state, file, env, now);
  if (file instanceof Error) return unreadable(file);
  const config = file;
  return {
    configCheck: { name: "config", status: "ok", path: paths.config, detail: countsOf(config) },
    config,
    raw: rawOf(paths.config),
    checks: async () => {
      const blobs = await blobsCheck(config.storage);
      const embedded = await embeddedChecks(paths, now);
      return [driversCheck(config.state, config.storage, paths), ...(blobs ? [blobs] : []), ...embedded.checks, balancesCheck(embedded.totals)];
    },
    close() {},
  };
}

/** This home's metadata file and usage log (the embedded state), and the totals of that log. */
async function embeddedChecks(paths: HomePaths, now: Date): Promise<{ checks: DoctorCheck[]; totals: BalanceTotals | string }> {
  const checks: DoctorCheck[] = [];
  const period = periodOf(now);
  let agents: number | undefined;
  try {
    const store = await MetadataStore.open(paths.metadata);
    const { data } = store;
    store.close();
    agents = data.agents.length;
    checks.push({ name: "metadata", status: "ok", path: paths.metadata, detail: countsOfMetadata(data) });
  } catch (error) {
    checks.push({ name: "metadata", status: "error", path: paths.metadata, detail: messageOf(error) });
  }

  let totals: BalanceTotals | string;
  try {
    const periods = UsageLog.periods(paths.usageDir).length;
    // Each month's valid rows, by the file they are in: what the log's own totals count.
    const months = new Map<string, { rows: number; credits: number }>();
    for (const slice of usageLogSlices(paths.usageDir, EVERYTHING)) {
      const month = { rows: 0, credits: 0 };
      months.set(slice.period, month);
      for await (const batch of usageRows([slice], EVERYTHING)) {
        month.rows += batch.length;
        for (const row of batch) month.credits += row.credits;
      }
    }
    const current = months.get(period) ?? { rows: 0, credits: 0 };
    checks.push({ name: "usage log", status: "ok", path: paths.usageDir, detail: `${periods} periods, ${current.rows} rows in ${period}` });
    let lifetimeCredits = 0;
    for (const month of months.values()) lifetimeCredits += month.credits;
    totals = agents === undefined ? "not read: the metadata check above failed" : { agents, period, periodCredits: current.credits, lifetimeCredits };
  } catch (error) {
    checks.push({ name: "usage log", status: "error", path: paths.usageDir, detail: messageOf(error) });
    totals = "not read: the usage log check above failed";
  }
  return { checks, totals };
}
