// What each request was charged (docs/decisions.md §24): the credits of the usage rows it wrote,
// tallied by request id while the request is answered. The ledger tells every row it writes to the
// server's observers (call-observers.ts) before the service that settled it returns, so once a
// route's work has ended its tally is whole: the answer carries it in the `x-gw-credits` header,
// and the chat-style routes also in their body's `usage.gw_credits`. One Map set and delete per
// metered request, no async context.
//
// A request that wrote no row (refused before any hold, or an endpoint that bills nothing) gets no
// header; one that failed after writing rows (a web search billed, then the model's 402) gets it
// on its error. A stream's rows are written after its headers went out: a streamed answer has no
// header, and a row written after the route returned is not tallied.
import type { H3Event } from "h3";
import type { CallObserver } from "../gateway/upstream-calls/call-observer.js";
import type { UsageRow } from "../store/usage-log.js";
import { requestIdOf } from "./request-context.js";

export const CREDITS_HEADER = "x-gw-credits";

/** One request's tally so far. */
export class RequestCharge {
  rows = 0;
  credits = 0;
  /** The route answered with a stream: its headers went out before its rows were written. */
  streamed = false;
}

export class RequestCharges implements CallObserver {
  private readonly open = new Map<string, RequestCharge>();

  /**
   * An h3 handler whose request's rows are tallied while it runs; its answer, or its error,
   * carries `x-gw-credits` when it wrote any row and did not stream.
   */
  counted<Answer>(handler: (event: H3Event, charge: RequestCharge) => Promise<Answer>): (event: H3Event) => Promise<Answer> {
    return async (event) => {
      const requestId = requestIdOf(event);
      const charge = new RequestCharge();
      this.open.set(requestId, charge);
      try {
        return await handler(event, charge);
      } finally {
        this.open.delete(requestId);
        if (charge.rows > 0 && !charge.streamed) event.res.headers.set(CREDITS_HEADER, String(charge.credits));
      }
    };
  }

  attempted(): void {}

  billed(row: UsageRow): void {
    const charge = this.open.get(row.requestId);
    if (!charge) return;
    charge.rows += 1;
    charge.credits += row.credits;
  }
}
