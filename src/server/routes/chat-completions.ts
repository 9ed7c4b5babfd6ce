// POST /v1/chat/completions
import type { H3 } from "h3";
import { withCreditsInUsage } from "../../gateway/billing/credits-in-usage.js";
import { samplesAnswer } from "../../gateway/cache/cache-lifetime.js";
import { parseChatRequest } from "../../gateway/chat/chat-request.js";
import type { Gateway } from "../../gateway/gateway.js";
import { requestTags } from "../../gateway/request-tags.js";
import { cacheEntryOf, keepJson, keepStream, replayFromCache } from "../cached-answers.js";
import { readJsonObject } from "../read-json-body.js";
import type { RequestCharges } from "../request-charges.js";
import { admitCallerWithHold, clientGoneSignal, headerTagsOf, requestIdOf } from "../request-context.js";
import type { ServerLogger } from "../server-logger.js";
import { chatFrames } from "../sse-frames.js";
import { sseResponse } from "../sse-response.js";

/** Set when the request named no max_tokens: the one gw sent, what the balance pays for within the model's limit. */
export const FILLED_MAX_TOKENS_HEADER = "x-service-max-tokens-filled";

export function registerChatCompletions(app: H3, gateway: Gateway, logger: ServerLogger, charges: RequestCharges): void {
  app.post(
    "/v1/chat/completions",
    charges.counted(async (event, charge) => {
      const requestId = requestIdOf(event);
      const { caller, plan, admission } = await admitCallerWithHold(event, gateway);
      return admission.around(async () => {
        const headerTags = headerTagsOf(event);
        const request = parseChatRequest(await readJsonObject(event, gateway.config.server.maxJsonBodyBytes));
        const tags = requestTags(headerTags, request.metadata);
        const endpoint = "chat.completions";
        const cache = cacheEntryOf(event, gateway, {
          endpoint,
          model: request.model,
          body: request,
          sampled: samplesAnswer(request),
          caller,
          plan: plan.limits,
          requestId,
          admission,
          tags,
        });
        const log = (error: unknown) => logger.error(error, requestId);
        const replayed = cache && (await replayFromCache<string>(event, gateway, cache, (batches) => chatFrames(batches, log)));
        if (replayed) return replayed;
        const context = { caller, plan: plan.limits, requestId, signal: clientGoneSignal(event), endpoint, admission, recorded: cache?.recorded, tags };
        if (request.stream) {
          charge.streamed = true;
          const streaming = await gateway.chat.stream(request, context);
          const headers: Record<string, string> = {};
          if (streaming.upstreamRequestId) headers["x-service-upstream-trace-id"] = streaming.upstreamRequestId;
          if (streaming.filledMaxTokens !== undefined) headers[FILLED_MAX_TOKENS_HEADER] = String(streaming.filledMaxTokens);
          // A chat stream that failed part-way throws: one that ends has ended well.
          const chunks = cache ? keepStream(gateway, cache, streaming.chunks, () => true) : streaming.chunks;
          return sseResponse(chatFrames(chunks, log), headers, gateway.afterTurnWrites);
        }
        const completed = await gateway.chat.complete(request, context);
        if (completed.upstreamRequestId) event.res.headers.set("x-service-upstream-trace-id", completed.upstreamRequestId);
        if (completed.filledMaxTokens !== undefined) event.res.headers.set(FILLED_MAX_TOKENS_HEADER, String(completed.filledMaxTokens));
        withCreditsInUsage(completed.body, charge.credits);
        return cache ? keepJson(gateway, cache, completed.body) : completed.body;
      });
    }),
  );
}
