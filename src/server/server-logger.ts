// The server's log, pino underneath: JSON lines (one object per line) when stderr is not a
// terminal, readable single lines when it is; `gw serve --log-level / --log-format` choose. Logs
// go to stderr: stdout's first line belongs to `listening on ...`. One access line per request.
// Never log request bodies, full keys or upstream keys: fields here are ids, prefixes and counts.
import pino, { type Logger } from "pino";
import type PinoPretty from "pino-pretty";
import { onFirstUse } from "../load/on-first-use.js";

/** What the access line says of one request. */
export interface AccessRecord {
  requestId: string;
  method: string;
  path: string;
  status: number;
  durationMs: number;
  agent?: string;
  keyPrefix?: string;
  model?: string;
  provider?: string;
  attempts?: number;
  /** Units billed (prompt_tokens, completion_tokens, images ...), summed over the request's usage rows. */
  units?: Record<string, number>;
  credits?: number;
  /** Whether the response cache answered (hit) or was asked and had nothing (miss); absent when it was not asked. */
  cache?: "hit" | "miss";
}

export interface ServerLogger {
  info(message: string): void;
  warn(message: string): void;
  error(error: unknown, requestId?: string): void;
  access(record: AccessRecord): void;
  /** False when the level leaves access lines out: nothing is gathered for them then. */
  accessEnabled?: boolean;
  /** Write out what is buffered (before the process exits). */
  flush?(): void;
}

export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export type LogFormat = "json" | "pretty";

export interface LoggerOptions {
  level?: LogLevel;
  /** Default: pretty on a terminal, json otherwise. */
  format?: LogFormat;
}

export function createServerLogger(options: LoggerOptions = {}): ServerLogger {
  const format = options.format ?? (process.stderr.isTTY ? "pretty" : "json");
  const settings = { level: options.level ?? "info", base: undefined, timestamp: pino.stdTimeFunctions.isoTime };
  if (format === "pretty") {
    const logger = pino(
      settings,
      loadPretty()({
        destination: 2,
        sync: true,
        singleLine: true,
        colorize: Boolean(process.stderr.isTTY),
        translateTime: "SYS:HH:MM:ss.l",
        // Already in the access line's message.
        ignore: "method,path,status,durationMs",
      }),
    );
    return loggerOf(logger, () => logger.flush());
  }
  // Lines are gathered up to 4 KB a write (a write per line cost 7 µs of a chat request's ~100) and
  // written at least every 100 ms, so a quiet server's lines still show at once.
  const destination = pino.destination({ dest: 2, sync: false, minLength: 4096 });
  setInterval(() => destination.flush(), FLUSH_INTERVAL_MS).unref();
  return loggerOf(pino(settings, destination), () => destination.flushSync());
}

const FLUSH_INTERVAL_MS = 100;

/** Required for a terminal's log only: a server logging JSON never loads pino-pretty (~10 MB). */
const loadPretty = onFirstUse<typeof PinoPretty>("pino-pretty");

function loggerOf(logger: Logger, flush: () => void): ServerLogger {
  return {
    info: (message) => logger.info(message),
    warn: (message) => logger.warn(message),
    error: (error, requestId) => logger.error({ err: error, requestId }, error instanceof Error ? error.message : String(error)),
    access: (record) => logger.info(record, `${record.method} ${record.path} ${record.status} ${record.durationMs}ms`),
    accessEnabled: logger.isLevelEnabled("info"),
    flush,
  };
}
