// The providers of the current config, instantiated through the registry. Rebuilt on reload, and
// each build warns about providers of a type gw does not implement (skipped, not silently).
import type { Config } from "../config/resolved-config.js";
import { describeUnknownProviderType, unknownProviderTypes } from "../config/unknown-provider-types.js";
import { secretRedactor } from "../net/secret-redaction.js";
import type { UpstreamHttp } from "../net/upstream-http.js";
import type { Provider } from "../providers/provider.js";
import { providerTypes } from "../providers/registry.js";

export function createProviders(config: Config, http: UpstreamHttp, warn: (message: string) => void): Map<string, Provider> {
  const providers = new Map<string, Provider>();
  for (const unknown of unknownProviderTypes(config, providerTypes.keys())) warn(`config: ${describeUnknownProviderType(unknown, providerTypes.keys())}`);
  for (const [name, providerConfig] of Object.entries(config.providers)) {
    const definition = providerTypes.get(providerConfig.type);
    // Unknown types (warned about above) are skipped; routes to them fail over.
    if (!definition) continue;
    const upstream = { ...config.upstream, ...providerConfig.upstream };
    const redact = secretRedactor([providerConfig.apiKey, ...Object.values(providerConfig.headers ?? {})]);
    const engines = { videoConcurrency: config.video.localConcurrency };
    providers.set(name, definition.create({ name, config: providerConfig, upstream, http, redact, warn, engines }));
  }
  return providers;
}
