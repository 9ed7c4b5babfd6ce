// What the response cache keeps of an answer: exactly what the client got (a JSON body's text, or
// a stream's events in order, so a replay writes the same bytes), and the usage the call it
// repeats was billed, which a hit's usage row names and prices (docs/decisions.md §22).

export interface CachedUsage {
  provider: string;
  /** The public model, as the answer and its usage row named it. */
  model: string;
  units: Record<string, number>;
  credits: number;
}

/** An answer as the client got it: a JSON body's text, or a stream's events as the service yielded them (chat chunk texts, or named events). */
export type AnswerGiven = { kind: "json"; body: string } | { kind: "stream"; events: unknown[] };

export type CachedAnswer = AnswerGiven & { usage: CachedUsage };

export function encodeCachedAnswer(answer: CachedAnswer): Buffer {
  return Buffer.from(JSON.stringify(answer));
}

/** The answer a cache entry holds, or undefined when it is not one this gateway wrote. */
export function decodeCachedAnswer(bytes: Buffer): CachedAnswer | undefined {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString("utf8"));
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const answer = value as Partial<CachedAnswer> & { body?: unknown; events?: unknown };
  const usage = answer.usage;
  const validUsage =
    typeof usage === "object" &&
    usage !== null &&
    typeof usage.provider === "string" &&
    typeof usage.model === "string" &&
    typeof usage.units === "object" &&
    usage.units !== null &&
    Number.isSafeInteger(usage.credits);
  if (!validUsage) return undefined;
  if (answer.kind === "json" && typeof answer.body === "string") return answer as CachedAnswer;
  if (answer.kind === "stream" && Array.isArray(answer.events)) return answer as CachedAnswer;
  return undefined;
}
