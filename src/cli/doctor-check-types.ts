// What `gw doctor` reports: one check per thing it looked at, and the report they make up
// (its --json output). Shared by the checks in doctor-checks.ts and doctor-tls-check.ts.

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
}

export interface DoctorReport {
  ok: boolean;
  home: string;
  checks: DoctorCheck[];
}
