// POST /v1/embeddings (Bearer key, per-key rate limits): OpenAI's embeddings API, routed and billed
// like chat completions; errors in the gateway envelope, an upstream's error passed through.
import type { H3 } from "h3";
import { withCreditsInUsage } from "../../gateway/billing/credits-in-usage.js";
import { parseEmbeddingsRequest } from "../../gateway/embeddings/embeddings-request.js";
import type { Gateway } from "../../gateway/gateway.js";
import { cacheEntryOf, keepJson, replayFromCache } from "../cached-answers.js";
import { readJsonObject } from "../read-json-body.js";
import type { RequestCharges } from "../request-charges.js";
import { admitCallerWithHold, clientGoneSignal, headerTagsOf, requestIdOf } from "../request-context.js";

export const EMBEDDINGS_PATH = "/v1/embeddings";

export function registerEmbeddings(app: H3, gateway: Gateway, charges: RequestCharges): void {
  app.post(
    EMBEDDINGS_PATH,
    charges.counted(async (event, charge) => {
      const requestId = requestIdOf(event);
      const { caller, plan, admission } = await admitCallerWithHold(event, gateway);
      return admission.around(async () => {
        const tags = headerTagsOf(event);
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
          tags,
        });
        const replayed = cache && (await replayFromCache<never>(event, gateway, cache, noStream));
        if (replayed) return replayed;
        const context = { caller, plan: plan.limits, requestId, signal: clientGoneSignal(event), endpoint, admission, recorded: cache?.recorded, tags };
        const created = await gateway.embeddings.create(request, context);
        if (created.upstreamRequestId) event.res.headers.set("x-service-upstream-trace-id", created.upstreamRequestId);
        withCreditsInUsage(created.body, charge.credits);
        return cache ? keepJson(gateway, cache, created.body) : created.body;
      });
    }),
  );
}

/** Embeddings are never streamed: nothing kept is a stream. */
async function* noStream(): AsyncGenerator<string, undefined> {}
