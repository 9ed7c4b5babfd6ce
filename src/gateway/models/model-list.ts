// GET /v1/models: the configured concrete models. `auto` is never listed.
import type { Config } from "../../config/resolved-config.js";

export interface ModelEntry {
  id: string;
  name: string;
  architecture: { input_modalities: string[]; output_modalities: string[] };
  context_length: number;
  created: number;
}

export function listModels(config: Config): { object: "list"; data: ModelEntry[] } {
  const data = config.models
    .filter((model) => model.id !== "auto")
    .map((model) => ({
      id: model.id,
      name: model.name,
      architecture: { input_modalities: model.input_modalities, output_modalities: model.output_modalities },
      context_length: model.context_length,
      created: model.created ?? config.loadedAt,
    }));
  return { object: "list", data };
}
