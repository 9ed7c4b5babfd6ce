import { type PlanListing, planListings } from "../../src/admin/plan-listing.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome } from "../../src/cli/home.js";
import { loadHomeConfig } from "../../src/cli/home-config.js";
import { printTable } from "../../src/cli/output.js";
import { remoteAdmin, remoteAdminFlags, remotely } from "../../src/cli/remote-admin.js";

export default class PlansList extends GwCommand {
  static override description = "List plans with their resolved limits (defaults plus config.json overrides).";
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag, ...remoteAdminFlags };

  async run() {
    const { flags } = await this.parse(PlansList);
    const admin = remoteAdmin(flags);
    const plans = admin ? await remotely(() => admin.plans()) : await localPlans(flags.home);
    return this.shown(plans, () => {
      printTable(
        ["PLAN", "ALIASES", "CREDITS/MONTH", "RPM", "FREE TIER ONLY", "IMAGE N", "RESOLUTION", "STORAGE BYTES", "STORAGE OPS", "LOW LATENCY"],
        plans.map((plan) => [
          plan.name,
          plan.aliases.join(","),
          plan.monthlyCredits,
          plan.requestsPerMinute,
          plan.freeTierOnly,
          plan.imageMaxN,
          plan.imageMaxResolution,
          plan.storageBytes,
          plan.storageOperationsPerPeriod,
          plan.lowLatencyRouting,
        ]),
      );
    });
  }
}

async function localPlans(home: string | undefined): Promise<PlanListing[]> {
  return planListings(await loadHomeConfig(await openHome(home)));
}
