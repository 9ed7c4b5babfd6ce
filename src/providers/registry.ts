// Provider types by `type`. Adding a vendor: one folder under src/providers and one line here.
import { openaiProvider } from "./openai/openai-provider.js";
import type { ProviderDefinition } from "./provider.js";

const definitions: ProviderDefinition[] = [openaiProvider];

export const providerTypes: ReadonlyMap<string, ProviderDefinition> = new Map(
  definitions.map((definition) => [definition.type, definition]),
);
