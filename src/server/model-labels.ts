// The `model` label of the metrics (docs/decisions.md §12): a model id keeps its name only when the
// config names it: a chat model's `models[].id`, a route's prefix when it is a whole model name,
// the `<provider>/<model>` an `auto` route answers as, a tool model of the catalog, and a prefix
// route's prefix before one of gw's built-in embedding models of its provider's type
// (`openai/text-embedding-3-small`). Any other name, which a prefix route passes through from the
// client, counts as `other`, so a client cannot add series. The set is rebuilt when the config is
// reloaded.
import { DEFAULT_EMBEDDING_MODELS } from "../config/default-embedding-models.js";
import type { Config } from "../config/resolved-config.js";

export const OTHER_MODEL = "other";

export class ModelLabels {
  private known = new Set<string>();
  private builtFor: Config | null = null;

  constructor(private readonly config: () => Config) {}

  labelOf(model: string): string {
    const config = this.config();
    if (this.builtFor !== config) this.rebuild(config);
    return this.known.has(model) ? model : OTHER_MODEL;
  }

  private rebuild(config: Config): void {
    const toolModels = Object.values(config.catalog).flatMap((entries: ReadonlyArray<{ id: string }>) => entries.map((entry) => entry.id));
    const routeModels = config.routes.flatMap((route) => [
      route.prefix,
      ...(route.upstreams ?? []).map((upstream) => `${upstream.provider}/${upstream.model}`),
    ]);
    this.known = new Set([...config.models.map((model) => model.id), ...routeModels, ...toolModels, ...embeddingModels(config)]);
    this.builtFor = config;
  }
}

/** The ids under which prefix routes reach the built-in embedding models (priced by gw, so configured). */
function embeddingModels(config: Config): string[] {
  return config.routes.flatMap((route) => {
    // A route with its own `model` sends every id to that one model; `auto` routes pick chat models.
    if (route.model !== undefined || route.provider === undefined || route.prefix === "auto") return [];
    const type = config.providers[route.provider]?.type;
    return DEFAULT_EMBEDDING_MODELS.filter((entry) => entry.providerType === type).map((entry) => `${route.prefix}${entry.model}`);
  });
}
