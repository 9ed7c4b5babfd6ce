// `tools` in the config as `gw tools` and /admin/v1/tools show and edit it (docs/decisions.md §25):
// each tool's default and allowlist. Catalog tools take models of their catalog: image, upscale and background the image models
// that do the tool's work, speech and transcription the audio catalog's, video and search their
// own; the other tools take ids a configured provider could serve (tool-models.ts).
import { type AudioToolName, audioCatalogOf, findAudioModel } from "../../config/audio-model-lookup.js";
import { type CatalogConfig, catalogSchema } from "../../config/catalog-schema.js";
import { ConfigError } from "../../config/config-error.js";
import type { RawConfig } from "../../config/config-file.js";
import type { ImageModelEntry, ImageOperation } from "../../config/image-catalog-schema.js";
import { parseConfigText } from "../../config/load-config.js";
import type { Config } from "../../config/resolved-config.js";
import { AdminInputError } from "../admin-requests.js";
import { notFound } from "./config-edit-refusal.js";
import type { ProviderTypeCapabilities } from "./providers.js";
import { isRecord, malformed, objectAt } from "./raw-config.js";
import { requireServableModel } from "./tool-models.js";

/** The tools of the config (docs/decisions.md §6). */
export const KNOWN_TOOLS = ["image", "describe", "enhance", "ocr", "speech", "transcription", "video", "search", "upscale", "background"] as const;

/** Catalog operations per image tool (`tools.image` allowlists drawing and editing). */
const IMAGE_TOOL_OPERATIONS: Record<string, readonly ImageOperation[]> = { image: ["generate", "edit"], upscale: ["upscale"], background: ["background"] };

const TOOL_WORK: Record<string, string> = {
  image: "draw or edit",
  upscale: "upscale",
  background: "remove backgrounds",
  speech: "speak",
  transcription: "transcribe",
  video: "make videos",
  search: "search the web",
};

export interface ToolView {
  tool: string;
  default: string | null;
  allow: string[];
}

export interface ToolCandidate {
  id: string;
  name: string;
  provider: string;
  /** Its provider is in `providers`; otherwise the tool answers 503 until it is added. */
  providerConfigured: boolean;
}

/** A tool as `gw tools list` and GET /admin/v1/tools show it: for a catalog tool, also the models it could take. */
export type ToolOverview = ToolView & { available?: ToolCandidate[] };

/** Tools whose models are entries of the audio catalog. */
const AUDIO_TOOLS = new Set(["speech", "transcription"]);

export function isImageTool(tool: string): boolean {
  return Object.hasOwn(IMAGE_TOOL_OPERATIONS, tool);
}

/** Tools that take models of a catalog (image or audio) rather than any id a provider serves. */
export function isCatalogTool(tool: string): boolean {
  return isImageTool(tool) || AUDIO_TOOLS.has(tool) || tool === "video" || tool === "search";
}

/** Catalog models that do this tool's work (none for tools outside the catalogs). */
export function toolModels(catalog: CatalogConfig, tool: string): Array<{ id: string; name: string; provider: string }> {
  if (tool === "speech") return catalog.speech;
  if (tool === "transcription") return catalog.transcription;
  if (tool === "video") return catalog.video;
  if (tool === "search") return catalog.search;
  const operations = isImageTool(tool) ? (IMAGE_TOOL_OPERATIONS[tool] ?? []) : [];
  return catalog.image.filter((model) => model.operations.some((operation) => operations.includes(operation)));
}

/** Every tool, the known ones first: its default, allowlist and the catalog models not yet allowed. */
export function toolOverview(config: Config): ToolOverview[] {
  const names = [...new Set([...KNOWN_TOOLS, ...Object.keys(config.tools)])];
  return names.map((tool) => {
    const entry = config.tools[tool];
    const view: ToolOverview = { tool, default: entry?.default ?? null, allow: [...(entry?.allow ?? [])] };
    if (isCatalogTool(tool)) {
      view.available = toolModels(config.catalog, tool)
        .filter((model) => !view.allow.includes(model.id) && view.default !== model.id)
        .map((model) => ({ id: model.id, name: model.name, provider: model.provider, providerConfigured: config.providers[model.provider] !== undefined }));
    }
    return view;
  });
}

/**
 * Inside a config edit: allow MODEL for TOOL, and make it the default when asked or when there is none.
 * MODEL must be one a provider here could serve (an image tool's: a catalog model doing its work).
 */
export function enableTool(
  raw: RawConfig,
  tool: string,
  model: string,
  makeDefault: boolean,
  types: ProviderTypeCapabilities,
): ToolView & { added: boolean; provider?: string } {
  const entry = toolEntry(raw, tool, { create: true });
  let provider: string | undefined;
  if (AUDIO_TOOLS.has(tool)) provider = audioModelFor(raw, tool as AudioToolName, model).provider;
  else if (isCatalogTool(tool)) provider = catalogModelFor(raw, tool, model).provider;
  else requireServableModel(parseConfigText(JSON.stringify(raw), "config.json"), types, tool, model);
  const allow = allowList(entry, tool);
  const added = !allow.includes(model);
  if (added) allow.push(model);
  if (makeDefault || entry.default === null || entry.default === undefined) entry.default = model;
  const view = { ...viewOf(tool, entry), added };
  return provider === undefined ? view : { ...view, provider };
}

/** Inside a config edit: take MODEL off TOOL's allowlist; a default it was passes to the next allowed model, or none. */
export function disableTool(raw: RawConfig, tool: string, model: string): ToolView {
  const entry = toolEntry(raw, tool, { create: false });
  const allow = allowList(entry, tool);
  if (!allow.includes(model) && entry.default !== model) throw notFound(`${model} is not enabled for ${tool}`);
  entry.allow = allow.filter((id) => id !== model);
  if (entry.default === model) entry.default = (entry.allow as string[])[0] ?? null;
  return viewOf(tool, entry);
}

function toolEntry(raw: RawConfig, tool: string, options: { create: boolean }): Record<string, unknown> {
  const tools = objectAt(raw, "tools");
  const known = (KNOWN_TOOLS as readonly string[]).includes(tool) || tools[tool] !== undefined;
  if (!known) throw notFound(`unknown tool "${tool}": the tools are ${KNOWN_TOOLS.join(", ")}`);
  const entry = tools[tool];
  if (entry === undefined) {
    if (!options.create) throw notFound(`tools.${tool} has no models enabled`);
    const created: Record<string, unknown> = { default: null, allow: [] };
    tools[tool] = created;
    return created;
  }
  if (!isRecord(entry)) throw malformed(`tools.${tool}`, "an object");
  return entry;
}

function allowList(entry: Record<string, unknown>, tool: string): string[] {
  if (entry.allow === undefined) entry.allow = [];
  if (!Array.isArray(entry.allow)) throw malformed(`tools.${tool}.allow`, "an array");
  return entry.allow as string[];
}

/** The catalog entry MODEL names, refused when it is missing or does not do the tool's work. */
function catalogModelFor(raw: RawConfig, tool: string, model: string): { id: string; provider: string } {
  const parsed = catalogSchema.safeParse(raw.catalog ?? {});
  if (!parsed.success) throw new ConfigError("the catalog is invalid; `gw doctor` shows where", "config.json");
  const fitting = toolModels(parsed.data, tool);
  const suggestions = `models that ${TOOL_WORK[tool]}: ${fitting.map((entry) => entry.id).join(", ") || "none in the catalog"}`;
  if (tool === "video" || tool === "search") {
    const entry = fitting.find((candidate) => candidate.id === model);
    if (!entry) throw new AdminInputError("model", `"${model}" is not in the ${tool} catalog (catalog.${tool}); ${suggestions}`);
    return entry;
  }
  const entry: ImageModelEntry | undefined = parsed.data.image.find((candidate) => candidate.id === model);
  if (!entry) throw new AdminInputError("model", `"${model}" is not in the image catalog (catalog.image); ${suggestions}`);
  if (!fitting.includes(entry))
    throw new AdminInputError("model", `"${model}" does not ${TOOL_WORK[tool]} (it offers ${entry.operations.join(", ")}); ${suggestions}`);
  return entry;
}

/**
 * The audio catalog entry MODEL names: one of the catalog's ids, or PROVIDER/MODEL for another
 * configured provider of a catalog model's type (a self-hosted Whisper server added as type openai).
 */
function audioModelFor(raw: RawConfig, tool: AudioToolName, model: string): { id: string; provider: string } {
  const config = parseConfigText(JSON.stringify(raw), "config.json");
  const entry = findAudioModel(config, tool, model);
  if (entry) return entry;
  const ids = audioCatalogOf(config, tool).map((candidate) => candidate.id);
  throw new AdminInputError(
    "model",
    `"${model}" is not in the ${tool} catalog (catalog.${tool}) and names no configured provider of a catalog model's type; models that ${TOOL_WORK[tool]}: ${ids.join(", ") || "none in the catalog"}`,
  );
}

function viewOf(tool: string, entry: Record<string, unknown>): ToolView {
  return { tool, default: typeof entry.default === "string" ? entry.default : null, allow: [...((entry.allow as string[] | undefined) ?? [])] };
}
