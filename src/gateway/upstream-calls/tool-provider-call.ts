// One metered call to a tool model's provider (image, audio): the estimate reserved from the
// caller's credits (402 before any upstream call), the provider called with the upstream retries
// of chat (not its circuit breakers, which count chat and messages calls only: docs/decisions.md
// §4), the reservation released when it fails, except when the answer
// passed its size cap: it was produced, and paid for, upstream, so the call is billed what it
// held, as chat's is (docs/decisions.md §3). The caller settles the reservation to what was produced.
import { type PlanLimits, upstreamSettingsFor } from "../../config/config-schema.js";
import type { Provider } from "../../providers/provider.js";
import type { Caller } from "../auth/key-authenticator.js";
import { assertKeyAllowsModel } from "../auth/key-limits.js";
import type { CreditLedger, Reservation } from "../billing/credit-ledger.js";
import { usageEntry } from "../billing/usage-entry.js";
import type { ServiceContext } from "../service-context.js";
import { AnswerSizeWatch } from "./answer-size-watch.js";
import { attemptInOrder, attemptReports } from "./upstream-attempts.js";

/** Who calls a tool endpoint, under which plan, for which request. */
export interface ToolCallContext {
  caller: Caller;
  planName: string;
  plan: PlanLimits;
  requestId: string;
  signal: AbortSignal;
  /** The request's tags, on its usage row (gateway/request-tags.ts). */
  tags?: readonly string[];
}

/** A catalog model: the public id, the provider's name and the vendor's model id. */
export interface ToolModel {
  id: string;
  provider: string;
  model: string;
}

export interface ReservedResult<Result> {
  result: Result;
  upstreamMs: number;
  reservation: Reservation;
}

export async function callToolProvider<Capability, Result>(
  shared: ServiceContext,
  model: ToolModel,
  context: ToolCallContext,
  call: {
    estimate: number;
    /** What of the provider the call uses (its speech, its image generation ...); none: the provider cannot serve it. */
    capability: (provider: Provider) => Capability | undefined;
    run: (capability: Capability) => Promise<Result>;
    /** The usage row's endpoint and units when the answer is cut at its size cap and billed what was held. */
    cut: { endpoint: string; units: Record<string, number> };
  },
): Promise<ReservedResult<Result>> {
  const config = shared.config();
  assertKeyAllowsModel(context.caller.key, model.id);
  const reservation = await shared.ledger.reserve(context, call.estimate);
  const size = new AnswerSizeWatch();
  try {
    const started = performance.now();
    const attempt = await attemptInOrder(
      {
        candidates: [{ provider: model.provider, upstreamModel: model.model, publicModel: model.id }],
        providers: shared.providers(),
        settings: (name: string) => upstreamSettingsFor(config, name),
        signal: context.signal,
        supports: (provider) => call.capability(provider) !== undefined,
        ...attemptReports(shared, context.requestId),
      },
      size.watch(({ provider }) => {
        const capability = call.capability(provider);
        // The attempts only pick providers it supports.
        if (capability === undefined) throw new Error(`provider ${provider.name} cannot serve this call`);
        return call.run(capability);
      }),
    );
    return { result: attempt.result, upstreamMs: Math.round(performance.now() - started), reservation };
  } catch (error) {
    if (!size.tooLarge) {
      shared.ledger.release(reservation);
      throw error;
    }
    await shared.ledger.settle(
      reservation,
      usageEntry(context, { endpoint: call.cut.endpoint, model: model.id, provider: model.provider, units: call.cut.units, credits: reservation.amount }),
    );
    throw error;
  }
}

/**
 * 402 early, before inputs are downloaded or read, when the caller cannot pay even this
 * estimate; the reservation in callToolProvider still decides.
 */
export function requireCredits(ledger: CreditLedger, context: ToolCallContext, estimate: number): Promise<void> {
  return ledger.requireAvailable(context, estimate);
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
