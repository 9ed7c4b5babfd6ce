// The gateway transport: base URL, bearer auth, error decoding, and the three body kinds the
// endpoints answer with (JSON, Server-Sent Events, binary). Endpoint methods live in GwClient.
import { Readable } from "node:stream";
import { isObject } from "../json/json-values.js";
import { type AnswerShape, expectAnswer } from "./answer-shape.js";
import { errorFromBody, GwApiError } from "./gw-api-error.js";
import { type Answer, plainGet } from "./plain-get.js";
import { readServerSentEvents } from "./server-sent-events.js";
import { unreachableGatewayMessage } from "./unreachable-gateway.js";
import { uploadRequest } from "./upload-connections.js";

export interface TransportOptions {
  /** The gateway's root, e.g. http://127.0.0.1:8787 (a trailing `/v1` is tolerated). */
  baseUrl: string;
  apiKey?: string;
  fetch?: typeof fetch;
  /** The self-signed certificate of the caller's own gw home, named when the gateway's certificate is not trusted. */
  selfSignedCertificate?: string;
  /**
   * Send JSON GETs over node:http rather than fetch (plain-get.ts): for a short-lived process such
   * as the CLI, which would spend longer loading fetch than asking. Ignored when `fetch` is given.
   */
  plainGets?: boolean;
}

/** What fetch accepts as a body (FormData, Blob, bytes as an ArrayBuffer view ...). */
export type RequestBody = NonNullable<RequestInit["body"]>;

export interface RequestOptions {
  method?: string;
  /** A JSON value (sent as application/json), or a ready body (FormData, bytes). */
  json?: unknown;
  body?: RequestBody;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Public endpoints (catalogs) need no key. */
  auth?: boolean;
}

export interface EventOptions extends RequestOptions {
  /** The data line that ends the stream (`[DONE]` for chat). */
  terminator?: string;
  /** Treat a body that ends without the terminator as a lost connection. */
  requireTerminator?: boolean;
}

export interface StreamRequestOptions {
  method: string;
  headers: Record<string, string>;
  signal?: AbortSignal;
  /** Signed links carry their own credential. */
  auth?: boolean;
}

export interface BinaryResult {
  data: Uint8Array;
  contentType: string;
  headers: Headers;
}

export class HttpTransport {
  readonly baseUrl: string;
  private readonly apiKey: string | undefined;
  private readonly fetchImpl: typeof fetch;
  private readonly plainGets: boolean;
  private readonly selfSignedCertificate: string | undefined;

  constructor(options: TransportOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "");
    this.apiKey = options.apiKey;
    this.fetchImpl = options.fetch ?? fetch;
    this.plainGets = options.plainGets === true && options.fetch === undefined;
    this.selfSignedCertificate = options.selfSignedCertificate;
  }

  /** What to say when a request to `origin` got no answer (an untrusted certificate named as such). */
  unreachable(origin: string, error: unknown): string {
    return unreachableGatewayMessage(origin, error, this.selfSignedCertificate);
  }

  /** Send a request; a non-2xx answer is raised as GwApiError with the server's message. */
  async request(path: string, options: RequestOptions = {}): Promise<Response> {
    const headers = this.headersWithKey(options);
    let body: RequestBody | undefined = options.body;
    if (options.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(options.json);
    }
    let response: Response;
    try {
      response = await this.fetchImpl(this.url(path, options.query), {
        method: options.method ?? (body === undefined ? "GET" : "POST"),
        headers,
        body,
        signal: options.signal,
      });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      throw new GwApiError(this.unreachable(this.baseUrl, error), 0);
    }
    if (!response.ok) throw await decodeError(response);
    return response;
  }

  /** The JSON answer, checked against `shape` (a 200 that is not it is a GwApiError). */
  async json<T>(path: string, shape: AnswerShape<T>, options: RequestOptions = {}): Promise<T> {
    const jsonOptions = { ...options, headers: { accept: "application/json", ...options.headers } };
    const answer = (await this.plainGet(path, jsonOptions)) ?? (await this.request(path, jsonOptions));
    return expectAnswer(await readJson(answer), shape);
  }

  /** A GET over node:http when asked for; undefined leaves the request to fetch (plain-get.ts says when). */
  private async plainGet(path: string, options: RequestOptions): Promise<Answer | undefined> {
    if (!this.plainGets || options.body !== undefined || options.json !== undefined || (options.method ?? "GET") !== "GET") return undefined;
    const headers = this.headersWithKey(options);
    let url: URL;
    try {
      url = new URL(this.url(path, options.query));
    } catch {
      return undefined; // fetch reports it
    }
    const answer = await plainGet(url, headers, options.signal);
    if (answer && !answer.ok) throw await decodeError(answer);
    return answer;
  }

  /** The request's headers with the key, unless the endpoint is public; no key for one that needs it is an error. */
  private headersWithKey(options: RequestOptions): Record<string, string> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.auth !== false) {
      if (!this.apiKey) throw new GwApiError("no API key given", 0);
      headers.authorization = `Bearer ${this.apiKey}`;
    }
    return headers;
  }

  /** The JSON `data:` payload of each event; an `{error}` event is raised as GwApiError. */
  async *events(path: string, options: EventOptions = {}): AsyncGenerator<unknown> {
    const response = await this.request(path, { ...options, headers: { accept: "text/event-stream", ...options.headers } });
    const requestId = response.headers.get("x-request-id") ?? undefined;
    if (!(response.headers.get("content-type") ?? "").includes("text/event-stream")) {
      const body = await readJson(response);
      throw (
        errorFromBody(body, response.status, requestId) ??
        new GwApiError("expected an event stream from the gateway", response.status, undefined, undefined, requestId, body)
      );
    }
    if (!response.body) throw new GwApiError("the gateway sent an empty stream", response.status, undefined, undefined, requestId);
    const terminator = options.terminator ?? "[DONE]";
    for await (const event of readServerSentEvents(response.body)) {
      if (event.data === terminator) return;
      let data: unknown;
      try {
        data = JSON.parse(event.data);
      } catch {
        throw new GwApiError(`malformed event from the gateway: ${event.data.slice(0, 200)}`, response.status, undefined, undefined, requestId);
      }
      if (isObject(data) && (data.error !== undefined || data.type === "error")) {
        throw (
          errorFromBody(data, response.status, requestId) ??
          new GwApiError("the gateway reported an error", response.status, undefined, undefined, requestId, data)
        );
      }
      yield data;
    }
    if (options.requireTerminator) {
      throw new GwApiError(`the stream ended before ${terminator}: connection lost`, response.status, undefined, undefined, requestId);
    }
  }

  /**
   * Send a large body as it is read (file uploads) and decode the JSON answer. Node's fetch keeps
   * every byte of a streamed request body in memory until the request ends (nodejs/undici#4058),
   * so this goes through undici's request(), which writes with backpressure. `target` is a path
   * under the base URL, or an absolute URL (a signed upload link, sent with `auth: false`).
   * A gateway that refuses the upload before reading it is reported with its own message
   * (upload-connections.ts), not with the broken pipe its early close causes.
   */
  async sendStream<T>(target: string, body: AsyncIterable<Uint8Array>, shape: AnswerShape<T>, options: StreamRequestOptions): Promise<T> {
    const headers: Record<string, string> = { accept: "application/json", ...options.headers };
    if (options.auth !== false) {
      if (!this.apiKey) throw new GwApiError("no API key given", 0);
      headers.authorization = `Bearer ${this.apiKey}`;
    }
    const url = /^https?:\/\//i.test(target) ? target : this.url(target, undefined);
    let answer: Awaited<ReturnType<typeof uploadRequest>>;
    try {
      answer = await uploadRequest(url, {
        method: options.method,
        headers,
        body: Readable.from(body, { objectMode: false }),
        signal: options.signal,
      });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      throw new GwApiError(this.unreachable(new URL(url).origin, error), 0);
    }
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(", ") : value);
    }
    const response = new Response(await answer.body.text(), { status: answer.statusCode, headers: responseHeaders });
    if (!response.ok) throw await decodeError(response);
    return expectAnswer(await readJson(response), shape);
  }

  async binary(path: string, options: RequestOptions = {}): Promise<BinaryResult> {
    const response = await this.request(path, options);
    return {
      data: new Uint8Array(await response.arrayBuffer()),
      contentType: response.headers.get("content-type") ?? "application/octet-stream",
      headers: response.headers,
    };
  }

  private url(path: string, query: RequestOptions["query"]): string {
    const url = new URL(`${this.baseUrl}${path.startsWith("/") ? path : `/${path}`}`);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    return url.href;
  }
}

async function readJson(response: Answer): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new GwApiError(
      `the gateway answered with a body that is not JSON: ${text.slice(0, 200)}`,
      response.status,
      undefined,
      undefined,
      response.headers.get("x-request-id") ?? undefined,
    );
  }
}

async function decodeError(response: Answer): Promise<GwApiError> {
  const requestId = response.headers.get("x-request-id") ?? undefined;
  const text = await response.text().catch(() => "");
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON (a proxy's HTML page, an empty body): report the status and what was sent.
  }
  const detail = text.trim() ? `: ${text.trim().slice(0, 200)}` : "";
  const error =
    errorFromBody(body, response.status, requestId) ??
    new GwApiError(`HTTP ${response.status} ${response.statusText}${detail}`, response.status, undefined, undefined, requestId, body);
  const retryAfter = Number(response.headers.get("retry-after"));
  if (response.headers.has("retry-after") && Number.isFinite(retryAfter) && retryAfter >= 0) error.retryAfterSeconds = retryAfter;
  return error;
}
