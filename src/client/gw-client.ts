// The typed gateway client the CLI commands (and tests) use: one method per endpoint, on top of
// HttpTransport, which owns the base URL, auth, error decoding and body kinds.
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, ModelList } from "./api-types.js";
import { GwApiError, isRecord } from "./gw-api-error.js";
import { HttpTransport, type TransportOptions } from "./http-transport.js";

export interface CallOptions {
  signal?: AbortSignal;
}

export class GwClient {
  readonly transport: HttpTransport;

  constructor(options: TransportOptions | HttpTransport) {
    this.transport = options instanceof HttpTransport ? options : new HttpTransport(options);
  }

  async listModels(options: CallOptions = {}): Promise<ModelList> {
    const body = await this.transport.json<unknown>("/v1/models", options);
    if (!isRecord(body) || !Array.isArray(body.data)) throw new GwApiError("unexpected /v1/models answer: no `data` list", 200, undefined, undefined, undefined, body);
    return body as unknown as ModelList;
  }

  async chatCompletion(body: ChatCompletionRequest, options: CallOptions = {}): Promise<ChatCompletion> {
    const answer = await this.transport.json<unknown>("/v1/chat/completions", { ...options, json: { ...body, stream: false } });
    if (!isRecord(answer) || !Array.isArray(answer.choices)) throw new GwApiError("unexpected chat completion answer: no `choices`", 200, undefined, undefined, undefined, answer);
    return answer as unknown as ChatCompletion;
  }

  /** Streamed completion: parsed chunks as they arrive, ending at `[DONE]`; an error event throws. */
  async *chatCompletionStream(body: ChatCompletionRequest, options: CallOptions = {}): AsyncGenerator<ChatCompletionChunk> {
    const events = this.transport.events("/v1/chat/completions", { ...options, json: { ...body, stream: true }, requireTerminator: true });
    for await (const event of events) {
      if (!isRecord(event) || !Array.isArray(event.choices)) throw new GwApiError("unexpected chat stream chunk: no `choices`", 200, undefined, undefined, undefined, event);
      yield event as unknown as ChatCompletionChunk;
    }
  }
}
