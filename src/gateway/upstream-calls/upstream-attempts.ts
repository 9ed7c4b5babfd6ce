// Try route candidates in order: retries with backoff on connect errors, timeouts, 429
// (honouring Retry-After), 5xx and malformed answers, then the next candidate. Only ever before
// the first byte reaches the client. An upstream 4xx about a value ends the attempts and goes
// back verbatim. An answer over its size cap ends the attempts (502): the upstream produced it.
// A provider whose circuit is open is skipped, and all attempts of one request share one
// deadline (`totalTimeoutMs`): each attempt is given it (the upstream client ends the attempt's
// call there, its answer's last byte included), and no retry starts or waits past it.
import { setTimeout } from "node:timers/promises";
import type { UpstreamSettings } from "../../config/config-schema.js";
import { isRetryableStatus } from "../../net/upstream-errors.js";
import type { Provider } from "../../providers/provider.js";
import { isTimeoutFailure, UnsupportedContentError, UpstreamHttpError, UpstreamNetworkError } from "../../providers/provider-errors.js";
import { InvalidRequestError, UpstreamPassthroughError, UpstreamUnavailableError } from "../errors.js";
import type { Admission, CircuitBreakers } from "../routing/circuit-breaker.js";
import type { RouteCandidate } from "../routing/route-resolver.js";
import type { ServiceContext } from "../service-context.js";
import { type AttemptOutcome, type FailureCause, failureCause } from "./attempt-outcome.js";

export interface AttemptTarget {
  candidate: RouteCandidate;
  provider: Provider;
}

export interface Attempt extends AttemptTarget {
  /** How long this attempt may wait for the upstream's answer to begin (the rest of the deadline). */
  firstByteTimeoutMs: number;
  /** performance.now() when the request's total time runs out: the call, and a stream it starts, end there. */
  deadline: number;
}

export interface AttemptContext {
  candidates: RouteCandidate[];
  providers: ReadonlyMap<string, Provider>;
  settings: (provider: string) => UpstreamSettings;
  signal: AbortSignal;
  /** Which capability a candidate's provider must offer. */
  supports: (provider: Provider) => boolean;
  breakers?: CircuitBreakers;
  /** performance.now() when the request began: the total deadline counts from here. */
  started?: number;
  /** Told as each attempt begins. */
  onAttempt?: (candidate: RouteCandidate) => void;
  /** Told of every failed attempt (the log: provider, cause, request id). */
  onFailedAttempt?: (provider: string, cause: string) => void;
  /** Told as each attempt ends: how, in fixed words, after how long (the metrics), and the upstream's status when one failed it (traces). */
  onAttemptEnd?: (provider: string, outcome: AttemptOutcome, durationMs: number, cause?: FailureCause, status?: number) => void;
}

/** What every upstream call tells of its attempts: the observer (access log, metrics) each one, the log each failure. */
export function attemptReports(
  shared: Pick<ServiceContext, "observer" | "warn">,
  requestId: string,
): Pick<AttemptContext, "onAttempt" | "onAttemptEnd" | "onFailedAttempt"> {
  const { observer } = shared;
  return {
    onAttempt: observer && ((candidate) => observer.attempted(requestId, candidate.provider, candidate)),
    onAttemptEnd:
      observer?.attemptEnded &&
      ((provider, outcome, durationMs, cause, status) => observer.attemptEnded?.(provider, outcome, durationMs, cause, { requestId, status })),
    onFailedAttempt: (provider, cause) => shared.warn(`${requestId} upstream attempt failed: provider ${provider}: ${cause}`),
  };
}

export async function attemptInOrder<T>(context: AttemptContext, attempt: (target: Attempt) => Promise<T>): Promise<{ result: T; target: AttemptTarget }> {
  const failures: string[] = [];
  const open: Array<{ provider: string; retryInMs: number }> = [];
  let timeoutsOnly = true;
  let outOfTime: number | undefined;
  const started = context.started ?? performance.now();
  candidates: for (const candidate of context.candidates) {
    const provider = context.providers.get(candidate.provider);
    if (!provider || !context.supports(provider)) {
      failures.push(`${candidate.provider}: not configured for this capability`);
      timeoutsOnly = false;
      continue;
    }
    const settings = context.settings(candidate.provider);
    for (let retry = 0; ; retry += 1) {
      const remaining = settings.totalTimeoutMs - (performance.now() - started);
      if (remaining <= 0) {
        outOfTime = settings.totalTimeoutMs;
        break candidates;
      }
      const admission: Admission = context.breakers?.admit(candidate.provider, settings) ?? { allowed: true, probe: false };
      if (!admission.allowed) {
        failures.push(`${candidate.provider}: circuit open after repeated failures`);
        open.push({ provider: candidate.provider, retryInMs: admission.retryInMs });
        timeoutsOnly = false;
        break;
      }
      outOfTime = undefined; // an attempt is made after all: its own outcome is what counts
      context.onAttempt?.(candidate);
      const attemptStarted = performance.now();
      const ended = (outcome: AttemptOutcome, cause?: FailureCause, status?: number) =>
        context.onAttemptEnd?.(candidate.provider, outcome, performance.now() - attemptStarted, cause, status);
      let verdict: Verdict;
      let cause: FailureCause;
      let status: number | undefined;
      try {
        const target: Attempt = {
          candidate,
          provider,
          firstByteTimeoutMs: Math.max(1, Math.min(settings.firstByteTimeoutMs, Math.ceil(remaining))),
          deadline: started + settings.totalTimeoutMs,
        };
        const result = await attempt(target);
        context.breakers?.succeeded(candidate.provider);
        ended("ok");
        return { result, target };
      } catch (error) {
        if (context.signal.aborted) {
          context.breakers?.abandoned(candidate.provider, admission);
          ended("abandoned");
          throw error;
        }
        try {
          verdict = judge(error, candidate.provider);
        } catch (refusal) {
          context.breakers?.abandoned(candidate.provider, admission);
          ended("abandoned");
          throw refusal;
        }
        cause = failureCause(error);
        status = error instanceof UpstreamHttpError ? error.status : undefined;
      }
      if (verdict.kind === "passthrough") {
        // The upstream answered about a value: it is up, whatever the caller sent.
        context.breakers?.succeeded(candidate.provider);
        ended("upstream_error", undefined, status);
        throw verdict.error;
      }
      if (verdict.kind === "final") {
        // It answered, too much: not retried or sent elsewhere (it was produced, and it costs).
        context.breakers?.succeeded(candidate.provider);
        context.onFailedAttempt?.(candidate.provider, verdict.reason);
        ended("failed", cause, status);
        throw verdict.error;
      }
      context.breakers?.failed(candidate.provider, admission, verdict.reason, settings);
      context.onFailedAttempt?.(candidate.provider, verdict.reason);
      ended("failed", cause, status);
      failures.push(`${candidate.provider}: ${verdict.reason}`);
      if (verdict.kind !== "timeout") timeoutsOnly = false;
      if (verdict.kind === "next" || retry >= settings.retries) break;
      const wait = verdict.retryAfterMs ?? backoff(settings.retryBaseDelayMs, retry);
      if (wait > settings.maxRetryAfterMs) break;
      if (performance.now() - started + wait >= settings.totalTimeoutMs) {
        // No time for this retry; the next candidate may still answer at once.
        outOfTime = settings.totalTimeoutMs;
        break;
      }
      await sleep(wait, context.signal);
    }
  }
  throw exhausted(failures, { timeoutsOnly, outOfTime, open });
}

function exhausted(
  failures: string[],
  how: { timeoutsOnly: boolean; outOfTime: number | undefined; open: Array<{ provider: string; retryInMs: number }> },
): UpstreamUnavailableError {
  const providers = new Set(failures.map((failure) => failure.slice(0, failure.indexOf(":"))));
  const provider = providers.size === 1 ? [...providers][0] : undefined;
  if (how.outOfTime !== undefined) {
    return new UpstreamUnavailableError(`The upstream attempts used up the request's total time of ${how.outOfTime} ms.`, {
      status: 504,
      code: "upstream_timeout",
      provider,
      failures,
    });
  }
  if (how.open.length > 0 && how.open.length === failures.length) {
    // Every candidate was skipped: say which provider is failing and when it is tried again.
    const soonest = Math.min(...how.open.map((entry) => entry.retryInMs));
    const names = how.open.map((entry) => entry.provider).join(", ");
    const error = new UpstreamUnavailableError(
      `The upstream provider ${names} is failing and is not being called (circuit open); it is tried again in ${Math.ceil(soonest / 1000)} s.`,
      {
        status: 503,
        code: "upstream_circuit_open",
        provider,
      },
    );
    error.headers = { "retry-after": String(Math.max(1, Math.ceil(soonest / 1000))) };
    return error;
  }
  return new UpstreamUnavailableError(how.timeoutsOnly ? "The upstream did not answer in time." : "No upstream could serve this request.", {
    status: how.timeoutsOnly ? 504 : 502,
    code: how.timeoutsOnly ? "upstream_timeout" : "upstream_unavailable",
    provider,
    failures,
  });
}

type Verdict =
  | { kind: "retry" | "timeout"; reason: string; retryAfterMs?: number }
  | { kind: "next"; reason: string }
  | { kind: "passthrough"; error: UpstreamPassthroughError }
  | { kind: "final"; reason: string; error: UpstreamUnavailableError };

function judge(error: unknown, provider: string): Verdict {
  if (error instanceof UpstreamHttpError) {
    const { status } = error;
    if (isRetryableStatus(status)) return { kind: "retry", reason: `HTTP ${status}`, retryAfterMs: error.retryAfterMs };
    // The upstream refused our credentials: an operator problem, not the caller's; try elsewhere.
    if (status === 401 || status === 403) return { kind: "next", reason: `HTTP ${status} (check the provider's apiKey)` };
    // A bare 404/405 (no vendor error envelope) is an endpoint the upstream does not have, not an
    // answer about the caller's request: passing it through would read as gw lacking the path.
    if ((status === 404 || status === 405) && !isVendorErrorEnvelope(error.vendorBody ?? error.body)) {
      const asked = error.request ? `${error.request.method} ${error.request.path}` : "this endpoint";
      return { kind: "next", reason: `HTTP ${status}: the upstream has no ${asked}` };
    }
    return { kind: "passthrough", error: new UpstreamPassthroughError(status, error.body, error.contentType, error.provider, error.vendorBody) };
  }
  if (error instanceof UpstreamNetworkError) {
    if (error.failure === "answer_too_large") return { kind: "final", reason: error.detail, error: answerTooLarge(error) };
    // A malformed answer is the upstream's fault, like a 5xx: retried, then the next route.
    const reason = error.failure === "invalid_response" ? `invalid response (${error.detail})` : error.detail;
    return { kind: isTimeoutFailure(error.failure) ? "timeout" : "retry", reason };
  }
  if (error instanceof UnsupportedContentError) {
    // Content this vendor cannot take (an image by URL for Gemini ...): the caller's to fix.
    throw new InvalidRequestError(`${error.message} (provider ${provider})`, { param: error.param, provider, code: error.code });
  }
  throw error;
}

/** 502 naming the cap and the provider; `cause` keeps the provider's failure (billing reads it). */
export function answerTooLarge(error: UpstreamNetworkError): UpstreamUnavailableError {
  const refusal = new UpstreamUnavailableError(`The upstream's answer was too large: ${error.detail}.`, {
    status: 502,
    code: "upstream_answer_too_large",
    provider: error.provider,
  });
  refusal.cause = error;
  return refusal;
}

function backoff(base: number, retry: number): number {
  return Math.round(base * 2 ** retry * (0.75 + Math.random() * 0.5));
}

/** Wait before a retry; a client gone meanwhile ends the wait with the signal's reason, as it ends an attempt. */
async function sleep(milliseconds: number, signal: AbortSignal): Promise<void> {
  try {
    await setTimeout(milliseconds, undefined, { signal });
  } catch (error) {
    // node:timers rejects with its own AbortError; callers see why the request was aborted.
    throw signal.aborted ? signal.reason : error;
  }
}

/** An error body in a vendor's own shape: OpenAI's and Gemini's `{error:{message}}`, Anthropic's `{type:"error"}`. */
function isVendorErrorEnvelope(body: string): boolean {
  try {
    const parsed = JSON.parse(body) as { type?: unknown; error?: { message?: unknown } | null };
    return parsed.type === "error" || (typeof parsed.error === "object" && parsed.error !== null && typeof parsed.error.message === "string");
  } catch {
    return false;
  }
}
