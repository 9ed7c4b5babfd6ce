// POST /anthropic/v1/messages and /anthropic/v1/messages/count_tokens: the Anthropic Messages
// format, key in `x-api-key`. Errors on these paths render in Anthropic's shape (render-error.ts).
// Routes match the path alone, so Claude Code's `?beta=true` changes nothing. HEAD /anthropic
// answers Claude Code's probe of its base URL.
import type { H3, H3Event } from "h3";
import { withCreditsInUsage } from "../../gateway/billing/credits-in-usage.js";
import { samplesAnswer } from "../../gateway/cache/cache-lifetime.js";
import type { Gateway } from "../../gateway/gateway.js";
import { parseCountTokensRequest, parseMessagesRequest } from "../../gateway/messages/messages-request.js";
import type { NativeMessagesEvent } from "../../providers/messages-types.js";
import { cacheEntryOf, keepJson, keepStream, replayFromCache } from "../cached-answers.js";
import { readJsonObject } from "../read-json-body.js";
import type { RequestCharges } from "../request-charges.js";
import { admitCaller, admitCallerWithHold, clientGoneSignal, headerTagsOf, requestIdOf } from "../request-context.js";
import { messagesFrames } from "../sse-frames.js";
import { sseResponse } from "../sse-response.js";

export const MESSAGES_PATH = "/anthropic/v1/messages";
export const COUNT_TOKENS_PATH = "/anthropic/v1/messages/count_tokens";

/** Client headers a native upstream should see. */
const FORWARDED_HEADERS = ["anthropic-version", "anthropic-beta"];

export function registerMessages(app: H3, gateway: Gateway, charges: RequestCharges): void {
  // The base URL answers a probe (no key, no body), as a reachable API does.
  for (const path of ["/anthropic", "/anthropic/"]) app.on("HEAD", path, () => new Response(null, { status: 200 }));

  app.post(COUNT_TOKENS_PATH, async (event) => {
    const { caller, plan } = await admitCaller(event, gateway, apiKeyOf(event));
    const request = parseCountTokensRequest(await readJsonObject(event, gateway.config.server.maxJsonBodyBytes));
    const context = { caller, plan: plan.limits, requestId: requestIdOf(event), signal: clientGoneSignal(event), endpoint: "messages" };
    const result = await gateway.messages.countTokens(request, context, forwardedHeaders(event));
    if (result.upstreamRequestId) event.res.headers.set("x-service-upstream-trace-id", result.upstreamRequestId);
    return result.body;
  });

  app.post(
    MESSAGES_PATH,
    charges.counted(async (event, charge) => {
      const requestId = requestIdOf(event);
      const { caller, plan, admission } = await admitCallerWithHold(event, gateway, apiKeyOf(event));
      return admission.around(async () => {
        // Anthropic's `metadata` holds a user id, not tags: only the header gives them.
        const tags = headerTagsOf(event);
        const request = parseMessagesRequest(await readJsonObject(event, gateway.config.server.maxJsonBodyBytes));
        const endpoint = "messages";
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
        const replayed = cache && (await replayFromCache<NativeMessagesEvent>(event, gateway, cache, messagesFrames));
        if (replayed) return replayed;
        const context = { caller, plan: plan.limits, requestId, signal: clientGoneSignal(event), endpoint, admission, recorded: cache?.recorded, tags };
        const headers = forwardedHeaders(event);
        if (request.stream) {
          charge.streamed = true;
          const streaming = await gateway.messages.stream(request, context, headers);
          const responseHeaders: Record<string, string> = {};
          if (streaming.upstreamRequestId) responseHeaders["x-service-upstream-trace-id"] = streaming.upstreamRequestId;
          const events = cache ? keepStream(gateway, cache, streaming.events, endedWithStop) : streaming.events;
          return sseResponse(messagesFrames(events), responseHeaders, gateway.afterTurnWrites);
        }
        const result = await gateway.messages.create(request, context, headers);
        if (result.upstreamRequestId) event.res.headers.set("x-service-upstream-trace-id", result.upstreamRequestId);
        withCreditsInUsage(result.body, charge.credits);
        return cache ? keepJson(gateway, cache, result.body) : result.body;
      });
    }),
  );
}

/** A messages stream that failed part-way ends with an `error` event; one that ended well, with message_stop. */
function endedWithStop(events: NativeMessagesEvent[]): boolean {
  return events.at(-1)?.event === "message_stop";
}

/** The SDK sends `x-api-key`; `Authorization: Bearer` (its authToken option) works too. */
function apiKeyOf(event: H3Event): string | null {
  const key = event.req.headers.get("x-api-key");
  if (key) return key.trim();
  const match = /^Bearer\s+(\S+)\s*$/i.exec(event.req.headers.get("authorization") ?? "");
  return match ? match[1]! : null;
}

function forwardedHeaders(event: H3Event): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of FORWARDED_HEADERS) {
    const value = event.req.headers.get(name);
    if (value) headers[name] = value;
  }
  return headers;
}
