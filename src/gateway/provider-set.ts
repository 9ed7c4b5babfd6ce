// The providers of the current config, instantiated through the registry. Rebuilt on reload, and
// each build warns about providers of a type gw does not implement (skipped, not silently).
import { upstreamSettingsFor } from "../config/config-schema.js";
import type { Config } from "../config/resolved-config.js";
import { describeUnknownProviderType, unknownProviderTypes } from "../config/unknown-provider-types.js";
import type { UrlFetcher } from "../net/safe-fetch.js";
import { secretRedactor } from "../net/secret-redaction.js";
import type { UpstreamHttp } from "../net/upstream-http.js";
import type { Provider } from "../providers/provider.js";
import { providerTypes } from "../providers/registry.js";

/** `fetchUrl` is the gateway's SSRF-safe fetcher, for what a provider must download itself (a chat picture by URL for Gemini). */
export function createProviders(config: Config, http: UpstreamHttp, warn: (message: string) => void, fetchUrl?: UrlFetcher): Map<string, Provider> {
  const providers = new Map<string, Provider>();
  for (const unknown of unknownProviderTypes(config, providerTypes.keys())) warn(`config: ${describeUnknownProviderType(unknown, providerTypes.keys())}`);
  for (const [name, providerConfig] of Object.entries(config.providers)) {
    const definition = providerTypes.get(providerConfig.type);
    // Unknown types (warned about above) are skipped; routes to them fail over.
    if (!definition) continue;
    const upstream = upstreamSettingsFor(config, name);
    const redact = secretRedactor([providerConfig.apiKey, ...Object.values(providerConfig.headers ?? {})]);
    const engines = { videoConcurrency: config.video.localConcurrency };
    providers.set(name, definition.create({ name, config: providerConfig, upstream, http, redact, warn, engines, ...(fetchUrl ? { fetchUrl } : {}) }));
  }
  return providers;
}

/** Each type gw implements with what it offers ("chat", "image" ...): what a provider's type and a tool's model are checked against. */
export function providerTypeCapabilities(): ReadonlyMap<string, readonly string[]> {
  return new Map([...providerTypes].map(([type, definition]) => [type, definition.capabilities]));
}
