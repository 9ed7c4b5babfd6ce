// Provider types by `type`. Adding a vendor: one folder under src/providers and one line here.
import { anthropicProvider } from "./anthropic/anthropic-provider.js";
import { braveProvider } from "./brave/brave-provider.js";
import { deepgramProvider } from "./deepgram/deepgram-provider.js";
import { elevenlabsProvider } from "./elevenlabs/elevenlabs-provider.js";
import { geminiProvider } from "./gemini/gemini-provider.js";
import { localProvider } from "./local/local-provider.js";
import { openaiProvider } from "./openai/openai-provider.js";
import type { ProviderDefinition } from "./provider.js";
import { runwayProvider } from "./runway/runway-provider.js";
import { searxngProvider } from "./searxng/searxng-provider.js";
import { stabilityProvider } from "./stability/stability-provider.js";
import { tavilyProvider } from "./tavily/tavily-provider.js";

const definitions: ProviderDefinition[] = [
  openaiProvider,
  anthropicProvider,
  geminiProvider,
  stabilityProvider,
  localProvider,
  deepgramProvider,
  elevenlabsProvider,
  runwayProvider,
  braveProvider,
  tavilyProvider,
  searxngProvider,
];

export const providerTypes: ReadonlyMap<string, ProviderDefinition> = new Map(definitions.map((definition) => [definition.type, definition]));
