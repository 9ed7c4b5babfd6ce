// One access line per request, written when its response is done (a stream's too, after its
// last frame and its usage row): request id, method, path (never the query: signed links carry
// their signature there), status, duration, the caller's agent and key prefix, and from the
// gateway the model, provider, attempts, units and credits billed.
import type { H3Event } from "h3";
import type { Caller } from "../gateway/auth/key-authenticator.js";
import type { CallObserver } from "../gateway/call-observer.js";
import type { UsageRow } from "../store/usage-log.js";
import { callerOf, nodeResponseOf } from "./request-context.js";
import type { AccessRecord, ServerLogger } from "./server-logger.js";

type CallFacts = Pick<AccessRecord, "model" | "provider" | "attempts" | "units" | "credits">;

export class AccessLog implements CallObserver {
  /** Requests in flight by id, for what the gateway reports of them. */
  private readonly calls = new Map<string, CallFacts>();

  constructor(private readonly logger: ServerLogger) {}

  /** Start timing a request; its line is written when its response closes. */
  begin(event: H3Event, requestId: string): void {
    const response = nodeResponseOf(event);
    if (!response || this.logger.accessEnabled === false) return;
    const started = performance.now();
    const facts: CallFacts = {};
    this.calls.set(requestId, facts);
    response.once("close", () => {
      this.calls.delete(requestId);
      const record: AccessRecord = {
        requestId,
        method: event.req.method,
        path: event.url.pathname,
        // A response the client abandoned before the server had produced all of it is logged as
        // such (nginx's 499); one fully produced whose last bytes were still being flushed is not.
        status: response.writableEnded ? response.statusCode : 499,
        durationMs: Math.round((performance.now() - started) * 10) / 10,
        ...callerFields(callerOf(event)),
        ...facts,
      };
      this.logger.access(record);
    });
  }

  attempted(requestId: string, provider: string): void {
    const facts = this.calls.get(requestId);
    if (!facts) return;
    facts.attempts = (facts.attempts ?? 0) + 1;
    facts.provider = provider;
  }

  billed(row: UsageRow): void {
    const facts = this.calls.get(row.requestId);
    if (!facts) return;
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
