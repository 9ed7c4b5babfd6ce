// A key's own limits that are checked on its own record: expiry and model patterns
// (docs/decisions.md §10). Budgets live in the credit ledger, rpm and tpm in the rate limiter.
import type { KeyRecord } from "../../store/records.js";
import { ExpiredApiKeyError, KeyModelNotAllowedError } from "../errors.js";

/** 401 saying it expired when the key's expiry has passed. */
export function assertKeyNotExpired(key: KeyRecord, now: number): void {
  if (key.expiresAt !== undefined && Date.parse(key.expiresAt) <= now) throw new ExpiredApiKeyError(key.expiresAt);
}

/** 403 `model_not_allowed` unless the model, as the request names it, matches one of the key's patterns. */
export function assertKeyAllowsModel(key: KeyRecord, model: string): void {
  if (key.models === undefined || keyAllowsModel(key, model)) return;
  throw new KeyModelNotAllowedError(model, key.models);
}

export function keyAllowsModel(key: Pick<KeyRecord, "models">, model: string): boolean {
  return key.models === undefined || key.models.some((pattern) => patternRegExp(pattern).test(model));
}

const compiled = new Map<string, RegExp>();

/** `*` matches any run of characters, `/` included; everything else is literal. */
function patternRegExp(pattern: string): RegExp {
  let regExp = compiled.get(pattern);
  if (!regExp) {
    regExp = new RegExp(`^${pattern.split("*").map(escapeRegExp).join(".*")}$`);
    compiled.set(pattern, regExp);
  }
  return regExp;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
