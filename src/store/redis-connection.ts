// The Redis connection every shared state store uses, set up so that a Redis that is down or hung
// fails requests quickly instead of queueing them: no offline queue (a command while disconnected
// fails at once), a per-command timeout, no silent resend of a command whose reply was lost (a
// hold is not idempotent; its lease covers a lost reply), and reconnection in the background.
// The commands of one event-loop turn go out in one write (writeOncePerTurn), as the usage log
// writes the rows of one turn with one write.
import type { Socket } from "node:net";
import { Redis } from "ioredis";
import { StateStoreFailure } from "./state-failure.js";

export interface RedisSettings {
  url: string;
  /** Longest wait for one command's answer before the request fails with 503. */
  commandTimeoutMs: number;
}

/** Connect, or fail saying why within about the command timeout; the connection then reconnects by itself. */
export async function openRedis(settings: RedisSettings): Promise<Redis> {
  const redis = new Redis(settings.url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    commandTimeout: settings.commandTimeoutMs,
    connectTimeout: Math.max(1000, settings.commandTimeoutMs),
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy: (attempt) => Math.min(100 * attempt, 1000),
  });
  writeOncePerTurn(redis);
  // Errors reach the commands that fail; the connection's own events would only repeat them, except
  // while connecting, when connect() says only "Connection is closed." and the event says why.
  let connectionError: unknown;
  redis.on("error", (error) => {
    connectionError ??= error;
  });
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    redis.disconnect();
    const cause = connectionError ?? error;
    throw new StateStoreFailure(`Redis at ${redactedUrl(settings.url)} cannot be reached (${cause instanceof Error ? cause.message : String(cause)})`, {
      cause,
    });
  }
  return redis;
}

/**
 * Hold the socket's writes from the first command of an event-loop turn until the turn's I/O is
 * done (setImmediate), so the commands of every request answered in one turn leave in one write
 * and their replies come back together. Why not ioredis's enableAutoPipelining, which batches the
 * same way: it builds a Pipeline per turn and a promise and a tick per command, which on this
 * machine cost about 40 µs more per command at one request at a time and about 4 µs more of CPU
 * per command at 64 (scripts/bench-redis-client.mjs; docs/benchmarks.md, "The state on Redis").
 */
function writeOncePerTurn(redis: Redis): void {
  const send = redis.sendCommand.bind(redis);
  let corked: Socket | undefined;
  const uncork = () => {
    corked?.uncork();
    corked = undefined;
  };
  redis.sendCommand = (command, stream) => {
    const socket = redis.stream as Socket | undefined;
    if (corked === undefined && socket?.writable) {
      corked = socket;
      socket.cork();
      setImmediate(uncork);
    }
    return send(command, stream);
  };
}

/**
 * Where the Redis is, for messages and `gw doctor`, never its password: a URL's password masked
 * and its query dropped (ioredis reads `?password=` there too); a unix socket's path without its query.
 */
export function redactedUrl(url: string): string {
  if (url.startsWith("/")) return url.split("?")[0] ?? url;
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    parsed.search = "";
    parsed.hash = "";
    return parsed.toString();
  } catch {
    return "(an unparsable Redis URL)";
  }
}
