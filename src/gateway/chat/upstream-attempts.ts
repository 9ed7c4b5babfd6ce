// Try route candidates in order: retries with backoff on connect errors, timeouts, 429
// (honouring Retry-After) and 5xx, then the next candidate. Only ever before the first byte
// reaches the client. An upstream 4xx about a value ends the attempts and goes back verbatim.
import type { UpstreamSettings } from "../../config/config-schema.js";
import type { Provider } from "../../providers/provider.js";
import { UnsupportedContentError, UpstreamHttpError, UpstreamNetworkError } from "../../providers/provider-errors.js";
import { InvalidRequestError, UpstreamPassthroughError, UpstreamUnavailableError } from "../errors.js";
import type { RouteCandidate } from "../routing/route-resolver.js";

export interface AttemptTarget {
  candidate: RouteCandidate;
  provider: Provider;
}

export interface AttemptContext {
  candidates: RouteCandidate[];
  providers: ReadonlyMap<string, Provider>;
  settings: (provider: string) => UpstreamSettings;
  signal: AbortSignal;
  /** Which capability a candidate's provider must offer. */
  supports: (provider: Provider) => boolean;
}

export async function attemptInOrder<T>(context: AttemptContext, attempt: (target: AttemptTarget) => Promise<T>): Promise<{ result: T; target: AttemptTarget }> {
  const failures: string[] = [];
  let timeoutsOnly = true;
  for (const candidate of context.candidates) {
    const provider = context.providers.get(candidate.provider);
    if (!provider || !context.supports(provider)) {
      failures.push(`${candidate.provider}: not configured for this capability`);
      timeoutsOnly = false;
      continue;
    }
    const settings = context.settings(candidate.provider);
    for (let retry = 0; ; retry += 1) {
      try {
        const target = { candidate, provider };
        return { result: await attempt(target), target };
      } catch (error) {
        if (context.signal.aborted) throw error;
        const verdict = judge(error, candidate.provider);
        if (verdict.kind === "passthrough") throw verdict.error;
        failures.push(`${candidate.provider}: ${verdict.reason}`);
        if (verdict.kind !== "timeout") timeoutsOnly = false;
        if (verdict.kind === "next" || retry >= settings.retries) break;
        const wait = verdict.retryAfterMs ?? backoff(settings.retryBaseDelayMs, retry);
        if (wait > settings.maxRetryAfterMs) break;
        await sleep(wait, context.signal);
      }
    }
  }
  throw new UpstreamUnavailableError(
    timeoutsOnly ? "The upstream did not answer in time." : "No upstream could serve this request.",
    { status: timeoutsOnly ? 504 : 502, code: timeoutsOnly ? "upstream_timeout" : "upstream_unavailable", failures },
  );
}

type Verdict =
  | { kind: "retry" | "timeout"; reason: string; retryAfterMs?: number }
  | { kind: "next"; reason: string }
  | { kind: "passthrough"; error: UpstreamPassthroughError };

function judge(error: unknown, provider: string): Verdict {
  if (error instanceof UpstreamHttpError) {
    const { status } = error;
    if (status === 429 || status === 408 || status === 409 || status >= 500) {
      return { kind: "retry", reason: `HTTP ${status}`, retryAfterMs: error.retryAfterMs };
    }
    // The upstream refused our credentials: an operator problem, not the caller's; try elsewhere.
    if (status === 401 || status === 403) return { kind: "next", reason: `HTTP ${status} (check the provider's apiKey)` };
    return { kind: "passthrough", error: new UpstreamPassthroughError(status, error.body, error.contentType, error.provider, error.vendorBody) };
  }
  if (error instanceof UpstreamNetworkError) {
    if (error.failure === "invalid_response") return { kind: "next", reason: error.message };
    const timeout = error.failure === "first_byte_timeout" || error.failure === "idle_timeout";
    return { kind: timeout ? "timeout" : "retry", reason: error.failure.replaceAll("_", " ") };
  }
  if (error instanceof UnsupportedContentError) {
    // Content this vendor cannot take (an image by URL for Gemini ...): the caller's to fix.
    throw new InvalidRequestError(`${error.message} (provider ${provider})`, { param: error.param, provider });
  }
  throw error;
}

function backoff(base: number, retry: number): number {
  return Math.round(base * 2 ** retry * (0.75 + Math.random() * 0.5));
}

function sleep(milliseconds: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, milliseconds);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
