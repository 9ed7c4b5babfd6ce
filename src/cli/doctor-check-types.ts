// What `gw doctor` reports: one check per thing it looked at, and the report they make up
// (its --json output). Shared by the checks in doctor-checks.ts and the doctor-*-check(s).ts beside it.

export type CheckStatus = "ok" | "warn" | "error";

export interface DoctorCheck {
  name: string;
  status: CheckStatus;
  detail: string;
  path?: string;
  version?: string;
  source?: string;
  /** The pricing check: the routable models billed at billing.defaultChatPricing. */
  models?: string[];
  /** The balances check: the numbers an operator compares before and after moving a home's state (`gw migrate`). */
  balances?: BalanceTotals;
}

export interface BalanceTotals {
  agents: number;
  /** The current month, YYYY-MM (UTC). */
  period: string;
  /** Plan credits billed to every agent in `period`. */
  periodCredits: number;
  /** Plan credits billed to every agent in every month. */
  lifetimeCredits: number;
}

export interface DoctorReport {
  ok: boolean;
  home: string;
  checks: DoctorCheck[];
}
