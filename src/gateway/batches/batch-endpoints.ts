// The endpoints a batch's lines may call, each as its live route does it: the body parsed and
// checked by the same parser (400 naming the parameter), then the same service, billed under the
// same usage-row endpoint (docs/decisions.md §23). Lines are never streamed: a batch line's
// answer is one JSON body.

import { samplesAnswer } from "../cache/cache-lifetime.js";
import { parseChatRequest } from "../chat/chat-request.js";
import type { ChatService } from "../chat/chat-service.js";
import { parseEmbeddingsRequest } from "../embeddings/embeddings-request.js";
import type { EmbeddingsService } from "../embeddings/embeddings-service.js";
import { InvalidRequestError } from "../errors.js";
import { parseMessagesRequest } from "../messages/messages-request.js";
import type { MessagesService } from "../messages/messages-service.js";
import { parseResponsesRequest } from "../responses/responses-request.js";
import type { ResponsesService } from "../responses/responses-service.js";
import type { ChatCallContext } from "../upstream-calls/chat-metering.js";

/** A line's body as its endpoint parsed it: what the cache and the route check need, and the call. */
export interface ParsedLine {
  model: string;
  /** The body as gw acts on it (hashed by the cache). */
  body: unknown;
  sampled: boolean;
  /** The body's OpenAI `metadata` (chat completions, responses): its pairs add to the line's tags. */
  metadata?: unknown;
  run(context: ChatCallContext & { planName: string }): Promise<unknown>;
}

export interface BatchServices {
  chat: ChatService;
  messages: MessagesService;
  responses: ResponsesService;
  embeddings: EmbeddingsService;
}

interface BatchEndpoint {
  /** The usage row's endpoint, as the live route names it. */
  usageEndpoint: string;
  parse(body: Record<string, unknown>, services: BatchServices): ParsedLine;
}

export const BATCH_ENDPOINTS: Record<string, BatchEndpoint> = {
  "/v1/chat/completions": {
    usageEndpoint: "chat.completions",
    parse(body, { chat }) {
      const request = parseChatRequest(body);
      refuseStream(request.stream);
      return {
        model: request.model,
        body: request,
        sampled: samplesAnswer(request),
        metadata: request.metadata,
        run: async (context) => (await chat.complete(request, context)).body,
      };
    },
  },
  "/v1/responses": {
    usageEndpoint: "responses",
    parse(body, { responses }) {
      const request = parseResponsesRequest(body);
      refuseStream(request.stream);
      // A line's searches would be billed as rows of their own, and its answer is of its moment.
      if (request.tools?.some((tool) => tool.type.startsWith("web_search")))
        throw new InvalidRequestError("A batch line cannot use the web_search tool; send it as a live request.", { param: "tools" });
      return {
        model: request.model,
        body: request,
        sampled: samplesAnswer(request),
        metadata: request.metadata,
        run: async (context) => (await responses.create(request, context)).body,
      };
    },
  },
  "/v1/embeddings": {
    usageEndpoint: "embeddings",
    parse(body, { embeddings }) {
      const request = parseEmbeddingsRequest(body);
      return { model: request.model, body: request, sampled: false, run: async (context) => (await embeddings.create(request, context)).body };
    },
  },
  "/v1/messages": {
    usageEndpoint: "messages",
    parse(body, { messages }) {
      const request = parseMessagesRequest(body);
      refuseStream(request.stream);
      return {
        model: request.model,
        body: request,
        sampled: samplesAnswer(request),
        run: async (context) => (await messages.create(request, context, {})).body,
      };
    },
  },
};

/** The endpoint names a batch accepts, for the 400 that lists them. */
export const BATCH_ENDPOINT_NAMES = Object.keys(BATCH_ENDPOINTS);

function refuseStream(stream: boolean | null | undefined): void {
  if (stream)
    throw new InvalidRequestError("A batch line cannot be streamed: leave out `stream` (its answer is written to the output file).", { param: "stream" });
}
