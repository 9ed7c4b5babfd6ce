// The OpenAI SDK's image paths (`client.images.generate` / `client.images.edit` post to
// /v1/images/generations and /v1/images/edits) as aliases of the gateway's /v1/image/* endpoints, so
// an application written against OpenAI works by changing its base URL. What OpenAI's shape says
// differently is translated before the /v1/image/* endpoint's own validation runs:
// - a bare vendor model id (`gpt-image-1`) names the allowlisted catalog model it belongs to
//   (`openai/gpt-image-1`) when exactly one matches;
// - DALL·E 3's quality words: `standard` is medium, `hd` is high;
// - OpenAI answers png unless told otherwise, so the alias does too (/v1/image/* defaults to webp).
// Everything else is the /v1/image/* endpoint's: the same parameters, errors, billing and storage.
import type { Config } from "../../config/resolved-config.js";
import { allowedModelIds } from "../models/tool-allowlist.js";
import { findImageModel } from "./image-catalog.js";

const QUALITY_WORDS: Record<string, string> = { standard: "medium", hd: "high" };

/** Translate the fields of an OpenAI-shaped request, read and written through `get` / `set`. */
export function fromOpenAIImagesFields(config: Config, get: (name: string) => unknown, set: (name: string, value: string) => void): void {
  const model = get("model");
  if (typeof model === "string" && !model.includes("/")) {
    const matches = allowedModelIds(config, "image").filter((id) => findImageModel(config.catalog, id)?.model === model);
    if (matches.length === 1) set("model", matches[0]!);
  }
  const quality = get("quality");
  const word = typeof quality === "string" && Object.hasOwn(QUALITY_WORDS, quality) ? QUALITY_WORDS[quality] : undefined;
  if (word !== undefined) set("quality", word);
  if (get("output_format") === undefined) set("output_format", "png");
}

/** A JSON body, translated in place. */
export function fromOpenAIImagesJson(config: Config, body: Record<string, unknown>): Record<string, unknown> {
  fromOpenAIImagesFields(
    config,
    (name) => body[name],
    (name, value) => {
      body[name] = value;
    },
  );
  return body;
}

/** A multipart form's text fields, translated in place (a repeated field counts by its last value). */
export function fromOpenAIImagesForm<Form extends { fields: Array<[string, string]> }>(config: Config, form: Form): Form {
  const get = (name: string) => [...form.fields].reverse().find(([field]) => field === name)?.[1];
  const set = (name: string, value: string) => {
    form.fields = [...form.fields.filter(([field]) => field !== name), [name, value]];
  };
  fromOpenAIImagesFields(config, get, set);
  return form;
}
