// POST /anthropic/v1/messages: routed, gated, metered and billed exactly like chat completions.
// To a provider that speaks the Messages API natively the request goes through untouched (model
// id aside) and the answer comes back untouched; to any other chat provider it is converted to
// a chat completion and back, streams included.

import { isObject, parseJsonObject } from "../../json/json-values.js";
import type { ChatCapability, ChatChunk, ChatStreamEvent, JsonObject } from "../../providers/chat-types.js";
import { withoutOutputCaps } from "../../providers/max-tokens.js";
import type { MessagesCapability, NativeMessagesEvent } from "../../providers/messages-types.js";
import type { Provider } from "../../providers/provider.js";
import type { UsageRow } from "../../store/usage-log.js";
import type { ChatCallSize } from "../billing/chat-reservation.js";
import { CREDITS_USAGE_FIELD } from "../billing/credits-in-usage.js";
import { measureMessagesPrompt } from "../billing/prompt-measure.js";
import { readChatUsage, readMessagesUsage, type UsageReading } from "../billing/token-usage.js";
import { chatOf } from "../chat/chat-service.js";
import { withoutGatewayControlFields } from "../chat/gateway-control-fields.js";
import { GatewayError } from "../errors.js";
import type { RouteCandidate } from "../routing/route-resolver.js";
import type { ServiceContext } from "../service-context.js";
import { AnswerSizeWatch } from "../upstream-calls/answer-size-watch.js";
import {
  type ChatAttemptOptions,
  type ChatCallContext,
  type ChatMetering,
  estimatedChatUsage,
  heldChatUnits,
  type MeteredCall,
  textSize,
} from "../upstream-calls/chat-metering.js";
import { firstBatch } from "../upstream-calls/first-batch.js";
import type { AttemptTarget } from "../upstream-calls/upstream-attempts.js";
import { ChatStreamToMessagesEvents, messagesErrorEvent, messagesErrorType } from "./chat-stream-to-messages-events.js";
import { convertChatToMessages, convertChatUsage } from "./convert-chat-to-messages.js";
import { convertMessagesToChat } from "./convert-messages-to-chat.js";
import { CountTokensService, type TokenCount } from "./count-tokens-service.js";
import type { CountTokensRequest, MessagesRequest, UncappedMessagesRequest } from "./messages-types.js";
import { forNativeUpstream } from "./system-messages.js";

export interface MessagesResult {
  body: JsonObject;
  upstreamRequestId?: string;
}

export interface MessagesStream {
  /** Batches of native events (`event:` name, `data:` JSON text). */
  events: AsyncGenerator<NativeMessagesEvent[]>;
  upstreamRequestId?: string;
}

type Source =
  | { kind: "native"; first: NativeMessagesEvent[]; rest: AsyncIterator<NativeMessagesEvent[]> }
  | { kind: "chat"; first: ChatStreamEvent[]; rest: AsyncIterator<ChatStreamEvent[]> };

const supportsMessages = (provider: Provider) => provider.messages !== undefined || provider.chat !== undefined;

export class MessagesService {
  private readonly counter: CountTokensService;

  constructor(
    private readonly metering: ChatMetering,
    shared: ServiceContext,
  ) {
    this.counter = new CountTokensService(shared);
  }

  /** POST /anthropic/v1/messages/count_tokens: not metered (count-tokens-service.ts). */
  countTokens(request: CountTokensRequest, context: ChatCallContext, headers: Record<string, string>): Promise<TokenCount> {
    return this.counter.count(request, context, headers);
  }

  async create(request: MessagesRequest, context: ChatCallContext, headers: Record<string, string>): Promise<MessagesResult> {
    return this.call(request, context, {
      native: async (messages, upstream, options) => {
        const answer = await messages.create(forNativeUpstream(upstream, headers), { ...options, headers });
        return { ...answer, usage: readMessagesUsage(answer.body.usage) };
      },
      converted: async (chat, upstream, options, candidate) => {
        const answer = await chat.complete({ ...convertMessagesToChat(upstream), stream: false }, options);
        const body = convertChatToMessages(answer.body, { model: candidate.publicModel }) as unknown as JsonObject;
        return { body, upstreamRequestId: answer.upstreamRequestId, usage: readChatUsage(answer.body.usage) };
      },
      answered: async (result, target, call) => {
        result.body.model = target.candidate.publicModel;
        const relayed = textSize(JSON.stringify(result.body.content ?? ""));
        // The client sees what was billed: the upstream's usage, or the estimate when it had none that holds.
        if (!("counts" in result.usage)) result.body.usage = convertChatUsage(estimatedChatUsage(call, target, relayed));
        await this.metering.settle(call, context, target, result.usage, relayed);
        return { body: result.body, upstreamRequestId: result.upstreamRequestId };
      },
    });
  }

  async stream(request: MessagesRequest, context: ChatCallContext, headers: Record<string, string>): Promise<MessagesStream> {
    return this.call(request, context, {
      native: async (messages, upstream, options, candidate) => {
        const response = await messages.stream(forNativeUpstream(upstream, headers), { ...options, headers });
        const rest = response.events[Symbol.asyncIterator]();
        return { source: { kind: "native", first: await firstBatch(rest, candidate.provider), rest } as Source, upstreamRequestId: response.upstreamRequestId };
      },
      converted: async (chat, upstream, options, candidate) => {
        const response = await chat.stream({ ...convertMessagesToChat(upstream), stream: true }, options);
        const rest = response.chunks[Symbol.asyncIterator]();
        return { source: { kind: "chat", first: await firstBatch(rest, candidate.provider), rest } as Source, upstreamRequestId: response.upstreamRequestId };
      },
      answered: async (result, target, call) => {
        const events =
          result.source.kind === "native"
            ? this.relayNative(result.source.first, result.source.rest, context, target, call)
            : this.relayConverted(result.source.first, result.source.rest, context, target, call);
        return { events, upstreamRequestId: result.upstreamRequestId };
      },
    });
  }

  /**
   * One metered call: a provider with the messages capability gets the request natively, any
   * other chat provider gets it converted; either way with the output cap reserved for (written
   * in the field the provider reads: its maxTokensField for OpenAI-compatible ones).
   */
  private async call<Result, Answer>(
    request: MessagesRequest,
    context: ChatCallContext,
    how: {
      native: (messages: MessagesCapability, upstream: UncappedMessagesRequest, options: ChatAttemptOptions, candidate: RouteCandidate) => Promise<Result>;
      converted: (chat: ChatCapability, upstream: UncappedMessagesRequest, options: ChatAttemptOptions, candidate: RouteCandidate) => Promise<Result>;
      answered: (result: Result, target: AttemptTarget, call: MeteredCall) => Promise<Answer>;
    },
  ): Promise<Answer> {
    const call = await this.metering.begin(request.model, callSize(request), context);
    return this.metering.run(call, context, {
      supports: supportsMessages,
      heldUnits: heldChatUnits,
      attempt: (attempt) => {
        const { candidate, provider } = attempt;
        const upstream = upstreamRequest(request, candidate);
        const options = this.metering.callOptions(call, attempt, context);
        return provider.messages ? how.native(provider.messages, upstream, options, candidate) : how.converted(chatOf(provider), upstream, options, candidate);
      },
      answered: (result, target) => how.answered(result, target, call),
    });
  }

  /**
   * Native events pass through; message_start gets the public model; usage is read for billing.
   * The batch with message_delta (the last, with message_stop) is held until the upstream's stream
   * ends and the call is settled: its usage then says what the call cost (`gw_credits`).
   */
  private async *relayNative(
    first: NativeMessagesEvent[],
    rest: AsyncIterator<NativeMessagesEvent[]>,
    context: ChatCallContext,
    target: AttemptTarget,
    call: MeteredCall,
  ): AsyncGenerator<NativeMessagesEvent[]> {
    // Input counts come in message_start, the final output count in message_delta.
    const reported: Record<string, unknown> = {};
    let outputReported = false;
    const relayed = { characters: 0, bytes: 0 };
    const size = new AnswerSizeWatch();
    let held: HeldDelta | undefined;
    let settled = false;
    const settle = () => {
      // A stream cut before message_delta has no output count: the relayed text is estimated.
      const usage = outputReported ? readMessagesUsage(reported) : { missing: true as const };
      return this.metering.settleStream(call, context, target, rest, usage, relayed, size);
    };
    try {
      let batch: NativeMessagesEvent[] | undefined = first;
      while (batch) {
        if (held) yield held.events;
        held = undefined;
        let deltaAt = -1;
        const events = batch.map((event, index) => {
          if (event.event === "message_start") {
            const data = parseJsonObject(event.data);
            const message = data?.message as JsonObject | undefined;
            if (!data || !message) return event;
            message.model = target.candidate.publicModel;
            Object.assign(reported, usageFields(message.usage));
            return { event: event.event, data: JSON.stringify(data) };
          }
          if (event.event === "message_delta") {
            const usage = usageFields(parseJsonObject(event.data)?.usage);
            Object.assign(reported, usage);
            if (usage.output_tokens !== undefined) outputReported = true;
            deltaAt = index;
          } else if (event.event === "content_block_delta") {
            relayed.characters += Math.max(0, event.data.length - BLOCK_DELTA_OVERHEAD);
            relayed.bytes += Math.max(0, Buffer.byteLength(event.data) - BLOCK_DELTA_OVERHEAD);
          }
          return event;
        });
        if (deltaAt >= 0) held = { events, at: deltaAt };
        else yield events;
        const next: IteratorResult<NativeMessagesEvent[]> = await rest.next();
        batch = next.done ? undefined : next.value;
      }
      settled = true;
      const row = await settle();
      if (held) yield withCostInDelta(held, row);
    } catch (error) {
      size.saw(error, target.candidate);
      yield [...(held?.events ?? []), errorEvent(error)];
    } finally {
      if (!settled) await settle();
    }
  }

  /** Chat chunks from any other provider, turned into the native event sequence. */
  private async *relayConverted(
    first: ChatStreamEvent[],
    rest: AsyncIterator<ChatStreamEvent[]>,
    context: ChatCallContext,
    target: AttemptTarget,
    call: MeteredCall,
  ): AsyncGenerator<NativeMessagesEvent[]> {
    const converter = new ChatStreamToMessagesEvents({ model: target.candidate.publicModel });
    let usage: UsageReading = { missing: true };
    const relayed = { characters: 0, bytes: 0 };
    const toNative = (events: ReturnType<ChatStreamToMessagesEvents["push"]>) =>
      events.map((event) => ({ event: event.event, data: JSON.stringify(event.data) }));
    const size = new AnswerSizeWatch();
    let settled = false;
    const settle = () => this.metering.settleStream(call, context, target, rest, usage, relayed, size);
    try {
      let batch: ChatStreamEvent[] | undefined = first;
      while (batch) {
        const out: NativeMessagesEvent[] = [];
        for (const event of batch) {
          const chunk = typeof event === "string" ? (parseJsonObject(event) as ChatChunk | undefined) : event;
          if (!chunk) continue;
          for (const choice of chunk.choices ?? []) {
            const text = JSON.stringify(choice.delta ?? "");
            relayed.characters += text.length;
            relayed.bytes += Buffer.byteLength(text);
          }
          if (chunk.usage) {
            usage = readChatUsage(chunk.usage);
            if ("invalid" in usage) chunk.usage = estimatedChatUsage(call, target, relayed);
          }
          out.push(...toNative(converter.push(chunk)));
        }
        if (out.length > 0) yield out;
        const next: IteratorResult<ChatStreamEvent[]> = await rest.next();
        batch = next.done ? undefined : next.value;
      }
      converter.setUsage(estimatedChatUsage(call, target, relayed));
      // The closing events (message_delta, message_stop) wait for the settle: message_delta says what the call cost.
      settled = true;
      const row = await settle();
      const closing = toNative(converter.finish());
      const at = closing.findIndex((event) => event.event === "message_delta");
      yield at >= 0 ? withCostInDelta({ events: closing, at }, row) : closing;
    } catch (error) {
      size.saw(error, target.candidate);
      yield [errorEvent(error)];
    } finally {
      if (!settled) await settle();
    }
  }
}

/** A content_block_delta's JSON around its text: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""}}. */
const BLOCK_DELTA_OVERHEAD = 60;

function callSize(request: MessagesRequest): ChatCallSize {
  return { prompt: measureMessagesPrompt(request), maxOutputTokens: request.max_tokens, choices: 1 };
}

/**
 * The request as the upstream gets it, converted or not: no cap fields (the provider writes the
 * one reserved for, max_tokens), no gateway controls.
 */
function upstreamRequest(request: MessagesRequest, candidate: RouteCandidate): UncappedMessagesRequest {
  return { ...withoutOutputCaps(withoutGatewayControlFields(request)), model: candidate.upstreamModel };
}

/** The usage object's fields, for merging message_start's and message_delta's. */
function usageFields(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** A batch held for its message_delta, and that event's place in it. */
interface HeldDelta {
  events: NativeMessagesEvent[];
  at: number;
}

/** The held batch, its message_delta's usage saying what the call cost (docs/decisions.md §24); as it was when nothing was billed. */
function withCostInDelta(held: HeldDelta, row: UsageRow | undefined): NativeMessagesEvent[] {
  const delta = held.events[held.at]!;
  const data = row && parseJsonObject(delta.data);
  if (!data) return held.events;
  const usage = isObject(data.usage) ? data.usage : {};
  usage[CREDITS_USAGE_FIELD] = row.credits;
  data.usage = usage;
  held.events[held.at] = { event: delta.event, data: JSON.stringify(data) };
  return held.events;
}

/** A failure after the stream started ends it with the native `error` event. */
function errorEvent(error: unknown): NativeMessagesEvent {
  const status = error instanceof GatewayError ? error.status : ((error as { status?: number }).status ?? 502);
  const message = error instanceof GatewayError ? error.message : "The upstream stream failed before it finished.";
  const event = messagesErrorEvent(messagesErrorType(status), message);
  return { event: event.event, data: JSON.stringify(event.data) };
}
