// POST /v1/embeddings (Bearer key, per-key rate limits): OpenAI's embeddings API, routed and billed
// like chat completions; errors in the gateway envelope, an upstream's error passed through.
import type { H3 } from "h3";
import { parseEmbeddingsRequest } from "../../gateway/embeddings/embeddings-request.js";
import type { Gateway } from "../../gateway/gateway.js";
import { cacheEntryOf, keepJson, replayFromCache } from "../cached-answers.js";
import { readJsonObject } from "../read-json-body.js";
import { admitCallerWithHold, clientGoneSignal, requestIdOf } from "../request-context.js";

export const EMBEDDINGS_PATH = "/v1/embeddings";

export function registerEmbeddings(app: H3, gateway: Gateway): void {
  app.post(EMBEDDINGS_PATH, async (event) => {
    const requestId = requestIdOf(event);
    const { caller, plan, admission } = await admitCallerWithHold(event, gateway);
    return admission.around(async () => {
      const request = parseEmbeddingsRequest(await readJsonObject(event, gateway.config.server.maxJsonBodyBytes));
      const endpoint = "embeddings";
      // An embedding does not sample: the same input gives the same vector.
      const cache = cacheEntryOf(event, gateway, {
        endpoint,
        model: request.model,
        body: request,
        sampled: false,
        caller,
        plan: plan.limits,
        requestId,
        admission,
      });
      const replayed = cache && (await replayFromCache<never>(event, gateway, cache, noStream));
      if (replayed) return replayed;
      const context = { caller, plan: plan.limits, requestId, signal: clientGoneSignal(event), endpoint, admission, recorded: cache?.recorded };
      const created = await gateway.embeddings.create(request, context);
      if (created.upstreamRequestId) event.res.headers.set("x-service-upstream-trace-id", created.upstreamRequestId);
      return cache ? keepJson(gateway, cache, created.body) : created.body;
    });
  });
}

/** Embeddings are never streamed: nothing kept is a stream. */
async function* noStream(): AsyncGenerator<string, undefined> {}
