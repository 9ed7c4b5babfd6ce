// POST /v1/chat/completions, as the domain sees it:
// route -> plan gate -> credit reservation -> upstream attempts -> settle usage -> respond.
import type { ChatCompletion, ChatRequest, ChatStreamEvent } from "../../providers/chat-types.js";
import { UpstreamNetworkError } from "../../providers/provider-errors.js";
import type { RouteCandidate } from "../routing/route-resolver.js";
import type { ChatRequestBody } from "./chat-request.js";
import { estimateUsage, type ChatCallContext, type ChatMetering, type MeteredCall } from "./chat-metering.js";
import { StreamRelay } from "./stream-relay.js";
import { attemptInOrder, type AttemptTarget } from "./upstream-attempts.js";

export type { ChatCallContext } from "./chat-metering.js";

export interface CompletedChat {
  body: ChatCompletion;
  upstreamRequestId?: string;
}

export interface StreamingChat {
  /** Batches of chat.completion.chunk JSON texts; the usage chunk always comes last. */
  chunks: AsyncGenerator<string[]>;
  upstreamRequestId?: string;
}

const supportsChat = (provider: { chat?: unknown }) => provider.chat !== undefined;

export class ChatService {
  constructor(private readonly metering: ChatMetering) {}

  async complete(request: ChatRequestBody, context: ChatCallContext): Promise<CompletedChat> {
    const promptText = JSON.stringify(request.messages);
    const call = this.metering.begin(request.model, promptText, maxOutputTokens(request), context);
    try {
      const { result, target } = await attemptInOrder(this.metering.attempts(call, context, supportsChat), ({ candidate, provider }) =>
        provider.chat!.complete(upstreamRequest(request, candidate), { signal: context.signal }),
      );
      this.metering.answered(call, target);
      const body = result.body;
      body.model = target.candidate.publicModel;
      await this.metering.settle(call, context, target, body.usage ?? estimateUsage(promptText, completionText(body).length));
      return { body, upstreamRequestId: result.upstreamRequestId };
    } catch (error) {
      this.metering.release(call);
      throw error;
    }
  }

  async stream(request: ChatRequestBody, context: ChatCallContext): Promise<StreamingChat> {
    const call = this.metering.begin(request.model, JSON.stringify(request.messages), maxOutputTokens(request), context);
    try {
      // The first batch is awaited inside the attempt: until it arrives nothing has reached the
      // client, so a failure before it can still be retried or sent to the next route.
      const { result, target } = await attemptInOrder(this.metering.attempts(call, context, supportsChat), async ({ candidate, provider }) => {
        const response = await provider.chat!.stream(upstreamRequest(request, candidate), { signal: context.signal });
        const iterator = response.chunks[Symbol.asyncIterator]();
        const first = await iterator.next();
        if (first.done) throw new UpstreamNetworkError(candidate.provider, "invalid_response", "the stream ended before any chunk");
        return { iterator, first: first.value, upstreamRequestId: response.upstreamRequestId };
      });
      this.metering.answered(call, target);
      return { chunks: this.relay(result.first, result.iterator, request, context, target, call), upstreamRequestId: result.upstreamRequestId };
    } catch (error) {
      this.metering.release(call);
      throw error;
    }
  }

  /**
   * Forward chunks as they arrive (a batch per upstream read), naming the public model; end with
   * the usage chunk; bill exactly once, also when the client goes away or the upstream breaks.
   */
  private async *relay(
    first: ChatStreamEvent[],
    rest: AsyncIterator<ChatStreamEvent[]>,
    request: ChatRequestBody,
    context: ChatCallContext,
    target: AttemptTarget,
    call: MeteredCall,
  ): AsyncGenerator<string[]> {
    const relay = new StreamRelay(target.candidate.publicModel);
    const promptText = () => JSON.stringify(request.messages);
    try {
      let batch: ChatStreamEvent[] | undefined = first;
      while (batch) {
        yield batch.map((event) => relay.relay(event));
        const next: IteratorResult<ChatStreamEvent[]> = await rest.next();
        batch = next.done ? undefined : next.value;
      }
      if (!relay.usage) {
        // The upstream sent no usage (some compatible servers ignore include_usage): estimate it.
        relay.usage = estimateUsage(promptText(), relay.producedCharacters);
        yield [JSON.stringify(relay.usageChunk(relay.usage))];
      }
    } finally {
      await rest.return?.();
      await this.metering.settle(call, context, target, relay.usage ?? estimateUsage(promptText(), relay.producedCharacters));
    }
  }
}

function maxOutputTokens(request: ChatRequestBody): number | null | undefined {
  return request.max_completion_tokens ?? request.max_tokens;
}

function upstreamRequest(request: ChatRequestBody, candidate: RouteCandidate): ChatRequest {
  return { ...request, model: candidate.upstreamModel } as ChatRequest;
}

function completionText(body: ChatCompletion): string {
  return body.choices.map((choice) => JSON.stringify((choice as { message?: unknown }).message ?? "")).join("");
}
