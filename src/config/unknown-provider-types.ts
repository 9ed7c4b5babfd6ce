// Providers whose `type` gw does not implement (a hand-edited config.json, a typo, a vendor of a
// later version). The gateway skips them, so routes to them fail over; the server warns at every
// load and reload, and `gw doctor` fails, naming the provider, its type and the types gw knows.
// The known types come from the caller (src/providers/registry.ts), which src/config cannot import.
import type { Config } from "./resolved-config.js";

export interface UnknownProviderType {
  provider: string;
  type: string;
}

export function unknownProviderTypes(config: Pick<Config, "providers">, known: Iterable<string>): UnknownProviderType[] {
  const types = new Set(known);
  return Object.entries(config.providers)
    .filter(([, provider]) => !types.has(provider.type))
    .map(([name, provider]) => ({ provider: name, type: provider.type }));
}

export function describeUnknownProviderType(entry: UnknownProviderType, known: Iterable<string>): string {
  return (
    `provider "${entry.provider}" has type "${entry.type}", which gw does not implement: it is skipped and requests routed to it ` +
    `go to the next route. Known types: ${[...known].sort().join(", ")}.`
  );
}
