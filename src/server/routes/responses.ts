// POST /v1/responses: OpenAI's Responses API over every chat upstream (gateway/responses/); GET
// and DELETE /v1/responses/{id} and GET /v1/responses/{id}/input_items on the stored ones.
import type { H3 } from "h3";
import { withCreditsInUsage } from "../../gateway/billing/credits-in-usage.js";
import { samplesAnswer } from "../../gateway/cache/cache-lifetime.js";
import { InvalidRequestError } from "../../gateway/errors.js";
import type { Gateway } from "../../gateway/gateway.js";
import { requestTags } from "../../gateway/request-tags.js";
import { parseResponsesRequest } from "../../gateway/responses/responses-request.js";
import type { ResponsesAnswer } from "../../gateway/responses/responses-service.js";
import type { NativeMessagesEvent } from "../../providers/messages-types.js";
import { cacheEntryOf, keepJson, keepStream, replayFromCache } from "../cached-answers.js";
import { readJsonObject } from "../read-json-body.js";
import type { RequestCharges } from "../request-charges.js";
import { admitCaller, admitCallerWithHold, clientGoneSignal, headerTagsOf, requestIdOf } from "../request-context.js";
import type { ServerLogger } from "../server-logger.js";
import { messagesFrames } from "../sse-frames.js";
import { sseResponse } from "../sse-response.js";
import { FILLED_MAX_TOKENS_HEADER } from "./chat-completions.js";

export const RESPONSES_PATH = "/v1/responses";

/** Hosted tools a client sent that gw does not serve for it, left out of the call (docs/decisions.md §19). */
export const TOOLS_LEFT_OUT_HEADER = "x-service-tools-left-out";

/** Hints a chat completion cannot carry, left out of the call (docs/decisions.md §19). */
export const PARAMS_IGNORED_HEADER = "x-service-params-ignored";

export function registerResponses(app: H3, gateway: Gateway, logger: ServerLogger, charges: RequestCharges): void {
  app.post(
    RESPONSES_PATH,
    charges.counted(async (event, charge) => {
      const requestId = requestIdOf(event);
      const { caller, plan, admission } = await admitCallerWithHold(event, gateway);
      return admission.around(async () => {
        const headerTags = headerTagsOf(event);
        const request = parseResponsesRequest(await readJsonObject(event, gateway.config.server.maxJsonBodyBytes));
        const tags = requestTags(headerTags, request.metadata);
        const endpoint = "responses";
        // An answer that searched the web is of its moment: never kept.
        const searches = request.tools?.some((tool) => tool.type.startsWith("web_search")) ?? false;
        const cache = searches
          ? undefined
          : cacheEntryOf(event, gateway, {
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
        const context = {
          caller,
          plan: plan.limits,
          planName: plan.name,
          requestId,
          signal: clientGoneSignal(event),
          endpoint,
          admission,
          recorded: cache?.recorded,
          tags,
          chunksConverted: true,
        };
        if (request.stream) {
          charge.streamed = true;
          const streaming = await gateway.responses.stream(request, context, (error) => logger.error(error, requestId));
          const events = cache ? keepStream(gateway, cache, streaming.events, endedComplete) : streaming.events;
          return sseResponse(messagesFrames(events), answerHeaders(streaming), gateway.afterTurnWrites);
        }
        const created = await gateway.responses.create(request, context);
        for (const [name, value] of Object.entries(answerHeaders(created))) event.res.headers.set(name, value);
        withCreditsInUsage(created.body, charge.credits);
        return cache ? keepJson(gateway, cache, created.body) : created.body;
      });
    }),
  );

  app.get(`${RESPONSES_PATH}/:id`, async (event) => {
    const { caller } = await admitCaller(event, gateway);
    return gateway.responses.retrieve(responseIdOf(event.context), caller.agent.id);
  });

  app.delete(`${RESPONSES_PATH}/:id`, async (event) => {
    const { caller } = await admitCaller(event, gateway);
    return gateway.responses.delete(responseIdOf(event.context), caller.agent.id);
  });

  app.get(`${RESPONSES_PATH}/:id/input_items`, async (event) => {
    const { caller } = await admitCaller(event, gateway);
    const query = event.url.searchParams;
    const order = query.get("order") ?? "desc";
    if (order !== "asc" && order !== "desc") throw new InvalidRequestError("Invalid 'order': expected asc or desc.", { param: "order" });
    const limitText = query.get("limit") ?? "20";
    const limit = Number(limitText);
    if (!/^\d+$/.test(limitText) || limit < 1 || limit > 100)
      throw new InvalidRequestError("Invalid 'limit': a whole number from 1 to 100.", { param: "limit" });
    return gateway.responses.inputItems(responseIdOf(event.context), caller.agent.id, { limit, order, after: query.get("after") ?? undefined });
  });
}

/** A Responses stream ends with response.completed or .incomplete when it ended well, response.failed when not. */
function endedComplete(events: NativeMessagesEvent[]): boolean {
  const last = events.at(-1)?.event;
  return last === "response.completed" || last === "response.incomplete";
}

function responseIdOf(context: unknown): string {
  return (context as { params?: Record<string, string> }).params?.id ?? "";
}

function answerHeaders(answer: ResponsesAnswer): Record<string, string> {
  const headers: Record<string, string> = {};
  if (answer.upstreamRequestId) headers["x-service-upstream-trace-id"] = answer.upstreamRequestId;
  if (answer.filledMaxTokens !== undefined) headers[FILLED_MAX_TOKENS_HEADER] = String(answer.filledMaxTokens);
  if (answer.droppedTools.length > 0) headers[TOOLS_LEFT_OUT_HEADER] = answer.droppedTools.join(", ");
  if (answer.paramsIgnored.length > 0) headers[PARAMS_IGNORED_HEADER] = answer.paramsIgnored.join(", ");
  return headers;
}
