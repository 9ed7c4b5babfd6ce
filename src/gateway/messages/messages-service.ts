// POST /anthropic/v1/messages: routed, gated, metered and billed exactly like chat completions.
// To a provider that speaks the Messages API natively the request goes through untouched (model
// id aside) and the answer comes back untouched; to any other chat provider it is converted to
// a chat completion and back, streams included.
import type { ChatChunk, ChatStreamEvent, ChatUsage, JsonObject } from "../../providers/chat-types.js";
import type { NativeMessagesEvent } from "../../providers/messages-types.js";
import type { Provider } from "../../providers/provider.js";
import { UpstreamNetworkError } from "../../providers/provider-errors.js";
import { GatewayError } from "../errors.js";
import { estimateUsage, type ChatCallContext, type ChatMetering, type MeteredCall } from "../chat/chat-metering.js";
import { attemptInOrder, type AttemptTarget } from "../chat/upstream-attempts.js";
import { ChatStreamToMessagesEvents, messagesErrorEvent, messagesErrorType } from "./chat-stream-to-messages-events.js";
import { convertChatToMessages } from "./convert-chat-to-messages.js";
import { convertMessagesToChat } from "./convert-messages-to-chat.js";
import type { MessagesRequest } from "./messages-types.js";

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
  constructor(private readonly metering: ChatMetering) {}

  async create(request: MessagesRequest, context: ChatCallContext, headers: Record<string, string>): Promise<MessagesResult> {
    const promptText = JSON.stringify(request.messages);
    const call = this.metering.begin(request.model, promptText, request.max_tokens, context);
    try {
      const { result, target } = await attemptInOrder(this.metering.attempts(call, context, supportsMessages), async ({ candidate, provider }) => {
        const upstream = { ...request, model: candidate.upstreamModel };
        if (provider.messages) {
          const answer = await provider.messages.create(upstream, { signal: context.signal, headers });
          return { ...answer, usage: usageOfMessage(answer.body.usage) };
        }
        const answer = await provider.chat!.complete({ ...convertMessagesToChat(upstream), stream: false }, { signal: context.signal });
        const body = convertChatToMessages(answer.body, { model: candidate.publicModel }) as unknown as JsonObject;
        return { body, upstreamRequestId: answer.upstreamRequestId, usage: answer.body.usage };
      });
      this.metering.answered(call, target);
      result.body.model = target.candidate.publicModel;
      await this.metering.settle(call, context, target, result.usage ?? estimateUsage(promptText, JSON.stringify(result.body.content ?? "").length));
      return { body: result.body, upstreamRequestId: result.upstreamRequestId };
    } catch (error) {
      this.metering.release(call);
      throw error;
    }
  }

  async stream(request: MessagesRequest, context: ChatCallContext, headers: Record<string, string>): Promise<MessagesStream> {
    const call = this.metering.begin(request.model, JSON.stringify(request.messages), request.max_tokens, context);
    try {
      const { result, target } = await attemptInOrder(this.metering.attempts(call, context, supportsMessages), async ({ candidate, provider }) => {
        const upstream = { ...request, model: candidate.upstreamModel };
        if (provider.messages) {
          const response = await provider.messages.stream(upstream, { signal: context.signal, headers });
          const rest = response.events[Symbol.asyncIterator]();
          return { source: { kind: "native", ...(await firstBatch(rest, candidate.provider)), rest } as Source, upstreamRequestId: response.upstreamRequestId };
        }
        const response = await provider.chat!.stream({ ...convertMessagesToChat(upstream), stream: true }, { signal: context.signal });
        const rest = response.chunks[Symbol.asyncIterator]();
        return { source: { kind: "chat", ...(await firstBatch(rest, candidate.provider)), rest } as Source, upstreamRequestId: response.upstreamRequestId };
      });
      this.metering.answered(call, target);
      const events = result.source.kind === "native"
        ? this.relayNative(result.source.first, result.source.rest, request, context, target, call)
        : this.relayConverted(result.source.first, result.source.rest, request, context, target, call);
      return { events, upstreamRequestId: result.upstreamRequestId };
    } catch (error) {
      this.metering.release(call);
      throw error;
    }
  }

  /** Native events pass through; message_start gets the public model; usage is read for billing. */
  private async *relayNative(
    first: NativeMessagesEvent[],
    rest: AsyncIterator<NativeMessagesEvent[]>,
    request: MessagesRequest,
    context: ChatCallContext,
    target: AttemptTarget,
    call: MeteredCall,
  ): AsyncGenerator<NativeMessagesEvent[]> {
    const usage = { input: 0, cacheRead: 0, output: 0, seen: false };
    let produced = 0;
    try {
      let batch: NativeMessagesEvent[] | undefined = first;
      while (batch) {
        yield batch.map((event) => {
          if (event.event === "message_start") {
            const data = JSON.parse(event.data) as { message?: JsonObject };
            if (data.message) {
              data.message.model = target.candidate.publicModel;
              readMessageUsage(data.message.usage, usage);
            }
            return { event: event.event, data: JSON.stringify(data) };
          }
          if (event.event === "message_delta") readMessageUsage((JSON.parse(event.data) as JsonObject).usage, usage);
          else if (event.event === "content_block_delta") produced += event.data.length - 60;
          return event;
        });
        const next: IteratorResult<NativeMessagesEvent[]> = await rest.next();
        batch = next.done ? undefined : next.value;
      }
    } catch (error) {
      yield [errorEvent(error)];
    } finally {
      await rest.return?.();
      const billed = usage.seen && usage.output > 0
        ? { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output, prompt_tokens_details: { cached_tokens: usage.cacheRead } }
        : estimateUsage(JSON.stringify(request.messages), Math.max(0, produced));
      await this.metering.settle(call, context, target, billed);
    }
  }

  /** Chat chunks from any other provider, turned into the native event sequence. */
  private async *relayConverted(
    first: ChatStreamEvent[],
    rest: AsyncIterator<ChatStreamEvent[]>,
    request: MessagesRequest,
    context: ChatCallContext,
    target: AttemptTarget,
    call: MeteredCall,
  ): AsyncGenerator<NativeMessagesEvent[]> {
    const converter = new ChatStreamToMessagesEvents({ model: target.candidate.publicModel });
    let usage: ChatUsage | undefined;
    let produced = 0;
    const toNative = (events: ReturnType<ChatStreamToMessagesEvents["push"]>) => events.map((event) => ({ event: event.event, data: JSON.stringify(event.data) }));
    try {
      let batch: ChatStreamEvent[] | undefined = first;
      while (batch) {
        const out: NativeMessagesEvent[] = [];
        for (const event of batch) {
          const chunk = typeof event === "string" ? (JSON.parse(event) as ChatChunk) : event;
          if (chunk.usage) usage = chunk.usage;
          for (const choice of chunk.choices ?? []) produced += JSON.stringify(choice.delta ?? "").length;
          out.push(...toNative(converter.push(chunk)));
        }
        if (out.length > 0) yield out;
        const next: IteratorResult<ChatStreamEvent[]> = await rest.next();
        batch = next.done ? undefined : next.value;
      }
      usage ??= estimateUsage(JSON.stringify(request.messages), produced);
      converter.setUsage(usage);
      yield toNative(converter.finish());
    } catch (error) {
      yield [errorEvent(error)];
    } finally {
      await rest.return?.();
      await this.metering.settle(call, context, target, usage ?? estimateUsage(JSON.stringify(request.messages), produced));
    }
  }
}

async function firstBatch<T>(iterator: AsyncIterator<T[]>, provider: string): Promise<{ first: T[] }> {
  const first = await iterator.next();
  if (first.done) throw new UpstreamNetworkError(provider, "invalid_response", "the stream ended before any event");
  return { first: first.value };
}

/** Anthropic usage -> token counts: cached and cache-creation input count as prompt tokens. */
function usageOfMessage(value: unknown): ChatUsage | undefined {
  const usage = { input: 0, cacheRead: 0, output: 0, seen: false };
  readMessageUsage(value, usage);
  if (!usage.seen) return undefined;
  return { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output, prompt_tokens_details: { cached_tokens: usage.cacheRead } };
}

function readMessageUsage(value: unknown, into: { input: number; cacheRead: number; output: number; seen: boolean }): void {
  if (!value || typeof value !== "object") return;
  const usage = value as Record<string, unknown>;
  const number = (key: string) => (typeof usage[key] === "number" ? (usage[key] as number) : undefined);
  const input = number("input_tokens");
  if (input !== undefined) {
    into.input = input + (number("cache_creation_input_tokens") ?? 0) + (number("cache_read_input_tokens") ?? 0);
    into.cacheRead = number("cache_read_input_tokens") ?? into.cacheRead;
  }
  // Output counts in message_delta are cumulative: the last one is the total.
  const output = number("output_tokens");
  if (output !== undefined) into.output = output;
  into.seen = true;
}

/** A failure after the stream started ends it with the native `error` event. */
function errorEvent(error: unknown): NativeMessagesEvent {
  const status = error instanceof GatewayError ? error.status : (error as { status?: number }).status ?? 502;
  const message = error instanceof GatewayError ? error.message : "The upstream stream failed before it finished.";
  const event = messagesErrorEvent(messagesErrorType(status), message);
  return { event: event.event, data: JSON.stringify(event.data) };
}
