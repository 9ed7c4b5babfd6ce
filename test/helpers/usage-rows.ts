// A usage row as the gateway writes it, for tests that write logs by hand: fixed fields, the
// caller's id and credits (any value, to write invalid rows too), and any field overridden in place.
import type { UsageRow } from "../../src/store/usage-log.js";

export function usageRow(id: string, credits: unknown, fields: Record<string, unknown> = {}): UsageRow {
  return {
    id,
    time: new Date().toISOString(),
    agent: "agent-1",
    keyPrefix: "gw_abcdefgh",
    endpoint: "chat.completions",
    model: "m/x",
    provider: "p",
    units: { prompt_tokens: 1, completion_tokens: 2 },
    credits,
    requestId: `req-${id}`,
    ...fields,
  } as UsageRow;
}

/** Rows as log lines, each JSON and a newline. */
export function usageLines(...rows: unknown[]): string {
  return rows.map((each) => `${JSON.stringify(each)}\n`).join("");
}
