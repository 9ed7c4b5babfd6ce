// GET /v1/models: the configured concrete models the caller's key can use. An entry is listed
// when a route serves it (config/model-routes.ts) and the key's plan may take that route (free
// plans only free-tier routes); `auto` is never listed, nor an entry no route serves.
import type { PlanLimits } from "../../config/config-schema.js";
import { modelReachable } from "../../config/model-routes.js";
import type { Config } from "../../config/resolved-config.js";

export interface ModelEntry {
  id: string;
  name: string;
  architecture: { input_modalities: string[]; output_modalities: string[] };
  context_length: number;
  created: number;
}

export function listModels(config: Config, plan: Pick<PlanLimits, "freeTierOnly">): { object: "list"; data: ModelEntry[] } {
  const data = config.models
    .filter((model) => modelReachable(config, model.id, plan))
    .map((model) => ({
      id: model.id,
      name: model.name,
      architecture: { input_modalities: model.input_modalities, output_modalities: model.output_modalities },
      context_length: model.context_length,
      created: model.created ?? config.loadedAt,
    }));
  return { object: "list", data };
}
