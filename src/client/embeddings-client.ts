// The embeddings endpoint for the client, on GwClient's transport; `client.embeddings` is one built
// with the client's key. Its shapes are the server's (type imports only: erased, so the client
// never loads the gateway; docs/decisions.md §1).
import type { EmbeddingsRequestInput, EmbeddingsResponseBody } from "../gateway/embeddings/embeddings-request.js";
import { answerShape, hasList } from "./answer-shape.js";
import type { HttpTransport } from "./http-transport.js";

/** POST /v1/embeddings: `model`, `input` (a text, texts, token ids or lists of them), `encoding_format`, `dimensions`, `user`. */
export type EmbeddingsRequest = EmbeddingsRequestInput;

/** Its answer: one vector per input, floats or base64 by `encoding_format`, and the input tokens billed. */
export type EmbeddingsBody = EmbeddingsResponseBody;

const EMBEDDINGS = answerShape(
  "embeddings",
  (body): body is EmbeddingsBody => hasList(body, "data"),
  "unexpected embeddings answer from the gateway: no `data` list",
);

export class EmbeddingsClient {
  constructor(private readonly transport: HttpTransport) {}

  /** POST /v1/embeddings: the request goes as given; the gateway checks it and says what it takes. */
  async create(request: EmbeddingsRequest, options: { signal?: AbortSignal } = {}): Promise<EmbeddingsBody> {
    return this.transport.json("/v1/embeddings", EMBEDDINGS, { json: request, signal: options.signal });
  }
}
