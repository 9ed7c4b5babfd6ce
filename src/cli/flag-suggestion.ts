// An unknown flag is answered with the flag it most likely meant (`--modle` -> `--model`), the way
// a mistyped command is (command-not-found-hook.ts).
import { closestName } from "../text/closest-name.js";

export interface KnownFlag {
  aliases?: string[];
  hidden?: boolean;
}

/** The flags as typed when `error` is oclif's "Nonexistent flag" parse error (a class oclif does not export). */
export function unknownFlagsOf(error: Error): string[] | undefined {
  const flags = (error as { flags?: unknown }).flags;
  if (!/^Nonexistent flags?:/.test(error.message) || !Array.isArray(flags)) return undefined;
  return flags.filter((flag): flag is string => typeof flag === "string");
}

/** The parse error's message with a "Did you mean --x?" line for each unknown flag that has a close known one. */
export function withFlagSuggestions(message: string, typed: readonly string[], known: Record<string, KnownFlag>): string {
  const names = Object.entries(known).flatMap(([name, flag]) => (flag.hidden ? [] : [name, ...(flag.aliases ?? [])]));
  const lines = typed.flatMap((flag) => {
    const guess = closestName(flag.replace(/^-+/, "").split("=")[0] ?? "", names);
    if (!guess) return [];
    return [typed.length === 1 ? `Did you mean --${guess}?` : `${flag}: did you mean --${guess}?`];
  });
  if (lines.length === 0) return message;
  // Before oclif's closing "See more help with --help" line, when it is there.
  const [first, ...rest] = message.split("\n");
  return [first, ...lines, ...rest].join("\n");
}
