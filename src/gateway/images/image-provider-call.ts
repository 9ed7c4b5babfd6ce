// One metered call to an image model's provider: the estimate reserved from the caller's credits
// (402 before any upstream call), the provider called with the upstream retries of chat, the
// reservation released when it fails. The caller settles the reservation to what was produced.
import type { ImageModelEntry } from "../../config/catalog-schema.js";
import type { Config } from "../../config/resolved-config.js";
import type { ImageResult } from "../../providers/image-types.js";
import type { Provider } from "../../providers/provider.js";
import type { CreditLedger, Reservation } from "../billing/credit-ledger.js";
import { attemptInOrder } from "../chat/upstream-attempts.js";
import type { ImageCallContext } from "./image-results.js";

export interface ImageCallDependencies {
  config: () => Config;
  providers: () => ReadonlyMap<string, Provider>;
  ledger: CreditLedger;
  /** The server's log, for each failed upstream attempt. */
  warn?: (message: string) => void;
}

export interface ReservedImageResult {
  result: ImageResult;
  upstreamMs: number;
  reservation: Reservation;
}

export async function callImageProvider(
  dependencies: ImageCallDependencies,
  model: ImageModelEntry,
  context: ImageCallContext,
  call: { estimate: number; supports: (provider: Provider) => boolean; run: (provider: Provider) => Promise<ImageResult> },
): Promise<ReservedImageResult> {
  const config = dependencies.config();
  const reservation = dependencies.ledger.reserve(context.caller.agent.id, context.plan.monthlyCredits, call.estimate);
  try {
    const started = performance.now();
    const attempt = await attemptInOrder(
      {
        candidates: [{ provider: model.provider, upstreamModel: model.model, publicModel: model.id }],
        providers: dependencies.providers(),
        settings: (name: string) => ({ ...config.upstream, ...config.providers[name]?.upstream }),
        signal: context.signal,
        supports: call.supports,
        onFailedAttempt: (provider, cause) => dependencies.warn?.(`${context.requestId} upstream attempt failed: provider ${provider}: ${cause}`),
      },
      ({ provider }) => call.run(provider),
    );
    return { result: attempt.result, upstreamMs: Math.round(performance.now() - started), reservation };
  } catch (error) {
    dependencies.ledger.release(reservation);
    throw error;
  }
}

/**
 * 402 early, before pictures are downloaded or read, when the caller cannot pay even this
 * estimate; the reservation in callImageProvider still decides.
 */
export function requireCredits(ledger: CreditLedger, context: ImageCallContext, estimate: number): void {
  ledger.requireAvailable(context.caller.agent.id, context.plan.monthlyCredits, estimate);
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
