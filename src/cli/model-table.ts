// `gw models` as a table: the models the key can call (GET /v1/models), `auto` when the key may
// use it (asked with GET /v1/models/auto: the list never holds it), and the prefix routes that
// pass any id on (`prefixes`), each with its price in dollars per million input/output tokens.
import type { ModelEntry, ModelList } from "../client/api-types.js";
import type { Cell } from "./output.js";

const HEADERS = ["ID", "NAME", "CONTEXT", "MODALITIES", "PRICE"];

/** Whether a model is billed at billing.defaultChatPricing for lack of a price of its own. */
export type DefaultPriced = (modelId: string) => boolean;

/**
 * The table's headers and rows; without PRICE when nothing has one (a gateway that sends no
 * prices). `defaultPriced` is known when the server called is the home's own (from its config):
 * a model it says is billed at billing.defaultChatPricing is marked `default`.
 */
export function modelTable(list: ModelList, auto: ModelEntry | undefined, defaultPriced: DefaultPriced | undefined): { headers: string[]; rows: Cell[][] } {
  const rows = modelRows(list, auto, defaultPriced);
  const priced = rows.some((row) => row[4] !== undefined);
  return priced ? { headers: HEADERS, rows } : { headers: HEADERS.slice(0, 4), rows: rows.map((row) => row.slice(0, 4)) };
}

function modelRows(list: ModelList, auto: ModelEntry | undefined, defaultPriced: DefaultPriced | undefined): Cell[][] {
  const rows = list.data.map((model) => modelRow(model, defaultPriced?.(model.id) ?? false));
  if (auto) rows.push(modelRow(auto, false));
  for (const alias of list.aliases ?? []) {
    rows.push([alias.id, `${alias.id} (a route, no models entry)`, undefined, undefined, dollarsPerMillion(alias.pricing)]);
  }
  for (const prefix of list.prefixes ?? []) {
    rows.push([
      `${prefix.prefix}*`,
      `any model under ${prefix.prefix} (no models entry)`,
      undefined,
      undefined,
      `default ${dollarsPerMillion(prefix.pricing)}`,
    ]);
  }
  return rows;
}

function modelRow(model: ModelEntry, isDefault: boolean): Cell[] {
  const { architecture } = model;
  const price = model.pricing ? `${isDefault ? "default " : ""}${dollarsPerMillion(model.pricing)}` : model.id === "auto" ? "by upstream" : undefined;
  return [
    model.id,
    model.name,
    model.context_length,
    architecture ? `${architecture.input_modalities.join(",")} -> ${architecture.output_modalities.join(",")}` : undefined,
    price,
  ];
}

/** OpenRouter's USD per token ("0.00000015") as `gw` shows prices: "$0.15/$0.6", per million input / output tokens. */
export function dollarsPerMillion(pricing: { prompt: string; completion: string }): string {
  return `$${perMillion(pricing.prompt)}/$${perMillion(pricing.completion)}`;
}

/** The decimal point moved six places right, in the string (no floating-point noise): "0.00000015" -> "0.15". */
function perMillion(perToken: string): string {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(perToken);
  if (!match) return perToken;
  const [, whole = "", fraction = ""] = match;
  const shifted = `${whole}${fraction.padEnd(6, "0").slice(0, 6)}.${fraction.slice(6)}`;
  return shifted.replace(/^0+(?=\d)/, "").replace(/\.?0*$/, "") || "0";
}
