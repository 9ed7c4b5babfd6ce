// A failure of the shared state store (Redis) as the request path sees it: the part of the state
// and a short reason, never the server's address or password. The renderer answers it as 503
// state_unavailable with Retry-After (docs/decisions.md §2); the log has the cause in full. A
// request that cannot reach the ledger is refused, never served unbilled.

export class StateStoreFailure extends Error {
  constructor(
    /** `Redis credits.hold: no answer in time`, `Redis metadata.mutate: not connected` ... */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`the state store failed: ${reason}`, options);
    this.name = "StateStoreFailure";
  }
}

/**
 * An error reply from Redis (OOM, READONLY, NOSCRIPT ...): ioredis's ReplyError, known by its name
 * so that the embedded state, which never talks to Redis, does not load ioredis for an instanceof.
 */
function isReplyError(error: Error): boolean {
  return error.name === "ReplyError";
}

/** The messages ioredis rejects a command with when Redis is down, hung or gone (its own errors carry no class). */
const CONNECTION_FAILURE = /^(Command timed out|Connection is closed\.|Stream isn't writeable|Reached the max retries per request limit)/;
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "ENOENT", "EHOSTUNREACH"]);

/** Whether an error is Redis failing (unreachable, hung, refusing with an error reply), not the store's own refusal. */
export function isRedisFailure(error: unknown): error is Error {
  if (!(error instanceof Error)) return false;
  if (isReplyError(error)) return true;
  const code = (error as NodeJS.ErrnoException).code;
  return CONNECTION_FAILURE.test(error.message) || (code !== undefined && NETWORK_CODES.has(code));
}

/**
 * The store with Redis failing, in every method that returns a promise, turned into a
 * StateStoreFailure naming `component.method`: one place makes every Redis-backed port fail the same way, whatever its
 * implementation calls. Properties and methods that return no promise pass through.
 */
export function reportingRedisFailures<T extends object>(store: T, component: string): T {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== "function" || typeof property !== "string") return value;
      return (...args: unknown[]) => {
        const result: unknown = Reflect.apply(value, target, args);
        if (!(result instanceof Promise)) return result;
        return result.catch((error: unknown) => {
          throw isRedisFailure(error) ? new StateStoreFailure(`Redis ${component}.${property}: ${shortReason(error)}`, { cause: error }) : error;
        });
      };
    },
  });
}

function shortReason(error: Error): string {
  if (isReplyError(error)) {
    // A Redis error reply starts with its code (OOM, READONLY, MISCONF, NOSCRIPT ...): the code says enough.
    const code = /^([A-Z]{3,})\b/.exec(error.message)?.[1];
    return code ? `Redis answered ${code}` : "Redis answered an error";
  }
  return /timed out/i.test(error.message) ? "no answer in time" : "not connected";
}
