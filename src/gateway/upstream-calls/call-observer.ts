// What the server's access log learns of a request from the gateway, which knows nothing of HTTP:
// which upstream it tried, and each usage row it wrote. Told synchronously; never on the way of a
// call (an observer that throws is a bug of the observer, not of the call).
import type { UsageRow } from "../../store/usage-log.js";
import type { RouteCandidate } from "../routing/route-resolver.js";
import type { AttemptOutcome, FailureCause } from "./attempt-outcome.js";

export interface CallObserver {
  /**
   * An attempt of the request's upstream call began on this provider; `candidate` says which
   * model it asks for (every attempt but a web search's, whose providers take no model).
   */
  attempted(requestId: string, provider: string, candidate?: RouteCandidate): void;
  /** A usage row of the request was written. */
  billed(row: UsageRow): void;
  /** An attempt ended: how, in fixed words, after how long (the server's metrics), and whose (traces). */
  attemptEnded?(provider: string, outcome: AttemptOutcome, durationMs: number, cause: FailureCause | undefined, detail: AttemptDetail): void;
  /** The response cache had no answer for the request (a hit is a usage row marked `cached`). */
  cacheMissed?(requestId: string, endpoint: string): void;
  /** A batch's line began: what the gateway reports of it is gathered under its request id, as a request's is. */
  batchLineBegan?(requestId: string): void;
  /** A batch's line ended: the access log writes its line (method BATCH, the batch's endpoint as path). */
  batchLineEnded?(line: BatchLineEnd): void;
}

export interface AttemptDetail {
  requestId: string;
  /** The upstream's HTTP status, when it answered one that failed the attempt. */
  status?: number;
}

export interface BatchLineEnd {
  requestId: string;
  /** The batch's endpoint, e.g. /v1/chat/completions. */
  endpoint: string;
  /** The status its output or error line records. */
  status: number;
  durationMs: number;
  /** The agent's name and the key's prefix, when the key still stands for them. */
  agent?: string;
  keyPrefix?: string;
}
