// The embeddings endpoint for the client, on GwClient's transport; `client.embeddings` is one built
// with the client's key. Its shapes are the server's (type imports only: erased, so the client
// never loads the gateway; docs/decisions.md §1).
import type { EmbeddingsRequestInput, EmbeddingsResponseBody } from "../gateway/embeddings/embeddings-request.js";
import { GwApiError, isRecord } from "./gw-api-error.js";
import type { HttpTransport } from "./http-transport.js";

/** POST /v1/embeddings: `model`, `input` (a text, texts, token ids or lists of them), `encoding_format`, `dimensions`, `user`. */
export type EmbeddingsRequest = EmbeddingsRequestInput;

/** Its answer: one vector per input, floats or base64 by `encoding_format`, and the input tokens billed. */
export type EmbeddingsBody = EmbeddingsResponseBody;

export class EmbeddingsClient {
  constructor(private readonly transport: HttpTransport) {}

  /** POST /v1/embeddings: the request goes as given; the gateway checks it and says what it takes. */
  async create(request: EmbeddingsRequest, options: { signal?: AbortSignal } = {}): Promise<EmbeddingsBody> {
    const answer = await this.transport.json<unknown>("/v1/embeddings", { json: request, signal: options.signal });
    if (!isRecord(answer) || !Array.isArray(answer.data))
      throw new GwApiError("unexpected embeddings answer from the gateway: no `data` list", 200, undefined, undefined, undefined, answer);
    return answer as unknown as EmbeddingsBody;
  }
}
