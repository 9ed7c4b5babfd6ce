// Provider types gw implements (src/providers/registry.ts) and what each offers ("chat", "image" ...).
// A `type` outside these is skipped by the gateway (src/gateway/provider-set.ts), so the CLI
// refuses to point anything at it.
import type { ProviderTypeCapabilities } from "../admin/config-edits/providers.js";

/** Type -> capabilities. Loaded on demand: the registry pulls in every vendor adapter. */
export async function implementedProviderTypes(): Promise<ProviderTypeCapabilities> {
  const { providerTypes } = await import("../providers/registry.js");
  return new Map([...providerTypes].map(([type, definition]) => [type, definition.capabilities]));
}
