// What a call was charged, told in its answer's own usage object as `usage.gw_credits` (an
// integer, the credits of every usage row the request wrote: docs/decisions.md §24). The chat
// completion, Response, message and embeddings bodies all have a `usage` object; an answer without
// one is left as it is. Clients that do not know the field ignore it (the official SDKs keep
// unknown fields).

export const CREDITS_USAGE_FIELD = "gw_credits";

/** Adds `gw_credits` to the body's usage object, when it has one; returns the body. */
export function withCreditsInUsage<Body>(body: Body, credits: number): Body {
  const usage = typeof body === "object" && body !== null ? (body as { usage?: unknown }).usage : undefined;
  if (typeof usage === "object" && usage !== null && !Array.isArray(usage)) (usage as Record<string, unknown>)[CREDITS_USAGE_FIELD] = credits;
  return body;
}
