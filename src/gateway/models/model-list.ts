// GET /v1/models: the configured concrete models the caller's key can use. An entry is listed
// when a route serves it (config/model-routes.ts) and the key's plan may take that route (free
// plans only free-tier routes) and the key's own model patterns allow it (docs/decisions.md §10);
// `auto` is never listed, nor an entry no route serves.
import type { ModelConfig, PlanLimits } from "../../config/config-schema.js";
import { modelReachable } from "../../config/model-routes.js";
import type { Config } from "../../config/resolved-config.js";
import type { KeyRecord } from "../../store/records.js";
import { keyAllowsModel } from "../auth/key-limits.js";

/** What a model takes in or gives out (the config's modality list). */
export type Modality = ModelConfig["input_modalities"][number];

export interface ModelEntry {
  id: string;
  name: string;
  architecture: { input_modalities: string[]; output_modalities: string[] };
  context_length: number;
  created: number;
}

/** The GET /v1/models answer. */
export interface ModelList {
  object: "list";
  data: ModelEntry[];
}

export function listModels(config: Config, plan: Pick<PlanLimits, "freeTierOnly">, key: Pick<KeyRecord, "models"> = {}): ModelList {
  const data = config.models
    .filter((model) => modelReachable(config, model.id, plan) && keyAllowsModel(key, model.id))
    .map((model) => ({
      id: model.id,
      name: model.name,
      architecture: { input_modalities: model.input_modalities, output_modalities: model.output_modalities },
      context_length: model.context_length,
      created: model.created ?? config.loadedAt,
    }));
  return { object: "list", data };
}
