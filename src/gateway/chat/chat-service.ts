// POST /v1/chat/completions, as the domain sees it:
// route -> plan gate -> credit reservation -> upstream attempts -> settle usage -> respond.
import type { ChatCapability, ChatChunk, ChatCompletion, ChatRequest, ChatStreamEvent, ChatUsage } from "../../providers/chat-types.js";
import { requestedOutputCap, withoutOutputCaps } from "../../providers/max-tokens.js";
import type { Provider } from "../../providers/provider.js";
import { UpstreamNetworkError } from "../../providers/provider-errors.js";
import type { ChatCallSize } from "../billing/chat-reservation.js";
import { measureChatPrompt } from "../billing/prompt-measure.js";
import { readChatUsage } from "../billing/token-usage.js";
import type { RouteCandidate } from "../routing/route-resolver.js";
import { AnswerSizeWatch } from "../upstream-calls/answer-size-watch.js";
import {
  type ChatCallContext,
  type ChatMetering,
  estimatedChatUsage,
  heldChatUnits,
  type MeteredCall,
  type RelayedText,
  textSize,
} from "../upstream-calls/chat-metering.js";
import type { AttemptTarget } from "../upstream-calls/upstream-attempts.js";
import type { ChatRequestBody } from "./chat-request.js";
import { withoutGatewayControlFields } from "./gateway-control-fields.js";
import { StreamRelay } from "./stream-relay.js";

export type { ChatCallContext } from "../upstream-calls/chat-metering.js";

/** The POST /v1/chat/completions answer: the upstream's completion, renamed to the public model. */
export type ChatCompletionBody = ChatCompletion;
/** One streamed chunk as the relay writes it (stream-relay.ts), the usage chunk included. */
export type ChatCompletionChunkBody = ChatChunk;
/** Token counts in an answer or the usage chunk (the gateway's estimate when the upstream sent none or invalid ones). */
export type ChatUsageBody = ChatUsage;

export interface CompletedChat {
  body: ChatCompletion;
  upstreamRequestId?: string;
  /** The max_tokens gw chose for a request that named none (announced in a response header). */
  filledMaxTokens?: number;
}

export interface StreamingChat {
  /** Batches of chat.completion.chunk JSON texts; the usage chunk always comes last. */
  chunks: AsyncGenerator<string[]>;
  upstreamRequestId?: string;
  filledMaxTokens?: number;
}

const supportsChat = (provider: Provider) => provider.chat !== undefined;

/** The chat capability of a provider the attempts chose (they pick only providers that support chat; messages falls back to it). */
export function chatOf(provider: Provider): ChatCapability {
  if (!provider.chat) throw new Error(`provider ${provider.name} has no chat capability`);
  return provider.chat;
}

export class ChatService {
  constructor(private readonly metering: ChatMetering) {}

  async complete(request: ChatRequestBody, context: ChatCallContext): Promise<CompletedChat> {
    const call = await this.metering.begin(request.model, callSize(request), context);
    return this.metering.run(call, context, {
      supports: supportsChat,
      heldUnits: heldChatUnits,
      attempt: (attempt) => chatOf(attempt.provider).complete(upstreamRequest(request, attempt.candidate), this.metering.callOptions(call, attempt, context)),
      answered: async (result, target) => ({
        body: await this.settleCompletion(result.body, context, target, call),
        upstreamRequestId: result.upstreamRequestId,
        filledMaxTokens: this.metering.filledMaxTokens(call, target.candidate),
      }),
    });
  }

  /**
   * An upstream's completion as the client gets it, billed: the public model, and the gateway's
   * estimate in place of usage that does not hold. Also for other services' chat attempts (a
   * Responses call whose route mixes native and chat upstreams).
   */
  async settleCompletion(body: ChatCompletion, context: ChatCallContext, target: AttemptTarget, call: MeteredCall): Promise<ChatCompletion> {
    body.model = target.candidate.publicModel;
    const usage = readChatUsage(body.usage);
    // Measured only when needed: billing reads the text when the upstream's usage does not hold.
    const relayed = "counts" in usage ? NOTHING_RELAYED : textSize(completionText(body));
    // The client sees what was billed: the upstream's usage, or the estimate when it had none that holds.
    if (!("counts" in usage)) body.usage = estimatedChatUsage(call, target, relayed);
    await this.metering.settle(call, context, target, usage, relayed);
    return body;
  }

  async stream(request: ChatRequestBody, context: ChatCallContext): Promise<StreamingChat> {
    const call = await this.metering.begin(request.model, callSize(request), context);
    return this.metering.run(call, context, {
      supports: supportsChat,
      heldUnits: heldChatUnits,
      // The first batch is awaited inside the attempt: until it arrives nothing has reached the
      // client, so a failure before it can still be retried or sent to the next route.
      attempt: async (attempt) => {
        const { candidate } = attempt;
        const response = await chatOf(attempt.provider).stream(upstreamRequest(request, candidate), this.metering.callOptions(call, attempt, context));
        const iterator = response.chunks[Symbol.asyncIterator]();
        const first = await iterator.next();
        if (first.done) throw new UpstreamNetworkError(candidate.provider, "invalid_response", "the stream ended before any chunk");
        return { iterator, first: first.value, upstreamRequestId: response.upstreamRequestId };
      },
      answered: async (result, target) => ({
        chunks: this.relayChunks(result.first, result.iterator, context, target, call),
        upstreamRequestId: result.upstreamRequestId,
        filledMaxTokens: this.metering.filledMaxTokens(call, target.candidate),
      }),
    });
  }

  /**
   * Forward chunks as they arrive (a batch per upstream read), naming the public model; end with
   * the usage chunk; bill exactly once, also when the client goes away or the upstream breaks.
   * The batch that carries the usage chunk is held until the upstream's stream ends and the call is
   * settled, so the chunk can say what the call cost (`usage.gw_credits`); it is the last batch
   * (a usage chunk that more batches follow goes out as it came, without the figure).
   * Also for other services' chat attempts (as settleCompletion).
   */
  async *relayChunks(
    first: ChatStreamEvent[],
    rest: AsyncIterator<ChatStreamEvent[]>,
    context: ChatCallContext,
    target: AttemptTarget,
    call: MeteredCall,
  ): AsyncGenerator<string[]> {
    const relayed = (relay: StreamRelay): RelayedText => ({ characters: relay.producedCharacters, bytes: relay.producedBytes });
    const relay = new StreamRelay(target.candidate.publicModel, (current) => estimatedChatUsage(call, target, relayed(current)), !context.chunksConverted);
    const size = new AnswerSizeWatch();
    let settled = false;
    try {
      let batch: ChatStreamEvent[] | undefined = first;
      // The batch with the usage chunk, and the chunk's place in it, until the stream ends.
      let held: { texts: string[]; usageAt: number } | undefined;
      while (batch) {
        if (held) yield held.texts;
        held = undefined;
        const texts: string[] = [];
        let usageAt = -1;
        for (const event of batch) {
          const hadUsage = relay.usage !== undefined;
          texts.push(relay.relay(event));
          if (!hadUsage && relay.usage !== undefined) usageAt = texts.length - 1;
        }
        if (usageAt >= 0) held = { texts, usageAt };
        else yield texts;
        const next: IteratorResult<ChatStreamEvent[]> = await rest.next();
        batch = next.done ? undefined : next.value;
      }
      if (!relay.usage) {
        // The upstream sent no usage (some compatible servers ignore include_usage): estimate it.
        relay.usage = estimatedChatUsage(call, target, relayed(relay));
        held = { texts: [JSON.stringify(relay.usageChunk(relay.usage))], usageAt: 0 };
      }
      settled = true;
      const row = await this.metering.settleStream(call, context, target, rest, relay.usageReading, relayed(relay), size);
      if (held) {
        if (row) held.texts[held.usageAt] = relay.usageChunkCosting(row.credits) ?? held.texts[held.usageAt]!;
        yield held.texts;
      }
    } catch (error) {
      size.saw(error, target.candidate);
      throw error;
    } finally {
      if (!settled) await this.metering.settleStream(call, context, target, rest, relay.usageReading, relayed(relay), size);
    }
  }
}

function callSize(request: ChatRequestBody): ChatCallSize {
  return {
    prompt: measureChatPrompt(request),
    // The smallest of max_tokens, max_completion_tokens and the other names a server may read.
    maxOutputTokens: requestedOutputCap(request),
    choices: request.n ?? 1,
  };
}

/** The request as the upstream gets it: no cap fields (the provider writes the one reserved for), no gateway controls. */
export function upstreamRequest(request: ChatRequestBody, candidate: RouteCandidate): ChatRequest {
  return { ...withoutOutputCaps(withoutGatewayControlFields(request)), model: candidate.upstreamModel } as ChatRequest;
}

function completionText(body: ChatCompletion): string {
  return body.choices.map((choice) => JSON.stringify((choice as { message?: unknown }).message ?? "")).join("");
}

const NOTHING_RELAYED: RelayedText = { characters: 0, bytes: 0 };
