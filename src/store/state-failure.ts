// A failure of the shared state store (Redis) as the request path sees it: the operation that
// failed and a short reason, never the server's address or password. The renderer answers it as
// 503 state_unavailable with Retry-After (docs/decisions.md §2); the log has the cause in full.
// A request that cannot reach the ledger is refused, never served unbilled.

export class StateStoreFailure extends Error {
  constructor(
    /** `Redis hold: no answer within 1500 ms`, `Redis settle: connection refused` ... */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`the state store failed: ${reason}`, options);
    this.name = "StateStoreFailure";
  }
}

/**
 * Run one operation against Redis; whatever Redis does wrong (down, hung past the command
 * timeout, out of memory, read-only, a script error) becomes a StateStoreFailure naming the
 * operation. Errors the store raised itself before calling Redis (a refused row) pass unchanged.
 */
export async function redisCall<T>(operation: string, work: () => Promise<T>, ownErrors: (error: unknown) => boolean = () => false): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof StateStoreFailure || ownErrors(error)) throw error;
    throw new StateStoreFailure(`Redis ${operation}: ${shortReason(error)}`, { cause: error });
  }
}

function shortReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  if (/timed out/i.test(message)) return "no answer in time";
  if (/enableOfflineQueue|Connection is closed|Stream isn't writeable|ECONNREFUSED|ENOENT|EPIPE|ECONNRESET/i.test(message)) return "not connected";
  // A Redis reply error starts with its code (OOM, READONLY, MISCONF, NOSCRIPT ...): the code says enough.
  const code = /^([A-Z]{3,})\b/.exec(message)?.[1];
  return code ? `Redis answered ${code}` : "failed";
}
