// Fetch a URL a user gave us (an image to edit, a picture to describe) without letting it reach
// anything but the public internet (docs/decisions.md §2, private or internal URL). http(s) only,
// no userinfo, every hop's host checked on every address it resolves to and then connected to by
// that very address (see safe-fetch-connector.ts), redirects followed by hand and re-checked, the
// body capped in bytes and the whole fetch, redirects included, capped in time.
import { type EventEmitter, once } from "node:events";
import { Client, type Dispatcher } from "undici";
import { type ConnectRedirect, type HostResolver, pinnedConnector, systemResolver, untilAborted, vetHost } from "./safe-fetch-connector.js";
import { FetchFailedError, UrlNotAllowedError } from "./safe-fetch-errors.js";

export type { HostResolver, ResolvedAddress } from "./safe-fetch-connector.js";
export type { FetchFailure, UrlRefusal } from "./safe-fetch-errors.js";
export { FetchFailedError, UrlNotAllowedError } from "./safe-fetch-errors.js";

export interface SafeFetchOptions {
  /** Largest body accepted, checked against Content-Length first and then while streaming. */
  maxBytes: number;
  /** Budget for the whole fetch: DNS, connects, every redirect and the body. */
  timeoutMs: number;
  /** Redirects followed before giving up (default 5). */
  maxRedirects?: number;
  /** The Accept header sent (default any type). */
  accept?: string;
  /** Cancels the fetch; its reason is rethrown as is. */
  signal?: AbortSignal;
  /**
   * Where the body goes instead of memory (a video clip on its way to a file): written with
   * backpressure, still capped at maxBytes, and ended when the body is complete; `bytes` is then empty.
   */
  sink?: NodeJS.WritableStream;
  /** Skip the address policy (loopback, private ...). Only for an operator's explicit opt-in. */
  allowPrivate?: boolean;
  /** How hostnames are resolved (default: the system resolver, every address). */
  resolve?: HostResolver;
  /**
   * TEST HOOK, never set in production code: sends the socket for a vetted (public) address
   * somewhere else, so tests can serve a "public" host from 127.0.0.1. Functions cannot come
   * from the config file, so no configuration can reach it.
   */
  unsafeConnectRedirect?: ConnectRedirect;
}

export interface FetchedResource {
  bytes: Buffer;
  /** The Content-Type header as sent; not to be trusted for what the bytes are. */
  contentType: string | undefined;
  /** The URL of the last hop, after redirects. */
  finalUrl: string;
}

/**
 * Fetches a user-supplied URL: the gateway's is safeFetch (tests point a public name at a local
 * server). Handed to tool services and, in their context, to providers (a chat picture by URL).
 */
export type UrlFetcher = (
  url: string,
  options: { maxBytes: number; timeoutMs: number; accept: string; signal?: AbortSignal; sink?: NodeJS.WritableStream },
) => Promise<FetchedResource>;

const DEFAULT_MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const CONNECT_TIMEOUT_MS = 10_000;

type HopResult = { kind: "redirect"; location: string } | { kind: "done"; resource: FetchedResource };

export async function safeFetch(url: string, options: SafeFetchOptions): Promise<FetchedResource> {
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([deadline, options.signal]) : deadline;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  try {
    let target = parseFetchableUrl(url);
    for (let redirects = 0; ; redirects += 1) {
      const vetted = await vetHost(target, {
        resolve: options.resolve ?? systemResolver,
        allowPrivate: options.allowPrivate === true,
        signal,
        redirected: redirects > 0,
      });
      const client = new Client(target.origin, {
        connect: pinnedConnector(target, vetted, {
          connectTimeoutMs: Math.min(CONNECT_TIMEOUT_MS, options.timeoutMs),
          connectRedirect: options.unsafeConnectRedirect,
        }),
        // The deadline signal governs; undici's own (coarse) timers are only a backstop behind it.
        headersTimeout: options.timeoutMs + 1000,
        bodyTimeout: options.timeoutMs + 1000,
      });
      let hop: HopResult;
      try {
        hop = await fetchHop(client, target, options, signal);
      } finally {
        await client.destroy().catch(() => undefined);
      }
      if (hop.kind === "done") return hop.resource;
      if (redirects >= maxRedirects) {
        throw new FetchFailedError("too_many_redirects", `the URL redirected more than ${maxRedirects} times`);
      }
      target = parseFetchableUrl(hop.location, target);
    }
  } catch (error) {
    if (error instanceof UrlNotAllowedError || error instanceof FetchFailedError) throw error;
    if (options.signal?.aborted) throw options.signal.reason;
    if (deadline.aborted) {
      throw new FetchFailedError("timeout", `fetching the URL took longer than ${options.timeoutMs} ms`);
    }
    throw new FetchFailedError("network", "the URL's host could not be reached or closed the connection");
  }
}

/** Parse and check what can be checked without the network: scheme and userinfo. */
export function parseFetchableUrl(text: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(text, base);
  } catch {
    throw new UrlNotAllowedError("invalid_url", base ? "the URL redirects to an invalid location" : "the URL is not a valid absolute URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UrlNotAllowedError("scheme", base ? "the URL redirects to a location that is not http or https" : "only http and https URLs can be fetched");
  }
  if (url.username !== "" || url.password !== "") {
    throw new UrlNotAllowedError("userinfo", "URLs with a user name or password are not allowed");
  }
  return url;
}

async function fetchHop(client: Client, target: URL, options: SafeFetchOptions, signal: AbortSignal): Promise<HopResult> {
  const response = await client.request({
    method: "GET",
    path: `${target.pathname}${target.search}`,
    headers: { accept: options.accept ?? "*/*", "accept-encoding": "identity", "user-agent": "gw-fetch" },
    signal,
  });
  const { statusCode, headers, body } = response;
  if (REDIRECT_STATUSES.has(statusCode)) {
    discard(body);
    const location = headerValue(headers.location);
    if (!location) throw new FetchFailedError("http_status", `the URL answered HTTP ${statusCode} without a location`, statusCode);
    return { kind: "redirect", location };
  }
  if (statusCode < 200 || statusCode > 299) {
    discard(body);
    throw new FetchFailedError("http_status", `the URL answered HTTP ${statusCode}`, statusCode);
  }
  const contentType = headerValue(headers["content-type"]);
  if (options.sink) {
    await streamCapped(body, headers, options.maxBytes, signal, options.sink);
    return { kind: "done", resource: { bytes: Buffer.alloc(0), contentType, finalUrl: target.href } };
  }
  const bytes = await readCapped(body, headers, options.maxBytes, signal);
  return { kind: "done", resource: { bytes, contentType, finalUrl: target.href } };
}

/** The body written to `sink` as it arrives, at most maxBytes; the sink is ended (and flushed) when it is complete. */
async function streamCapped(
  body: Dispatcher.ResponseData["body"],
  headers: Dispatcher.ResponseData["headers"],
  maxBytes: number,
  signal: AbortSignal,
  sink: NodeJS.WritableStream,
): Promise<void> {
  await eachCappedPiece(body, headers, maxBytes, signal, async (piece) => {
    if (!sink.write(piece)) await once(sink as unknown as EventEmitter, "drain");
  });
  await untilAborted(
    new Promise<void>((resolve, reject) => {
      (sink as unknown as EventEmitter).once("error", reject);
      sink.end(() => resolve());
    }),
    signal,
  );
}

async function readCapped(
  body: Dispatcher.ResponseData["body"],
  headers: Dispatcher.ResponseData["headers"],
  maxBytes: number,
  signal: AbortSignal,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  await eachCappedPiece(body, headers, maxBytes, signal, (piece) => {
    chunks.push(piece);
    total += piece.length;
  });
  return Buffer.concat(chunks, total);
}

/**
 * Hands each piece of the body to `take` as it arrives, at most maxBytes in all: a larger declared
 * length is refused before reading, a body that grows past it the moment it does. An abort or a
 * failure drops the body.
 */
async function eachCappedPiece(
  body: Dispatcher.ResponseData["body"],
  headers: Dispatcher.ResponseData["headers"],
  maxBytes: number,
  signal: AbortSignal,
  take: (piece: Buffer) => void | Promise<void>,
): Promise<void> {
  const tooLarge = (): FetchFailedError => new FetchFailedError("too_large", `the resource is larger than the ${maxBytes}-byte limit`);
  const declared = Number(headerValue(headers["content-length"]));
  if (Number.isFinite(declared) && declared > maxBytes) {
    discard(body);
    throw tooLarge();
  }
  let total = 0;
  const reading = (async () => {
    for await (const chunk of body) {
      const piece: Buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      total += piece.length;
      if (total > maxBytes) {
        discard(body);
        throw tooLarge();
      }
      await take(piece);
    }
  })();
  await untilAborted(reading, signal).catch((error: unknown) => {
    discard(body);
    throw error;
  });
}

/** Drop a body we will not read; its connection goes with the client. */
function discard(body: Dispatcher.ResponseData["body"]): void {
  // Destroying an unfinished undici body emits an AbortError; nobody is waiting for it.
  body.on("error", () => undefined);
  body.destroy();
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
