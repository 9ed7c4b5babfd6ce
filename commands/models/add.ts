import { Args, Flags } from "@oclif/core";
import { arrayAt, stringField } from "../../src/admin/config-edits/raw-config.js";
import { CliError, UsageError } from "../../src/cli/cli-error.js";
import { jsonFlag, numberFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome } from "../../src/cli/home.js";
import { editHomeConfig } from "../../src/cli/home-config.js";
import { note, printLine } from "../../src/cli/output.js";
import { routesServing } from "../../src/config/model-routes.js";

const MODALITIES = ["text", "image", "file", "audio", "video"];

export default class ModelsAdd extends GwCommand {
  static override description =
    "Describe a chat model in config.json's models list: its name, context length, modalities and price (USD per million tokens; without one it is billed at billing.defaultChatPricing). GET /v1/models lists it once a route serves it. An entry with the same id is refused unless --replace is given.";
  static override examples = [
    "<%= config.bin %> models add openrouter/meta-llama/llama-3.1-8b-instruct --name 'Llama 3.1 8B' --context-length 131072 --input-price 0.02 --output-price 0.05",
    "<%= config.bin %> models add groq/llama-3.3-70b-versatile --name 'Llama 3.3 70B' --context-length 131072 --max-output-tokens 32768 --input-price 0.59 --output-price 0.79",
  ];
  static override args = {
    id: Args.string({ description: "the model id requests name, e.g. openai/gpt-4.1 (a route's prefix plus the vendor's model)", required: true }),
  };
  static override enableJsonFlag = true;
  static override flags = {
    name: Flags.string({ description: "display name", required: true }),
    "context-length": Flags.integer({ description: "context window in tokens", required: true, min: 1 }),
    "max-output-tokens": Flags.integer({
      description: "the most tokens it writes in one answer (the max_tokens gw fills in when a request names none)",
      min: 1,
    }),
    "input-price": numberFlag({ description: "USD per million input tokens (goes with --output-price)" }),
    "output-price": numberFlag({ description: "USD per million output tokens (goes with --input-price)" }),
    "cache-read-price": numberFlag({ description: "USD per million input tokens read from the vendor's prompt cache [default: the input price]" }),
    "cache-write-price": numberFlag({ description: "USD per million input tokens written to the vendor's prompt cache [default: the input price]" }),
    "input-modalities": Flags.string({ description: `what it takes in, comma-separated (${MODALITIES.join(", ")}) [default: text]` }),
    "output-modalities": Flags.string({ description: `what it gives out, comma-separated [default: text]` }),
    replace: Flags.boolean({ description: "replace the entry with this id instead of refusing", default: false }),
    json: jsonFlag,
  };

  async run() {
    const { args, flags } = await this.parse(ModelsAdd);
    const entry: Record<string, unknown> = { id: args.id, name: flags.name, context_length: flags["context-length"] };
    if (flags["input-modalities"] !== undefined) entry.input_modalities = modalities(flags["input-modalities"], "--input-modalities");
    if (flags["output-modalities"] !== undefined) entry.output_modalities = modalities(flags["output-modalities"], "--output-modalities");
    if (flags["max-output-tokens"] !== undefined) entry.max_output_tokens = flags["max-output-tokens"];
    const pricing = pricingOf(flags);
    if (pricing) entry.pricing = pricing;

    const paths = await openHome(flags.home, { create: true });
    const { config, result } = await editHomeConfig(paths, (raw) => {
      const models = arrayAt(raw, "models");
      const existing = models.findIndex((model) => stringField(model, "id") === args.id);
      if (existing < 0) return { index: models.push(entry) - 1, replaced: false };
      if (!flags.replace) throw new CliError(`"${args.id}" is already described by models[${existing}]: pass --replace to replace it`);
      models[existing] = entry;
      return { index: existing, replaced: true };
    });
    if (routesServing(config, args.id).length === 0)
      note(`note: no route serves ${args.id} yet, so GET /v1/models does not list it: add one with \`gw routes add PREFIX --provider NAME\``);
    return this.shown(config.models[result.index], () => {
      printLine(`${result.replaced ? "replaced" : "added"} models[${result.index}]: "${args.id}" (${flags.name})`);
    });
  }
}

function modalities(text: string, flag: string): string[] {
  const list = [...new Set(text.split(",").map((item) => item.trim().toLowerCase()))].filter((item) => item !== "");
  const unknown = list.filter((item) => !MODALITIES.includes(item));
  if (list.length === 0 || unknown.length > 0) throw new UsageError(`${flag} "${text}": expected a comma-separated list of ${MODALITIES.join(", ")}`);
  return list;
}

interface PriceFlags {
  "input-price"?: number;
  "output-price"?: number;
  "cache-read-price"?: number;
  "cache-write-price"?: number;
}

/** The models[] pricing the flags give (USD per million tokens), or none. */
function pricingOf(flags: PriceFlags): Record<string, number> | undefined {
  const input = flags["input-price"];
  const output = flags["output-price"];
  const cacheRead = flags["cache-read-price"];
  const cacheWrite = flags["cache-write-price"];
  if (input === undefined && output === undefined) {
    if (cacheRead !== undefined || cacheWrite !== undefined)
      throw new UsageError("--cache-read-price and --cache-write-price go with --input-price and --output-price");
    return undefined;
  }
  if (input === undefined || output === undefined) throw new UsageError("--input-price and --output-price go together (USD per million tokens)");
  const pricing: Record<string, number> = { input_per_mtok: input, output_per_mtok: output };
  if (cacheRead !== undefined) pricing.cache_read_per_mtok = cacheRead;
  if (cacheWrite !== undefined) pricing.cache_write_per_mtok = cacheWrite;
  return pricing;
}
