// One metered call to a tool model's provider (image, audio): the estimate reserved from the
// caller's credits (402 before any upstream call), the provider called with the upstream retries
// and circuit breakers of chat, the reservation released when it fails, except when the answer
// passed its size cap: it was produced, and paid for, upstream, so the call is billed what it
// held, as chat's is (docs/decisions.md §3). The caller settles the reservation to what was produced.
import { type PlanLimits, upstreamSettingsFor } from "../config/config-schema.js";
import type { Config } from "../config/resolved-config.js";
import type { Provider } from "../providers/provider.js";
import type { Caller } from "./auth/key-authenticator.js";
import { assertKeyAllowsModel } from "./auth/key-limits.js";
import type { CreditLedger, Reservation } from "./billing/credit-ledger.js";
import { AnswerSizeWatch } from "./chat/answer-size-watch.js";
import { type AttemptContext, attemptInOrder } from "./chat/upstream-attempts.js";

/** Who calls a tool endpoint, under which plan, for which request. */
export interface ToolCallContext {
  caller: Caller;
  planName: string;
  plan: PlanLimits;
  requestId: string;
  signal: AbortSignal;
}

/** A catalog model: the public id, the provider's name and the vendor's model id. */
export interface ToolModel {
  id: string;
  provider: string;
  model: string;
}

export interface ToolCallDependencies {
  config: () => Config;
  providers: () => ReadonlyMap<string, Provider>;
  ledger: CreditLedger;
  /** The server's log, for each failed upstream attempt. */
  warn?: (message: string) => void;
  /** Told of each upstream attempt (the access log's provider and attempts). */
  attempted?: (requestId: string, provider: string) => void;
  /** Told as each attempt ends (the server's metrics). */
  attemptEnded?: AttemptContext["onAttemptEnd"];
}

export interface ReservedResult<Result> {
  result: Result;
  upstreamMs: number;
  reservation: Reservation;
}

export async function callToolProvider<Result>(
  dependencies: ToolCallDependencies,
  model: ToolModel,
  context: ToolCallContext,
  call: {
    estimate: number;
    supports: (provider: Provider) => boolean;
    run: (provider: Provider) => Promise<Result>;
    /** The usage row's endpoint and units when the answer is cut at its size cap and billed what was held. */
    cut: { endpoint: string; units: Record<string, number> };
  },
): Promise<ReservedResult<Result>> {
  const config = dependencies.config();
  assertKeyAllowsModel(context.caller.key, model.id);
  const reservation = dependencies.ledger.reserve(context, call.estimate);
  const size = new AnswerSizeWatch();
  try {
    const started = performance.now();
    const attempt = await attemptInOrder(
      {
        candidates: [{ provider: model.provider, upstreamModel: model.model, publicModel: model.id }],
        providers: dependencies.providers(),
        settings: (name: string) => upstreamSettingsFor(config, name),
        signal: context.signal,
        supports: call.supports,
        onAttempt: dependencies.attempted && ((provider) => dependencies.attempted!(context.requestId, provider)),
        onAttemptEnd: dependencies.attemptEnded,
        onFailedAttempt: (provider, cause) => dependencies.warn?.(`${context.requestId} upstream attempt failed: provider ${provider}: ${cause}`),
      },
      size.watch(({ provider }) => call.run(provider)),
    );
    return { result: attempt.result, upstreamMs: Math.round(performance.now() - started), reservation };
  } catch (error) {
    if (!size.tooLarge) {
      dependencies.ledger.release(reservation);
      throw error;
    }
    await dependencies.ledger.settle(reservation, {
      agent: context.caller.agent.id,
      keyPrefix: context.caller.key.prefix,
      endpoint: call.cut.endpoint,
      model: model.id,
      provider: model.provider,
      units: call.cut.units,
      credits: reservation.amount,
      requestId: context.requestId,
    });
    throw error;
  }
}

/**
 * 402 early, before inputs are downloaded or read, when the caller cannot pay even this
 * estimate; the reservation in callToolProvider still decides.
 */
export function requireCredits(ledger: CreditLedger, context: ToolCallContext, estimate: number): void {
  ledger.requireAvailable(context, estimate);
}

/** Settle or release: anything that fails between the call and the usage row must not leave the reservation behind. */
export async function releasingOnError<T>(ledger: CreditLedger, reservation: Reservation, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    ledger.release(reservation);
    throw error;
  }
}
