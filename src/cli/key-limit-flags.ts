// The limit flags of `gw keys create` and `gw keys set` (docs/decisions.md §10), turned into the
// KeyLimits the store applies. On `set`, `none` (or `never`, `all`, `off`) removes a limit.
import { Flags } from "@oclif/core";
import type { KeyBudget, KeyLimits, KeyRecord } from "../store/records.js";
import { formatLifetime, parseLifetimeSeconds } from "../text/durations.js";
import { UsageError } from "./cli-error.js";

export const keyLimitFlags = {
  name: Flags.string({ description: "a label for people (shown by gw keys list and GET /v1/key)" }),
  budget: Flags.string({ description: "credits this key may spend per budget period, on top of its agent's plan (none: no budget of its own)" }),
  "budget-period": Flags.string({
    description: "month (resets each calendar month, UTC) or total (over the key's life) [default: month]",
    options: ["month", "total"],
  }),
  expires: Flags.string({
    description:
      "when the key stops working: a lifetime (90s, 15m, 12h, 30d, 4w), a date (2027-01-31: through that day, UTC) or a time (2027-01-31T12:00:00Z); never: no expiry",
  }),
  models: Flags.string({
    description: "comma-separated model patterns the key may call, `*` matching anything ('openai/*,claude/claude-sonnet-*'); all: no restriction",
  }),
  rpm: Flags.string({ description: "requests per minute for this key (the plan's limit still applies when lower); none: the plan's" }),
  tpm: Flags.string({ description: "tokens (input + output) per minute for this key; none: no token limit" }),
  cache: Flags.string({ description: "cache this key's answers for this long: 90s, 15m, 12h, 7d or seconds; off: no cache" }),
};

export interface KeyLimitFlagValues {
  name?: string;
  budget?: string;
  "budget-period"?: string;
  expires?: string;
  models?: string;
  rpm?: string;
  tpm?: string;
  cache?: string;
}

export interface KeyLimitContext {
  now: Date;
  /** The config's `cache.maxTtlSeconds`: the longest lifetime a key may give its cached answers. */
  maxCacheTtlSeconds: number;
  /** The key being changed (`set`), whose budget period or amount may be kept. */
  existing?: KeyRecord;
}

/** The limits the flags ask for. */
export function keyLimitsFrom(flags: KeyLimitFlagValues, { now, maxCacheTtlSeconds, existing }: KeyLimitContext): KeyLimits {
  const limits: KeyLimits = {};
  if (flags.name !== undefined) limits.name = flags.name.trim() === "" ? null : flags.name.trim();
  const budget = budgetFrom(flags, existing?.budget);
  if (budget !== undefined) limits.budget = budget;
  if (flags.expires !== undefined) limits.expiresAt = isClearing(flags.expires, "never") ? null : parseExpiry(flags.expires, now);
  if (flags.models !== undefined) limits.models = isClearing(flags.models, "all") ? null : parseModelPatterns(flags.models);
  if (flags.rpm !== undefined) limits.rpm = isClearing(flags.rpm, "none") ? null : positiveInteger(flags.rpm, "--rpm");
  if (flags.tpm !== undefined) limits.tpm = isClearing(flags.tpm, "none") ? null : positiveInteger(flags.tpm, "--tpm");
  if (flags.cache !== undefined) limits.cacheTtlSeconds = isClearing(flags.cache, "off") ? null : cacheLifetime(flags.cache, maxCacheTtlSeconds);
  return limits;
}

/** Seconds from `--cache`, within the config's maximum (docs/decisions.md §22). */
function cacheLifetime(text: string, maxSeconds: number): number {
  const seconds = parseLifetimeSeconds(text);
  if (seconds === undefined) throw new UsageError(`--cache "${text}": expected a lifetime of at least 1s (90s, 15m, 12h, 7d, or seconds), or off`);
  if (seconds > maxSeconds)
    throw new UsageError(
      `--cache "${text}" is longer than the longest cache lifetime, ${formatLifetime(maxSeconds)} (cache.maxTtlSeconds); give ${formatLifetime(maxSeconds)} or less`,
    );
  return seconds;
}

function budgetFrom(flags: KeyLimitFlagValues, existing: KeyBudget | undefined): KeyBudget | null | undefined {
  const period = flags["budget-period"] as KeyBudget["period"] | undefined;
  if (flags.budget !== undefined && isClearing(flags.budget, "none")) {
    if (period !== undefined) throw new UsageError("--budget-period goes with a budget; --budget none removes the budget");
    return null;
  }
  if (flags.budget === undefined) {
    if (period === undefined) return undefined;
    if (!existing) throw new UsageError("--budget-period needs --budget CREDITS (this key has no budget)");
    return { credits: existing.credits, period };
  }
  const credits = Number(flags.budget);
  if (!/^\d+$/.test(flags.budget.trim()) || !Number.isSafeInteger(credits))
    throw new UsageError(`--budget "${flags.budget}": expected a whole number of credits, or none`);
  return { credits, period: period ?? existing?.period ?? "month" };
}

const LIFETIME = /^(\d+)(s|m|h|d|w)$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;

/** An ISO instant (UTC) from a lifetime, a date (the key works through that day, UTC) or a time with its zone. */
export function parseExpiry(text: string, now: Date): string {
  const value = text.trim();
  const lifetime = LIFETIME.exec(value);
  let instant: number;
  if (lifetime) {
    instant = now.getTime() + Number(lifetime[1]) * UNIT_MS[lifetime[2] as keyof typeof UNIT_MS];
  } else if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    instant = Date.parse(`${value}T00:00:00Z`) + UNIT_MS.d;
  } else if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(value)) {
    instant = Date.parse(value);
  } else {
    throw new UsageError(
      `--expires "${text}": expected a lifetime (90s, 15m, 12h, 30d, 4w), a date (2027-01-31), a time with its zone (2027-01-31T12:00:00Z), or never`,
    );
  }
  if (!Number.isFinite(instant)) throw new UsageError(`--expires "${text}": not a real date`);
  if (instant <= now.getTime()) throw new UsageError(`--expires "${text}" is already past (now ${now.toISOString()})`);
  return new Date(instant).toISOString();
}

function parseModelPatterns(text: string): string[] {
  const patterns = text
    .split(",")
    .map((pattern) => pattern.trim())
    .filter((pattern) => pattern !== "");
  if (patterns.length === 0) throw new UsageError(`--models "${text}": give at least one pattern, e.g. 'openai/*', or all`);
  return [...new Set(patterns)];
}

function positiveInteger(text: string, flag: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value < 1) throw new UsageError(`${flag} "${text}": expected a whole number >= 1, or none`);
  return value;
}

function isClearing(text: string, word: string): boolean {
  const value = text.trim().toLowerCase();
  return value === word || value === "none";
}
