// POST /v1/responses, as the domain sees it: the Responses API request converted to a chat
// completion and sent through the chat service (so routing, plans, key patterns, credits, rate
// limits, retries, fallback, breakers, the access log and metrics are chat's, and the usage row
// names the `responses` endpoint), the answer converted back: a Response object, or the stream
// of Responses events (docs/decisions.md §19).
import { type Json, parseJsonObject } from "../../json/json-values.js";
import type { ChatChunk } from "../../providers/chat-types.js";
import type { ChatCallContext, ChatService } from "../chat/chat-service.js";
import { GatewayError, InvalidRequestError } from "../errors.js";
import { ChatStreamToResponseEvents, type ResponseStreamEvent } from "./chat-stream-to-response-events.js";
import { convertChatToResponse, newItemId } from "./convert-chat-to-response.js";
import { convertResponsesToChat } from "./convert-responses-to-chat.js";
import type { ResponsesRequest } from "./responses-request.js";

export interface ResponsesAnswer {
  upstreamRequestId?: string;
  filledMaxTokens?: number;
  /** Hosted tool types left out of the upstream call (said in a response header). */
  droppedTools: string[];
}

export interface CreatedResponse extends ResponsesAnswer {
  body: Json;
}

export interface StreamingResponse extends ResponsesAnswer {
  /** Batches of named events; the last is response.completed, .incomplete or .failed. */
  events: AsyncGenerator<ResponseStreamEvent[]>;
}

export class ResponsesService {
  constructor(private readonly chat: ChatService) {}

  async create(request: ResponsesRequest, context: ChatCallContext): Promise<CreatedResponse> {
    const { chat, droppedTools } = convertResponsesToChat(refuseUnkept(request));
    const completed = await this.chat.complete({ ...chat, stream: false }, context);
    const ids = { id: newItemId("resp"), createdAt: nowSeconds(), model: completed.body.model };
    const body = convertChatToResponse(request, completed.body, ids);
    return { body, upstreamRequestId: completed.upstreamRequestId, filledMaxTokens: completed.filledMaxTokens, droppedTools };
  }

  /** Resolves once an upstream accepted the call (failures before that are the usual error answers); events follow. */
  async stream(request: ResponsesRequest, context: ChatCallContext, log: (error: unknown) => void): Promise<StreamingResponse> {
    const { chat, droppedTools } = convertResponsesToChat(refuseUnkept(request));
    const streaming = await this.chat.stream({ ...chat, stream: true }, context);
    const converter = new ChatStreamToResponseEvents(request, { id: newItemId("resp"), createdAt: nowSeconds(), model: request.model });
    return {
      events: relay(streaming.chunks, converter, log),
      upstreamRequestId: streaming.upstreamRequestId,
      filledMaxTokens: streaming.filledMaxTokens,
      droppedTools,
    };
  }
}

async function* relay(
  chunks: AsyncGenerator<string[]>,
  converter: ChatStreamToResponseEvents,
  log: (error: unknown) => void,
): AsyncGenerator<ResponseStreamEvent[]> {
  yield converter.start();
  try {
    for await (const batch of chunks) {
      const events: ResponseStreamEvent[] = [];
      for (const text of batch) {
        const chunk = parseJsonObject(text);
        if (chunk) events.push(...converter.push(chunk as ChatChunk));
      }
      if (events.length > 0) yield events;
    }
    yield converter.finish();
  } catch (error) {
    // A client that went away aborted the upstream call: nobody to tell.
    if (!(error instanceof GatewayError) && !(error instanceof Error && error.name === "AbortError")) log(error);
    yield converter.fail(failureOf(error));
  }
}

function failureOf(error: unknown): { code: string; message: string } {
  if (error instanceof GatewayError) return { code: error.code, message: error.message };
  return { code: "stream_interrupted", message: "The upstream stream failed before it finished." };
}

/** Stored responses are not kept yet: a request that needs one is refused, not answered without its history. */
function refuseUnkept(request: ResponsesRequest): ResponsesRequest {
  if (request.previous_response_id) {
    throw new InvalidRequestError("previous_response_id needs stored responses, which this gateway does not keep yet; send the whole conversation as input.", {
      param: "previous_response_id",
    });
  }
  return request;
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
