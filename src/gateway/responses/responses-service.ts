// POST /v1/responses, as the domain sees it: the Responses API request converted to a chat
// completion and sent through the chat service (so routing, plans, key patterns, credits, rate
// limits, retries, fallback, breakers, the access log and metrics are chat's, and the usage row
// names the `responses` endpoint), the answer converted back: a Response object, or the stream
// of Responses events. A response is stored for its agent unless the request says `store:
// false`, so `previous_response_id` continues it and GET / DELETE / input_items find it.
// A hosted web_search tool is served with gw's own search providers when the caller reaches one:
// each model call that asks for searches is followed by the searches and another model call, up
// to MAX_SEARCH_ROUNDS (docs/decisions.md §19).
import type { Json } from "../../json/json-values.js";
import type { ResponseStore } from "../../store/response-records.js";
import type { ChatRequestBody } from "../chat/chat-request.js";
import type { ChatCallContext, ChatService } from "../chat/chat-service.js";
import { GatewayError } from "../errors.js";
import { ChatStreamToResponseEvents, type ResponseStreamEvent } from "./chat-stream-to-response-events.js";
import { addUsage, convertChatToResponse, itemId, messageItem, newResponseId, type ResponseUsage, responseUsage } from "./convert-chat-to-response.js";
import { type ConvertedRequest, convertResponsesToChat } from "./convert-responses-to-chat.js";
import type { NativeResponses } from "./native-responses.js";
import { type Conversation, conversationOf, storedResponseOf } from "./response-conversation.js";
import type { ResponsesRequest } from "./responses-request.js";
import {
  MAX_SEARCH_ROUNDS,
  nextRoundRequest,
  queryOf,
  type SearchOutcome,
  searchRoundOf,
  WEB_SEARCH_TOOL_TYPES,
  webSearchCallItem,
} from "./web-search-tool.js";
import type { WebSearches } from "./web-searches.js";

/** A chat call's context and the plan's name, which a search refused for the plan names. */
export type ResponsesCallContext = ChatCallContext & { planName: string };

export interface ResponsesAnswer {
  upstreamRequestId?: string;
  filledMaxTokens?: number;
  /** Hosted tool types left out of the upstream call (said in a response header). */
  droppedTools: string[];
  /** Hints a chat completion cannot carry, left out of the upstream call (said in a response header). */
  paramsIgnored: string[];
}

export interface CreatedResponse extends ResponsesAnswer {
  body: Json;
}

export interface StreamingResponse extends ResponsesAnswer {
  /** Batches of named events; the last is response.completed, .incomplete or .failed. */
  events: AsyncGenerator<ResponseStreamEvent[]>;
}

/** One page of a response's input items (OpenAI's list shape). */
export interface InputItemsPage {
  object: "list";
  data: Json[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

export class ResponsesService {
  constructor(
    private readonly chat: ChatService,
    private readonly webSearches: WebSearches,
    private readonly store: ResponseStore,
    /** The server's log: a response that could not be stored. */
    private readonly warn: (message: string) => void,
    /** Routes that reach an upstream speaking /v1/responses natively (native-responses.ts). */
    private readonly native: NativeResponses,
  ) {}

  async create(request: ResponsesRequest, context: ResponsesCallContext): Promise<CreatedResponse> {
    const id = newResponseId();
    const createdAt = nowSeconds();
    const conversation = await conversationOf(request, context.caller.agent.id, id, this.store);
    const convert = () => this.converted(request, conversation, context);
    const first = this.native.reaches(request.model, context)
      ? await this.native.create(request, conversation, { id, createdAt, model: request.model }, context, convert)
      : undefined;
    if (first && "native" in first) {
      await this.keep(request, context, conversation, first.native.body);
      return { ...first.native, droppedTools: [], paramsIgnored: [] };
    }
    const { chat, droppedTools, searchOffered, paramsIgnored } = first?.converted ?? convert();
    // The items and usage of the model calls that searched, before the one that answers.
    const earlier: { output: Json[]; usage?: ResponseUsage } = { output: [] };
    let call = chat;
    for (let round = 0; ; round++) {
      const completed = round === 0 && first ? first.chat : await this.chat.complete(withStream(call, false), context);
      const searching = searchOffered && round < MAX_SEARCH_ROUNDS ? searchRoundOf(completed.body) : undefined;
      if (!searching) {
        const body = convertChatToResponse(request, completed.body, { id, createdAt, model: completed.body.model }, earlier);
        await this.keep(request, context, conversation, body);
        return { body, upstreamRequestId: completed.upstreamRequestId, filledMaxTokens: completed.filledMaxTokens, droppedTools, paramsIgnored };
      }
      if (searching.text !== "") earlier.output.push(messageItem(itemId("msg", id, "o", earlier.output.length), searching.text, "completed"));
      const outcomes: SearchOutcome[] = [];
      for (const searchCall of searching.calls) {
        const outcome = await this.webSearches.run(queryOf(searchCall), context);
        outcomes.push(outcome);
        if (outcome.query !== undefined) {
          earlier.output.push(webSearchCallItem(itemId("ws", id, "o", earlier.output.length), outcome.query, outcome.status, outcome.urls));
        }
      }
      earlier.usage = addUsage(earlier.usage, responseUsage(completed.body.usage));
      call = nextRoundRequest(call, searching.text, searching.calls, outcomes, round + 1 === MAX_SEARCH_ROUNDS);
    }
  }

  /** Resolves once an upstream accepted the call (failures before that are the usual error answers); events follow. */
  async stream(request: ResponsesRequest, context: ResponsesCallContext, log: (error: unknown) => void): Promise<StreamingResponse> {
    const id = newResponseId();
    const conversation = await conversationOf(request, context.caller.agent.id, id, this.store);
    const convert = () => this.converted(request, conversation, context);
    const ended = (response: Json) => this.keep(request, context, conversation, response);
    const first = this.native.reaches(request.model, context)
      ? await this.native.stream(request, conversation, { id, createdAt: nowSeconds(), model: request.model }, context, convert, { ended, log })
      : undefined;
    if (first && "native" in first) return { ...first.native, droppedTools: [], paramsIgnored: [] };
    const { chat, droppedTools, searchOffered, paramsIgnored } = first?.converted ?? convert();
    const streaming = first?.chat ?? (await this.chat.stream(withStream(chat, true), context));
    const converter = new ChatStreamToResponseEvents(request, { id, createdAt: nowSeconds(), model: request.model });
    const searching = searchOffered ? { chat, context } : undefined;
    return {
      events: this.relay(streaming.chunks, converter, log, ended, searching),
      upstreamRequestId: streaming.upstreamRequestId,
      filledMaxTokens: streaming.filledMaxTokens,
      droppedTools,
      paramsIgnored,
    };
  }

  /** The request as a chat completion, for the route's chat upstreams. */
  private converted(request: ResponsesRequest, conversation: Conversation, context: ResponsesCallContext): ConvertedRequest {
    const providerOf = () => this.native.convertedProvider(request.model, context);
    return convertResponsesToChat(request, conversation.items, this.searchServed(request, context), providerOf);
  }

  /** Whether a hosted web_search the request names is served (asked only when it names one: most requests do not). */
  private searchServed(request: ResponsesRequest, context: ResponsesCallContext): boolean {
    return (request.tools ?? []).some((tool) => WEB_SEARCH_TOOL_TYPES.has(tool.type)) && this.webSearches.offeredTo(context);
  }

  /** GET /v1/responses/{id}: the caller's agent's stored response. */
  async retrieve(id: string, agentId: string): Promise<Json> {
    return (await storedResponseOf(this.store, agentId, id)).response;
  }

  /** DELETE /v1/responses/{id}. */
  async delete(id: string, agentId: string): Promise<Json> {
    await storedResponseOf(this.store, agentId, id);
    await this.store.delete(id);
    return { id, object: "response.deleted", deleted: true };
  }

  /** GET /v1/responses/{id}/input_items: newest first unless `order` is asc, `limit` per page, after the item `after`. */
  async inputItems(id: string, agentId: string, page: { limit: number; order: "asc" | "desc"; after?: string }): Promise<InputItemsPage> {
    const { input } = await storedResponseOf(this.store, agentId, id);
    const ordered = page.order === "asc" ? input : [...input].reverse();
    const start = page.after === undefined ? 0 : ordered.findIndex((item) => item.id === page.after) + 1;
    const data = start === 0 && page.after !== undefined ? [] : ordered.slice(start, start + page.limit);
    return {
      object: "list",
      data,
      first_id: typeof data[0]?.id === "string" ? data[0].id : null,
      last_id: typeof data.at(-1)?.id === "string" ? (data.at(-1)?.id as string) : null,
      has_more: start + page.limit < ordered.length,
    };
  }

  /** Remove stored responses older than the retention. */
  prune(retentionDays: number): Promise<number> {
    return this.store.prune(nowSeconds() - retentionDays * 24 * 3600);
  }

  /** `searching`: web_search is served; the request of the model call under way, for the call after its searches. */
  private async *relay(
    first: AsyncGenerator<string[]>,
    converter: ChatStreamToResponseEvents,
    log: (error: unknown) => void,
    ended: (response: Json) => Promise<void>,
    searching: { chat: ChatRequestBody; context: ResponsesCallContext } | undefined,
  ): AsyncGenerator<ResponseStreamEvent[]> {
    yield converter.start();
    let last: ResponseStreamEvent[];
    try {
      let chunks = first;
      for (let round = 0; ; round++) {
        for await (const batch of chunks) {
          const events: ResponseStreamEvent[] = [];
          for (const json of batch) converter.pushJson(json, events);
          if (events.length > 0) yield events;
        }
        const searches = searching && round < MAX_SEARCH_ROUNDS ? converter.searchRound() : undefined;
        if (!searching || !searches) break;
        // Every model call's text streams as it comes; a call that searched ends before the searches' events.
        yield converter.endRound();
        const outcomes: SearchOutcome[] = [];
        for (const searchCall of searches.calls) {
          const query = queryOf(searchCall);
          const started = query === undefined ? undefined : converter.searchStarted(query);
          if (started) yield started.events;
          const outcome = await this.webSearches.run(query, searching.context);
          outcomes.push(outcome);
          if (started && query !== undefined) yield converter.searchEnded(started.index, query, outcome);
        }
        searching.chat = nextRoundRequest(searching.chat, searches.text, searches.calls, outcomes, round + 1 === MAX_SEARCH_ROUNDS);
        chunks = (await this.chat.stream(withStream(searching.chat, true), searching.context)).chunks;
      }
      last = converter.finish();
    } catch (error) {
      // A client that went away aborted the upstream call: nobody to tell.
      if (!(error instanceof GatewayError) && !(error instanceof Error && error.name === "AbortError")) log(error);
      last = converter.fail(failureOf(error));
    }
    // Stored before the last event goes out: a client that reads response.completed can continue from it at once.
    await ended(converter.finalResponse());
    yield last;
  }

  /** Store the response and the conversation it answered, unless the request said store: false. */
  private async keep(request: ResponsesRequest, context: ResponsesCallContext, conversation: Conversation, response: Json): Promise<void> {
    if (request.store === false) return;
    const id = String(response.id);
    try {
      await this.store.save({
        id,
        agentId: context.caller.agent.id,
        createdAt: typeof response.created_at === "number" ? response.created_at : nowSeconds(),
        response,
        input: [...conversation.history, ...conversation.input],
      });
    } catch (error) {
      this.warn(`response ${id} for request ${context.requestId} could not be stored: ${(error as Error).message}`);
    }
  }
}

function failureOf(error: unknown): { code: string; message: string } {
  if (error instanceof GatewayError) return { code: error.code, message: error.message };
  return { code: "stream_interrupted", message: "The upstream stream failed before it finished." };
}

/**
 * The converted request, which is this call's own, told whether to stream (set in place: a spread
 * of the request with one more field is V8's slow path, several µs a call).
 */
function withStream(chat: ChatRequestBody, stream: boolean): ChatRequestBody {
  chat.stream = stream;
  return chat;
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
