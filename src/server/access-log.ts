// One access line per request, written when its response is done (a stream's too, after its
// last frame and its usage row): request id, method, path (never the query: signed links carry
// their signature there), status, duration, the caller's agent and key prefix, and from the
// gateway the model, provider, attempts, units and credits billed. The same starts and ends, and
// what the gateway reports, feed the server's metrics (metrics.ts), also when access lines are off.
import type { H3Event } from "h3";
import type { Caller } from "../gateway/auth/key-authenticator.js";
import type { AttemptOutcome, FailureCause } from "../gateway/upstream-calls/attempt-outcome.js";
import type { BatchLineEnd, CallObserver } from "../gateway/upstream-calls/call-observer.js";
import type { UsageRow } from "../store/usage-log.js";
import { RecentRequests } from "./admin/recent-requests.js";
import { routeLabel, type ServerMetrics } from "./metrics.js";
import { callerOf, nodeResponseOf } from "./request-context.js";
import type { AccessRecord, ServerLogger } from "./server-logger.js";

type CallFacts = Pick<AccessRecord, "model" | "provider" | "attempts" | "units" | "credits" | "cache">;

export class AccessLog implements CallObserver {
  /** Requests in flight by id, for what the gateway reports of them. */
  private readonly calls = new Map<string, CallFacts>();
  /** The last requests' records, for the console (admin/recent-requests.ts). */
  readonly recent = new RecentRequests();

  constructor(
    private readonly logger: ServerLogger,
    private readonly metrics?: ServerMetrics,
  ) {}

  /** Start timing a request; its line is written when its response closes. */
  begin(event: H3Event, requestId: string): void {
    const response = nodeResponseOf(event);
    const logging = this.logger.accessEnabled !== false;
    if (!response || (!logging && !this.metrics)) return;
    const started = performance.now();
    const facts: CallFacts | undefined = logging ? {} : undefined;
    if (facts) this.calls.set(requestId, facts);
    this.metrics?.requestBegan(response);
    response.once("close", () => {
      // A response the client abandoned before the server had produced all of it is logged as
      // such (nginx's 499); one fully produced whose last bytes were still being flushed is not.
      const status = response.writableEnded ? response.statusCode : 499;
      const elapsed = performance.now() - started;
      this.metrics?.requestEnded(response, event.req.method, routeLabel(event), status, elapsed);
      if (!facts) return;
      this.calls.delete(requestId);
      const record: AccessRecord = {
        requestId,
        method: event.req.method,
        path: event.url.pathname,
        status,
        durationMs: Math.round(elapsed * 10) / 10,
        ...callerFields(callerOf(event)),
        ...facts,
      };
      this.logger.access(record);
      this.recent.add(record);
    });
  }

  attempted(requestId: string, provider: string): void {
    this.metrics?.attempted(provider);
    const facts = this.calls.get(requestId);
    if (!facts) return;
    facts.attempts = (facts.attempts ?? 0) + 1;
    facts.provider = provider;
  }

  attemptEnded(provider: string, outcome: AttemptOutcome, durationMs: number, cause?: FailureCause): void {
    this.metrics?.attemptEnded(provider, outcome, durationMs, cause);
  }

  batchLineBegan(requestId: string): void {
    if (this.logger.accessEnabled !== false) this.calls.set(requestId, {});
  }

  batchLineEnded(line: BatchLineEnd): void {
    const facts = this.calls.get(line.requestId);
    if (!facts) return;
    this.calls.delete(line.requestId);
    const { requestId, endpoint, status, durationMs, agent, keyPrefix } = line;
    this.logger.access({ requestId, method: "BATCH", path: endpoint, status, durationMs: Math.round(durationMs * 10) / 10, agent, keyPrefix, ...facts });
  }

  cacheMissed(requestId: string, endpoint: string): void {
    this.metrics?.cacheMissed(endpoint);
    const facts = this.calls.get(requestId);
    if (facts) facts.cache = "miss";
  }

  billed(row: UsageRow): void {
    this.metrics?.billed(row);
    const facts = this.calls.get(row.requestId);
    if (!facts) return;
    if (row.cached) facts.cache = "hit";
    facts.model = row.model;
    facts.provider = row.provider;
    facts.credits = (facts.credits ?? 0) + row.credits;
    facts.units ??= {};
    const units = facts.units;
    for (const [name, count] of Object.entries(row.units)) units[name] = (units[name] ?? 0) + count;
  }
}

function callerFields(caller: Caller | undefined): Pick<AccessRecord, "agent" | "keyPrefix"> {
  return caller ? { agent: caller.agent.name, keyPrefix: caller.key.prefix } : {};
}
