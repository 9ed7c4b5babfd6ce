// The response cache at the routes (docs/decisions.md §22): whether this request's answer is
// cached (its x-gw-cache header, its key's lifetime), a hit replayed in the shape the original
// answer had (a JSON body byte for byte, a stream event for event with its usage), and a miss's
// answer kept once it has ended well. The `x-gw-cache` response header says hit or miss whenever
// the cache was asked; a request the cache is off for carries none.
import { type H3Event, HTTPResponse } from "h3";
import { CACHE_HEADER } from "../gateway/cache/cache-lifetime.js";
import type { CacheEntry, CacheQuestion } from "../gateway/cache/response-cache.js";
import type { Gateway } from "../gateway/gateway.js";
import { sseResponse } from "./sse-response.js";

/** h3's own Content-Type for a JSON body, so a replayed body is answered exactly as the original was. */
const JSON_CONTENT_TYPE = "application/json;charset=UTF-8";

/** The cache entry of this request, or undefined when the cache is off for it (the common case: one header read). */
export function cacheEntryOf(event: H3Event, gateway: Gateway, question: Omit<CacheQuestion, "header">): CacheEntry | undefined {
  const header = event.req.headers.get(CACHE_HEADER);
  if (header === null && question.caller.key.cacheTtlSeconds === undefined) return undefined;
  return gateway.cache.entryFor({ ...question, header });
}

/**
 * The kept answer, replayed and billed as a hit; undefined on a miss (the call goes on). A stream
 * is written through `frames`, the route's own SSE framing, as it was the first time.
 */
export async function replayFromCache<T>(
  event: H3Event,
  gateway: Gateway,
  entry: CacheEntry,
  frames: (batches: AsyncGenerator<T[]>) => AsyncGenerator<string, string | undefined>,
): Promise<HTTPResponse | undefined> {
  const answer = await gateway.cache.hit(entry);
  event.res.headers.set(CACHE_HEADER, answer ? "hit" : "miss");
  if (!answer) return undefined;
  if (answer.kind === "json") return new HTTPResponse(answer.body, { headers: { "content-type": JSON_CONTENT_TYPE } });
  return sseResponse(frames(oneBatch(answer.events as T[])), {}, gateway.afterTurnWrites);
}

/** A miss's JSON answer: kept, then answered as the text kept, so a later hit sends the same bytes. */
export async function keepJson(gateway: Gateway, entry: CacheEntry, body: unknown): Promise<HTTPResponse> {
  const text = JSON.stringify(body);
  await gateway.cache.keep(entry, { kind: "json", body: text });
  return new HTTPResponse(text, { headers: { "content-type": JSON_CONTENT_TYPE } });
}

/**
 * A miss's stream, passed through as it is produced and kept once it has ended well (`complete`
 * judges its events: a stream that failed part-way or that the client left is never kept).
 */
export async function* keepStream<T>(
  gateway: Gateway,
  entry: CacheEntry,
  batches: AsyncGenerator<T[]>,
  complete: (events: T[]) => boolean,
): AsyncGenerator<T[]> {
  const events: T[] = [];
  for await (const batch of batches) {
    events.push(...batch);
    yield batch;
  }
  if (complete(events)) await gateway.cache.keep(entry, { kind: "stream", events });
}

async function* oneBatch<T>(events: T[]): AsyncGenerator<T[]> {
  yield events;
}
