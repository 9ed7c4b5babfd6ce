// The one way an adapter calls its vendor. Built once per provider from its context: where the
// vendor's API is (the configured base URL or the vendor's default), how its key is sent, the
// vendor's own headers (the config's `headers` over them), and how its error bodies become the
// OpenAI envelope. Each call then names only what differs: method, path, body, what the answer
// is, and the attempt's bounds. Every call goes through `context.http` with the provider's
// redaction, and answers are read with the helpers below (redacted, within their caps).
import { type AnswerKind, toNetworkError, type UpstreamResponse, upstreamRequestIdOf, upstreamTarget } from "../net/upstream-http.js";
import { encodeMultipart, type MultipartPart } from "./multipart-body.js";
import type { ProviderContext } from "./provider.js";
import { UpstreamHttpError, UpstreamNetworkError } from "./provider-errors.js";

/** How the vendor takes its key: a header (with a scheme such as `Bearer`), or a query parameter. */
export type KeyPlacement = { header: string; scheme?: string } | { query: string };

export interface VendorSettings {
  /** The API's address when the config names none; without one a `baseUrl` must be configured. */
  defaultBaseUrl?: string;
  /** What to set `baseUrl` to, said when it is missing (`your SearXNG instance's address`). */
  baseUrlHint?: string;
  /**
   * The configured base URL (trailing slashes removed) as the base every call's path goes under:
   * a vendor whose paths carry the API version strips it (`/v1`), one whose base must name it adds it.
   */
  baseUrl?: (configured: string) => string;
  key: KeyPlacement;
  /** The vendor's own headers (`anthropic-version` ...); the config's `headers` win over them. */
  headers?: Record<string, string>;
  /** The vendor's error body as the OpenAI envelope (the vendor's body kept as `vendorBody`). */
  mapError?: (error: UpstreamHttpError) => UpstreamHttpError;
  /** Headers that carry the vendor's request id, the first present wins. */
  requestIdHeaders?: readonly string[];
}

export interface VendorCall {
  /** Default: POST with a body, GET without. */
  method?: "GET" | "POST" | "PUT" | "DELETE";
  /** Under the base URL's path, with its query (`/v1/voices`); with `onOrigin`, the whole path on the API's origin. */
  path: string;
  onOrigin?: boolean;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as multipart/form-data. */
  form?: readonly MultipartPart[];
  /** Sent as they are, with their media type. */
  bytes?: { body: Uint8Array; contentType: string };
  /** This call's own headers, over every other. */
  headers?: Record<string, string>;
  /** What the answer is (net/upstream-http.ts): picks its size cap. */
  answer: AnswerKind;
  signal: AbortSignal;
  /** The attempt's first-byte timeout and the request's deadline (net/upstream-http.ts). */
  firstByteTimeoutMs?: number;
  deadline?: number;
  /**
   * false: an error answer is passed on as the upstream sent it (redacted), not mapped: OpenAI's
   * chat and embeddings errors are already the gateway's shape, and stay byte for byte.
   */
  mapError?: boolean;
}

export interface VendorRequest {
  /** The API's origin (`https://api.example.com`), undefined when no base URL is known. */
  readonly origin: string | undefined;
  /** Resolves on a 2xx answer; an error answer throws the UpstreamHttpError the vendor's mapper made of it. */
  send(call: VendorCall): Promise<UpstreamResponse>;
  /** A whole JSON answer, redacted before it is parsed; not JSON is the upstream's fault. */
  readJson(response: UpstreamResponse, signal: AbortSignal): Promise<unknown>;
  /** A whole answer's bytes. */
  readBytes(response: UpstreamResponse, signal: AbortSignal): Promise<Buffer>;
  /** The vendor's request id from the answer's headers (redacted), for tracing. */
  requestId(response: UpstreamResponse): string | undefined;
}

export function vendorRequest(context: ProviderContext, settings: VendorSettings): VendorRequest {
  const configured = context.config.baseUrl ?? settings.defaultBaseUrl;
  const trimmed = configured?.replace(/\/+$/, "");
  const base = trimmed === undefined ? undefined : upstreamTarget(settings.baseUrl ? settings.baseUrl(trimmed) : trimmed);
  const prefix = base?.path.replace(/\/+$/, "") ?? "";
  const headers: Record<string, string> = { ...settings.headers, ...context.config.headers };
  const { apiKey } = context.config;
  let keyQuery: string | undefined;
  if (apiKey) {
    if ("header" in settings.key) headers[settings.key.header] = settings.key.scheme ? `${settings.key.scheme} ${apiKey}` : apiKey;
    else keyQuery = `${encodeURIComponent(settings.key.query)}=${encodeURIComponent(apiKey)}`;
  }

  return {
    origin: base?.origin,

    async send(call) {
      if (!base) {
        const hint = settings.baseUrlHint ? `: set it to ${settings.baseUrlHint}` : "";
        throw new UpstreamNetworkError(context.name, "connect", `the ${context.name} provider (${context.config.type}) has no baseUrl${hint}`);
      }
      const { body, contentType } = bodyOf(call);
      const callHeaders = contentType === undefined ? { ...headers, ...call.headers } : { ...headers, "content-type": contentType, ...call.headers };
      let path = call.onOrigin ? call.path : `${prefix}${call.path}`;
      if (keyQuery) path += `${path.includes("?") ? "&" : "?"}${keyQuery}`;
      try {
        return await context.http.send(
          {
            provider: context.name,
            target: { origin: base.origin, path },
            method: call.method ?? (body === undefined ? "GET" : "POST"),
            headers: callHeaders,
            body,
            signal: call.signal,
            firstByteTimeoutMs: call.firstByteTimeoutMs,
            deadline: call.deadline,
            answer: call.answer,
            redact: context.redact,
          },
          context.upstream,
        );
      } catch (error) {
        if (error instanceof UpstreamHttpError && settings.mapError && call.mapError !== false) throw settings.mapError(error);
        throw error;
      }
    },

    async readJson(response, signal) {
      const text = await readAll(() => response.body.text(), signal);
      try {
        return JSON.parse(context.redact(text));
      } catch {
        throw new UpstreamNetworkError(context.name, "invalid_response", "the body is not JSON");
      }
    },

    readBytes(response, signal) {
      return readAll(() => response.body.bytes(), signal);
    },

    requestId(response) {
      for (const name of settings.requestIdHeaders ?? []) {
        const id = upstreamRequestIdOf(response.headers, name, context.redact);
        if (id !== undefined) return id;
      }
      return undefined;
    },
  };

  async function readAll<T>(read: () => Promise<T>, signal: AbortSignal): Promise<T> {
    try {
      return await read();
    } catch (error) {
      throw toNetworkError(context.name, error, signal);
    }
  }
}

function bodyOf(call: VendorCall): { body?: string | Uint8Array; contentType?: string } {
  if (call.json !== undefined) return { body: JSON.stringify(call.json), contentType: "application/json" };
  if (call.form !== undefined) {
    const form = encodeMultipart(call.form);
    return { body: form.body, contentType: form.contentType };
  }
  if (call.bytes !== undefined) return { body: call.bytes.body, contentType: call.bytes.contentType };
  return {};
}
