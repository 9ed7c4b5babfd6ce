// A chat model's price as OpenRouter's model object carries it (`pricing`: USD per token, as
// decimal strings, so clients read exact amounts rather than floats): prompt and completion, and
// the prompt-cache prices when the config names them. The config keeps USD per million tokens.
import type { Pricing } from "../../config/config-schema.js";

export interface OpenRouterPricing {
  prompt: string;
  completion: string;
  input_cache_read?: string;
  input_cache_write?: string;
}

export function openRouterPricing(pricing: Pricing): OpenRouterPricing {
  const converted: OpenRouterPricing = { prompt: perToken(pricing.input_per_mtok), completion: perToken(pricing.output_per_mtok) };
  if (pricing.cache_read_per_mtok !== undefined) converted.input_cache_read = perToken(pricing.cache_read_per_mtok);
  if (pricing.cache_write_per_mtok !== undefined) converted.input_cache_write = perToken(pricing.cache_write_per_mtok);
  return converted;
}

/**
 * USD per million tokens as USD per token, written in plain decimals: 0.15 -> "0.00000015". The
 * decimal point of the number's shortest form is moved six places, so no binary rounding shows
 * (0.15 / 1e6 is 1.4999999999999999e-7 in floating point).
 */
export function perToken(perMillion: number): string {
  const match = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(perMillion));
  if (!match) throw new RangeError(`not a non-negative finite price: ${perMillion}`);
  const [, whole = "", fraction = "", exponent = "0"] = match;
  const digits = whole + fraction;
  const point = whole.length + Number(exponent) - 6;
  const text =
    point <= 0
      ? `0.${"0".repeat(-point)}${digits}`
      : point >= digits.length
        ? digits + "0".repeat(point - digits.length)
        : `${digits.slice(0, point)}.${digits.slice(point)}`;
  return text
    .replace(/^0+(?=\d)/, "")
    .replace(/(\.\d*?)0+$/, "$1")
    .replace(/\.$/, "");
}
