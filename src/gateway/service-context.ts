// What every domain service is given, once, by the gateway: the config and the providers as they
// are now (both follow reloads), billing (the credit ledger and the credit store behind it),
// plans, the agents' storage and picture library, the SSRF-safe fetcher, routing health, clocks,
// the log and the observer. A service that needs more (another service, a job store) takes that
// one thing beside it. The state that instances share (reservations, usage totals) sits behind
// the ledger's store (store/credit-store.ts).
import type { Config } from "../config/resolved-config.js";
import type { Provider } from "../providers/provider.js";
import type { PlanLookup } from "./auth/plan-lookup.js";
import type { CreditLedger } from "./billing/credit-ledger.js";
import type { ImageLibrary } from "./images/image-library.js";
import type { UrlFetcher } from "./media/picture-input.js";
import type { ModelsView } from "./models/tool-allowlist.js";
import type { CircuitBreakers } from "./routing/circuit-breaker.js";
import type { LatencyTracker } from "./routing/latency-tracker.js";
import type { StorageService } from "./storage/storage-service.js";
import type { CallObserver } from "./upstream-calls/call-observer.js";

export interface ServiceContext {
  /** The config now. */
  config: () => Config;
  /** The providers built from the config now. */
  providers: () => ReadonlyMap<string, Provider>;
  ledger: CreditLedger;
  plans: PlanLookup;
  storage: StorageService;
  library: ImageLibrary;
  /** How user-supplied URLs are fetched (SSRF-safe). */
  fetchUrl: UrlFetcher;
  /** One circuit per provider; chat-style calls skip an open one. */
  breakers: CircuitBreakers;
  /** Recent upstream latencies, for low-latency routing. */
  latency: LatencyTracker;
  /** Wall-clock milliseconds (tests move time by hand). */
  now: () => number;
  /** The server's log. */
  warn: (message: string) => void;
  /** Told of each upstream attempt and each usage row (the access log, the metrics). */
  observer?: CallObserver;
}

/** The config and providers now, as the catalogs read them. */
export function modelsView(context: Pick<ServiceContext, "config" | "providers">): ModelsView {
  return { config: context.config(), providers: context.providers() };
}
