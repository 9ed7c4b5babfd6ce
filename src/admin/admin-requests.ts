// The bodies the admin API takes for agents and keys (docs/decisions.md §25), and how a key's
// limits in one of them become the KeyLimits the store applies — the same store functions
// (store/provisioning.ts) `gw agents` and `gw keys` call, so the CLI and the API cannot disagree.
import { z } from "zod";
import { type Config, canonicalPlanName } from "../config/resolved-config.js";
import type { KeyLimits, KeyRecord } from "../store/records.js";

const agentName = z.string().trim().min(1).max(128);
const positiveCount = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

export const agentCreateSchema = z.object({ name: agentName, plan: z.string().min(1).optional() }).strict();
export const agentUpdateSchema = z.object({ plan: z.string().min(1) }).strict();

const budget = z.object({ credits: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER), period: z.enum(["month", "total"]).optional() }).strict();

/** A key's own limits; on PATCH, `null` removes one and an absent field leaves it as it is. */
const keyLimitFields = {
  name: z.string().trim().min(1).max(200).nullable().optional(),
  budget: budget.nullable().optional(),
  expiresAt: z.iso.datetime({ offset: true }).nullable().optional(),
  models: z.array(z.string().trim().min(1)).min(1).nullable().optional(),
  rpm: positiveCount.nullable().optional(),
  tpm: positiveCount.nullable().optional(),
  cacheTtlSeconds: positiveCount.nullable().optional(),
};

export const keyCreateSchema = z.object({ agent: agentName, plan: z.string().min(1).optional(), ...keyLimitFields }).strict();
export const keyUpdateSchema = z.object(keyLimitFields).strict();

export type KeyLimitsBody = z.output<typeof keyUpdateSchema>;

/** A request's problem with one field, for the API's 400 (the CLI words its own from flags). */
export class AdminInputError extends Error {
  constructor(
    readonly param: string,
    message: string,
  ) {
    super(message);
    this.name = "AdminInputError";
  }
}

/** Something a request names that does not exist (an agent): the CLI's exit 1, the API's 404. */
export class AdminLookupError extends Error {
  constructor(
    readonly param: string,
    message: string,
  ) {
    super(message);
    this.name = "AdminLookupError";
  }
}

/** `unknown plan "x": known plans are free, pro, max, assistant (= pro) ...` (the CLI's words; the API makes a sentence of them). */
export function unknownPlanMessage(config: Config, name: string): string {
  const aliases = Object.entries(config.planAliases).map(([alias, target]) => `${alias} (= ${target})`);
  return `unknown plan "${name}": known plans are ${[...Object.keys(config.resolvedPlans), ...aliases].join(", ")}`;
}

/** The canonical name of a plan given by name or alias; throws naming the known ones. */
export function planNamed(config: Config, name: string, param = "plan"): string {
  const plan = canonicalPlanName(config, name);
  if (plan) return plan;
  const message = unknownPlanMessage(config, name);
  throw new AdminInputError(param, `${message.charAt(0).toUpperCase()}${message.slice(1)}.`);
}

/**
 * The KeyLimits of a body, checked as `gw keys create|set` checks its flags: an expiry in the
 * future, a cache lifetime within cache.maxTtlSeconds, a budget without a period keeping the
 * changed key's period (else monthly).
 */
export function keyLimitsOf(body: KeyLimitsBody, config: Config, now: Date, existing?: KeyRecord): KeyLimits {
  const limits: KeyLimits = {};
  for (const field of ["name", "models", "rpm", "tpm"] as const) {
    if (body[field] !== undefined) Object.assign(limits, { [field]: body[field] });
  }
  if (body.budget !== undefined)
    limits.budget = body.budget === null ? null : { credits: body.budget.credits, period: body.budget.period ?? existing?.budget?.period ?? "month" };
  if (body.models) limits.models = [...new Set(body.models)];
  if (body.expiresAt !== undefined) {
    if (body.expiresAt !== null && Date.parse(body.expiresAt) <= now.getTime())
      throw new AdminInputError("expiresAt", `expiresAt ${body.expiresAt} is already past (now ${now.toISOString()}).`);
    limits.expiresAt = body.expiresAt === null ? null : new Date(body.expiresAt).toISOString();
  }
  if (body.cacheTtlSeconds !== undefined) {
    if (body.cacheTtlSeconds !== null && body.cacheTtlSeconds > config.cache.maxTtlSeconds)
      throw new AdminInputError(
        "cacheTtlSeconds",
        `cacheTtlSeconds ${body.cacheTtlSeconds} is longer than cache.maxTtlSeconds (${config.cache.maxTtlSeconds}).`,
      );
    limits.cacheTtlSeconds = body.cacheTtlSeconds;
  }
  return limits;
}
