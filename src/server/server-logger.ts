// Server logs go to stderr (stdout's first line belongs to `listening on ...`).
// Never log request bodies or headers: they carry keys and user content.
export interface ServerLogger {
  info(message: string): void;
  warn(message: string): void;
  error(error: unknown, requestId?: string): void;
}

export function stderrLogger(): ServerLogger {
  const write = (level: string, message: string) => process.stderr.write(`${new Date().toISOString()} ${level} ${message}\n`);
  return {
    info: (message) => write("info", message),
    warn: (message) => write("warn", message),
    error: (error, requestId) => write("error", `${requestId ? `${requestId} ` : ""}${error instanceof Error ? (error.stack ?? error.message) : String(error)}`),
  };
}
