// Which model ids a tool outside the image catalog may be given (`gw tools enable`, the admin API):
// ids that a configured provider of a type gw implements could serve. The image and audio tools
// are checked against their catalog instead (tools.ts).
import type { Config } from "../../config/resolved-config.js";
import { AdminInputError } from "../admin-requests.js";
import type { ProviderTypeCapabilities } from "./providers.js";

/** Tools whose model is a chat model, reached through the routes like any chat request. */
const CHAT_TOOLS = new Set(["describe", "enhance"]);

/** OCR runs the local tesseract engine only (src/gateway/vision/ocr-service.ts). */
const OCR_ENGINE = "tesseract";

/** Refuse MODEL for TOOL unless something configured here could serve it; the error names what could. */
export function requireServableModel(config: Config, types: ProviderTypeCapabilities, tool: string, model: string): void {
  if (CHAT_TOOLS.has(tool)) requireRoutableChatModel(config, types, tool, model);
  else if (tool === "ocr") requireOcrEngine(config, model);
  else requireImplementedProvider(config, types, tool, model);
}

function offers(config: Config, types: ProviderTypeCapabilities, provider: string, capability: string): boolean {
  const type = config.providers[provider]?.type;
  return type !== undefined && (types.get(type) ?? []).includes(capability);
}

/** As the route resolver matches: `auto` by an auto route, anything else by a prefix route with a model left over. */
function requireRoutableChatModel(config: Config, types: ProviderTypeCapabilities, tool: string, model: string): void {
  const chatRoutes = config.routes.filter((route) => {
    const providers = route.upstreams ? route.upstreams.map((upstream) => upstream.provider) : [route.provider ?? ""];
    return providers.some((provider) => offers(config, types, provider, "chat"));
  });
  const routable =
    model === "auto"
      ? chatRoutes.some((route) => route.prefix === "auto" && route.upstreams)
      : chatRoutes.some(
          (route) =>
            route.prefix !== "auto" && route.provider && model.startsWith(route.prefix) && (route.model !== undefined || model.length > route.prefix.length),
        );
  if (routable) return;
  const prefixes = chatRoutes.map((route) => (route.prefix === "auto" || route.model !== undefined ? route.prefix : `${route.prefix}MODEL`));
  throw new AdminInputError(
    "model",
    `"${model}" is not a chat model this gateway routes, which ${tool} needs: ${prefixes.length > 0 ? `chat models here are ${prefixes.join(", ")}` : "no route leads to a chat provider (gw routes add)"}`,
  );
}

function requireOcrEngine(config: Config, model: string): void {
  const engines = Object.entries(config.providers)
    .filter(([, provider]) => provider.type === "local")
    .map(([name]) => `${name}/${OCR_ENGINE}`);
  if (engines.includes(model)) return;
  throw new AdminInputError(
    "model",
    `"${model}" is not an OCR engine gw runs: ocr takes ${engines.join(", ") || `PROVIDER/${OCR_ENGINE} with a provider of type local (gw providers add local --type local)`}`,
  );
}

/** A tool the config adds beyond the known ones: at least a provider gw implements. */
function requireImplementedProvider(config: Config, types: ProviderTypeCapabilities, tool: string, model: string): void {
  const usable = Object.entries(config.providers)
    .filter(([, provider]) => types.has(provider.type))
    .map(([name]) => name);
  const expected = `${tool} takes PROVIDER/MODEL with one of the configured providers gw implements: ${usable.join(", ") || "none"}`;
  const separator = model.indexOf("/");
  if (separator <= 0 || separator === model.length - 1) throw new AdminInputError("model", `"${model}" is not PROVIDER/MODEL; ${expected}`);
  const name = model.slice(0, separator);
  const provider = config.providers[name];
  if (!provider) throw new AdminInputError("model", `"${model}": no provider "${name}" is configured; ${expected}`);
  if (!types.has(provider.type)) {
    throw new AdminInputError(
      "model",
      `"${model}": provider "${name}" is of type ${provider.type}, which gw does not implement (it implements ${[...types.keys()].join(", ")}); ${expected}`,
    );
  }
}
