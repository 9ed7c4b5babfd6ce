// The first model call of a POST /v1/responses whose route reaches an upstream that speaks the
// Responses API natively (an `openai` provider with `responsesApi: true`; docs/decisions.md §19).
// One metered call as chat's (routing, plans, key patterns, the credit reservation, retries,
// fallback, breakers, access log, metrics, one `responses` usage row), dispatched per attempt: a
// native provider gets the request as the client wrote it (native-request.ts) and its answer
// comes back as it came, gw's ids aside (native-response-rewrite.ts); any other chat provider of
// the route gets it converted to chat, so a fallback from a native upstream still answers, and its
// chat completion (or chunks) goes back to the responses service, which goes on exactly as on the
// converted path (web_search rounds included).
import type { Json } from "../../json/json-values.js";
import type { ChatCapability, ChatRequest, ChatUsage } from "../../providers/chat-types.js";
import type { Provider } from "../../providers/provider.js";
import type { NativeResponsesEvent, ResponsesCallOptions, ResponsesCapability } from "../../providers/responses-types.js";
import type { ChatCallSize } from "../billing/chat-reservation.js";
import { measureChatPrompt } from "../billing/prompt-measure.js";
import { type ChatService, type CompletedChat, chatOf, type StreamingChat, upstreamRequest } from "../chat/chat-service.js";
import { GatewayError, InvalidRequestError } from "../errors.js";
import { type RouteCandidate, resolveRoutes } from "../routing/route-resolver.js";
import type { ServiceContext } from "../service-context.js";
import { AnswerSizeWatch } from "../upstream-calls/answer-size-watch.js";
import {
  type ChatAttemptOptions,
  type ChatCallContext,
  type ChatMetering,
  estimatedChatUsage,
  heldChatUnits,
  type MeteredCall,
  type RelayedText,
  textSize,
} from "../upstream-calls/chat-metering.js";
import { firstBatch } from "../upstream-calls/first-batch.js";
import type { AttemptTarget } from "../upstream-calls/upstream-attempts.js";
import { type ResponseIds, type ResponseUsage, responseUsage } from "./convert-chat-to-response.js";
import type { ConvertedRequest } from "./convert-responses-to-chat.js";
import { largerPrompt, measureNativePrompt, nativeRequestBody } from "./native-request.js";
import { NativeResponseStream, readResponsesUsage, rewriteResponse } from "./native-response-rewrite.js";
import type { Conversation } from "./response-conversation.js";
import type { ResponsesRequest } from "./responses-request.js";

/** What the service answers with a native upstream's answer. */
export interface NativeAnswer {
  upstreamRequestId?: string;
  filledMaxTokens?: number;
}

/** The call was served natively, or by a converted attempt whose chat answer the service goes on from. */
export type FirstCall<Native, Chat> = { native: Native } | { converted: ConvertedRequest; chat: Chat };

/** How a native stream ends: its last response stored (before the last event goes out), an unexpected failure logged. */
export interface NativeStreamHooks {
  ended: (response: Json) => Promise<void>;
  log: (error: unknown) => void;
}

/** The native upstream answered; the converted one (to the request as converted) sent a completion or its first chunks. */
type Answered<NativeResult, ChatResult> = { kind: "native"; result: NativeResult } | { kind: "chat"; result: ChatResult; converted: ConvertedRequest };

const supportsResponses = (provider: Provider) => provider.responses !== undefined || provider.chat !== undefined;

const NOTHING_RELAYED: RelayedText = { characters: 0, bytes: 0 };

export class NativeResponses {
  constructor(
    private readonly metering: ChatMetering,
    /** Its billing of chat answers, for the route's chat upstreams. */
    private readonly chat: ChatService,
    private readonly shared: Pick<ServiceContext, "config" | "providers">,
  ) {}

  /**
   * Whether one of the routes the caller may use for `model` goes to a native upstream. A request
   * that cannot be routed at all answers false: the converted path then refuses it as chat does.
   */
  reaches(model: string, context: ChatCallContext): boolean {
    const providers = this.shared.providers();
    if (!hasNativeProvider(providers.values())) return false;
    try {
      const candidates = resolveRoutes(this.shared.config(), model, { planName: context.caller.agent.plan, plan: context.plan });
      return candidates.some((candidate) => providers.get(candidate.provider)?.responses !== undefined);
    } catch {
      return false;
    }
  }

  /** The first provider of the caller's route for `model` that gets requests converted to chat (undefined when the model has no route). */
  convertedProvider(model: string, context: ChatCallContext): string | undefined {
    const providers = this.shared.providers();
    try {
      const candidates = resolveRoutes(this.shared.config(), model, { planName: context.caller.agent.plan, plan: context.plan });
      return candidates.find((candidate) => providers.get(candidate.provider)?.responses === undefined)?.provider;
    } catch {
      return undefined;
    }
  }

  async create(
    request: ResponsesRequest,
    conversation: Conversation,
    ids: ResponseIds,
    context: ChatCallContext,
    convert: () => ConvertedRequest,
  ): Promise<FirstCall<NativeAnswer & { body: Json }, CompletedChat>> {
    return this.call(request, conversation, context, convert, {
      native: async (responses, body, options) => responses.create(body, options),
      converted: async (chat, body, options) => chat.complete({ ...body, stream: false }, options),
      answered: async (answered, target, call) => {
        const { upstreamRequestId } = answered.result;
        const filledMaxTokens = this.metering.filledMaxTokens(call, target.candidate);
        if (answered.kind === "chat") {
          const chat = { body: await this.chat.settleCompletion(answered.result.body, context, target, call), upstreamRequestId, filledMaxTokens };
          return { converted: answered.converted, chat };
        }
        const { body } = answered.result;
        const usage = readResponsesUsage(body.usage);
        const relayed = "counts" in usage ? NOTHING_RELAYED : textSize(JSON.stringify(body.output));
        // The client sees what was billed: the upstream's usage, or the estimate when it had none that holds.
        if (!("counts" in usage)) body.usage = responseUsageOf(estimatedChatUsage(call, target, relayed));
        await this.metering.settle(call, context, target, usage, relayed);
        const response = rewriteResponse(body, request, { ...ids, model: target.candidate.publicModel });
        return { native: { body: response, upstreamRequestId, filledMaxTokens } };
      },
    });
  }

  /** Resolves once an upstream accepted the call and sent its first events (failures before that are retried or sent on). */
  async stream(
    request: ResponsesRequest,
    conversation: Conversation,
    ids: ResponseIds,
    context: ChatCallContext,
    convert: () => ConvertedRequest,
    hooks: NativeStreamHooks,
  ): Promise<FirstCall<NativeAnswer & { events: AsyncGenerator<NativeResponsesEvent[]> }, StreamingChat>> {
    return this.call(request, conversation, context, convert, {
      native: async (responses, body, options, candidate) => {
        const response = await responses.stream(body, options);
        const rest = response.events[Symbol.asyncIterator]();
        return { first: await firstBatch(rest, candidate.provider), rest, upstreamRequestId: response.upstreamRequestId };
      },
      converted: async (chat, body, options, candidate) => {
        const response = await chat.stream({ ...body, stream: true }, options);
        const rest = response.chunks[Symbol.asyncIterator]();
        return { first: await firstBatch(rest, candidate.provider), rest, upstreamRequestId: response.upstreamRequestId };
      },
      answered: async (answered, target, call) => {
        const { upstreamRequestId } = answered.result;
        const filledMaxTokens = this.metering.filledMaxTokens(call, target.candidate);
        if (answered.kind === "chat") {
          const { first, rest } = answered.result;
          return {
            converted: answered.converted,
            chat: { chunks: this.chat.relayChunks(first, rest, context, target, call), upstreamRequestId, filledMaxTokens },
          };
        }
        const estimate = (relayed: RelayedText) => responseUsageOf(estimatedChatUsage(call, target, relayed));
        const stream = new NativeResponseStream(request, { ...ids, model: target.candidate.publicModel }, estimate);
        const events = this.relayNative(answered.result.first, answered.result.rest, stream, context, target, call, hooks);
        return { native: { events, upstreamRequestId, filledMaxTokens } };
      },
    });
  }

  /**
   * One metered call. Each attempt goes natively to a provider with the responses capability,
   * converted to any other chat provider: with the output cap reserved for, written in the field
   * the provider reads. The reservation bounds both forms of the prompt.
   */
  private async call<NativeResult, ChatResult, Answer>(
    request: ResponsesRequest,
    conversation: Conversation,
    context: ChatCallContext,
    convert: () => ConvertedRequest,
    how: {
      native: (responses: ResponsesCapability, body: Json, options: ResponsesCallOptions, candidate: RouteCandidate) => Promise<NativeResult>;
      converted: (chat: ChatCapability, body: ChatRequest, options: ChatAttemptOptions, candidate: RouteCandidate) => Promise<ChatResult>;
      answered: (answered: Answered<NativeResult, ChatResult>, target: AttemptTarget, call: MeteredCall) => Promise<Answer>;
    },
  ): Promise<Answer> {
    // gw keeps a response's state and the upstream keeps none: there is nothing to run in the background.
    if (request.background) throw new InvalidRequestError("background responses are not supported by this gateway.", { param: "background" });
    const body = nativeRequestBody(request, conversation);
    // Converted only for the route's converted upstreams; a request only they refuse (a hosted tool, a file) is refused when one is tried.
    const converted = convertedOrRefusal(convert);
    const size: ChatCallSize = {
      prompt: largerPrompt(measureNativePrompt(body), converted instanceof GatewayError ? undefined : measureChatPrompt(converted.chat)),
      maxOutputTokens: request.max_output_tokens ?? undefined,
      choices: 1,
    };
    const call = await this.metering.begin(request.model, size, context);
    return this.metering.run(call, context, {
      supports: supportsResponses,
      heldUnits: heldChatUnits,
      attempt: async (attempt): Promise<Answered<NativeResult, ChatResult>> => {
        const { candidate, provider } = attempt;
        const options = this.metering.callOptions(call, attempt, context);
        if (provider.responses)
          return { kind: "native", result: await how.native(provider.responses, { ...body, model: candidate.upstreamModel }, options, candidate) };
        if (converted instanceof GatewayError) throw converted;
        const result = await how.converted(chatOf(provider), upstreamRequest(converted.chat, candidate), options, candidate);
        return { kind: "chat", result, converted };
      },
      answered: (answered, target) => how.answered(answered, target, call),
    });
  }

  /**
   * Native events relayed as they came, rewritten (native-response-rewrite.ts); the last response
   * stored before the last event goes out; billed once from the last event's usage, also when
   * the client goes away or the upstream breaks (then the stream ends with response.failed).
   */
  private async *relayNative(
    first: NativeResponsesEvent[],
    rest: AsyncIterator<NativeResponsesEvent[]>,
    stream: NativeResponseStream,
    context: ChatCallContext,
    target: AttemptTarget,
    call: MeteredCall,
    hooks: NativeStreamHooks,
  ): AsyncGenerator<NativeResponsesEvent[]> {
    const size = new AnswerSizeWatch();
    let stored = false;
    const store = async () => {
      if (stored || !stream.ended) return;
      stored = true;
      await hooks.ended(stream.ended);
    };
    let settled = false;
    const settle = () => this.metering.settleStream(call, context, target, rest, stream.usage, stream.relayed, size);
    // The batch with the upstream's last event, held until the stream ends and the call is settled,
    // so that event's response says what the call cost (docs/decisions.md §24).
    let held: NativeResponsesEvent[] | undefined;
    try {
      let batch: NativeResponsesEvent[] | undefined = first;
      while (batch) {
        if (held) yield held;
        held = undefined;
        const endedBefore = stream.ended;
        const events = stream.relay(batch);
        if (stream.ended !== endedBefore) held = events;
        else {
          // Stored before the last event goes out: a client that reads it can continue from it at once.
          await store();
          yield events;
        }
        const next: IteratorResult<NativeResponsesEvent[]> = await rest.next();
        batch = next.done ? undefined : next.value;
      }
      if (!stream.ended) {
        const failed = stream.fail(INTERRUPTED);
        await store();
        yield [failed];
      }
      settled = true;
      const row = await settle();
      if (held) {
        const costing = row && stream.terminalCosting(row.credits);
        if (costing) held[held.map((event) => event.event).lastIndexOf(costing.event)] = costing;
        await store();
        yield held;
        held = undefined;
      }
    } catch (error) {
      size.saw(error, target.candidate);
      // A client that went away aborted the upstream call: nobody to tell.
      if (!(error instanceof GatewayError) && !(error instanceof Error && error.name === "AbortError")) hooks.log(error);
      if (held) {
        await store();
        yield held;
      } else if (!stream.ended) {
        const failed = stream.fail(error instanceof GatewayError ? { code: error.code, message: error.message } : INTERRUPTED);
        await store();
        yield [failed];
      }
    } finally {
      if (!settled) await settle();
    }
  }
}

const INTERRUPTED = { code: "stream_interrupted", message: "The upstream stream failed before it finished." };

function convertedOrRefusal(convert: () => ConvertedRequest): ConvertedRequest | GatewayError {
  try {
    return convert();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
}

/** The gateway's estimate in the Responses names. */
function responseUsageOf(usage: ChatUsage): ResponseUsage {
  return { ...ZERO_USAGE, ...responseUsage(usage) };
}

const ZERO_USAGE: ResponseUsage = {
  input_tokens: 0,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 0,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 0,
};

/** Whether any configured provider speaks the Responses API (asked per request: no array built). */
function hasNativeProvider(providers: Iterable<Provider>): boolean {
  for (const provider of providers) if (provider.responses) return true;
  return false;
}
