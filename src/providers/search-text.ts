// What the search adapters share: vendor text as plain text (Brave's <strong> highlights and HTML
// entities in titles and snippets), a vendor's date kept as it is, and a vendor call's upstream
// request (GET or POST JSON through context.http with the provider's headers and redaction).

import type { UpstreamResponse } from "../net/upstream-http.js";
import type { ProviderContext } from "./provider.js";
import { UpstreamHttpError } from "./provider-errors.js";

const NAMED_ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " ", hellip: "…", mdash: "—", ndash: "–" };

/** Tags (`<strong>`, `</b>`, `<br/>`) removed, entities decoded, whitespace runs collapsed. */
export function plainText(text: string): string {
  return decodeEntities(text.replace(/<\/?[A-Za-z][^<>]*>/g, ""))
    .replace(/\s+/g, " ")
    .trim();
}

function decodeEntities(text: string): string {
  return text.replace(/&(#[xX][0-9A-Fa-f]{1,6}|#[0-9]{1,7}|[A-Za-z]+);/g, (whole, name: string) => {
    if (name.startsWith("#")) {
      const code = name[1] === "x" || name[1] === "X" ? Number.parseInt(name.slice(2), 16) : Number.parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    const lower = name.toLowerCase();
    // Own keys only: `&constructor;` in a page is text, not a way into Object.prototype.
    return Object.hasOwn(NAMED_ENTITIES, lower) ? (NAMED_ENTITIES[lower] ?? whole) : whole;
  });
}

/** A non-empty string as it is; anything else (null, a number, "") as absent. */
export function presentString(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

export interface SearchCall {
  method: "GET" | "POST";
  /** The origin and the path with its query. */
  target: { origin: string; path: string };
  headers: Record<string, string>;
  /** Sent as JSON. */
  json?: unknown;
  signal: AbortSignal;
  /** The vendor's error body -> the OpenAI envelope. */
  mapError: (error: UpstreamHttpError) => UpstreamHttpError;
}

export async function sendSearch(context: ProviderContext, call: SearchCall): Promise<UpstreamResponse> {
  const headers: Record<string, string> = { ...context.config.headers, accept: "application/json", ...call.headers };
  if (call.json !== undefined) headers["content-type"] = "application/json";
  try {
    return await context.http.send(
      {
        provider: context.name,
        target: call.target,
        method: call.method,
        headers,
        body: call.json === undefined ? undefined : JSON.stringify(call.json),
        signal: call.signal,
        answer: "search",
        redact: context.redact,
      },
      context.upstream,
    );
  } catch (error) {
    throw error instanceof UpstreamHttpError ? call.mapError(error) : error;
  }
}

/** The body as JSON, or undefined when it is not. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
