import type { z } from "zod";

/** A config that cannot be used; `path` is the JSON path of the offending field. */
export class ConfigError extends Error {
  constructor(
    message: string,
    readonly file: string,
    readonly path: string = "",
  ) {
    super(path ? `${file}: ${path}: ${message}` : `${file}: ${message}`);
    this.name = "ConfigError";
  }

  static fromZod(error: z.ZodError, file: string): ConfigError {
    const issue = error.issues[0];
    if (!issue) return new ConfigError("invalid config", file);
    return new ConfigError(issue.message, file, formatJsonPath(issue.path));
  }
}

export function formatJsonPath(segments: ReadonlyArray<PropertyKey>): string {
  let out = "";
  for (const segment of segments) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out ? `.${String(segment)}` : String(segment);
  }
  return out;
}
