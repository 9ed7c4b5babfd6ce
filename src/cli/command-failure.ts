// How a failed command is told, in one place for the oclif commands (gw-command.ts) and the start-up
// fast path (fast-path.ts), which must fail alike: the message alone on stderr (the stack under
// DEBUG), exit 2 for a command line wrong in itself, 1 for a failure while running
// (docs/decisions.md §17). Imports nothing from oclif, so the fast path stays light.
import { StoreError } from "../store/store-error.js";

export interface CommandFailure extends Error {
  exitCode?: number;
  oclif?: { exit?: number | false };
}

/** The text a command prints for `error`: store errors have a wording meant for commands, the rest their message. */
export function failureText(error: CommandFailure): string {
  return error instanceof StoreError ? error.commandMessage : error.message;
}

/** Print `text` (default: failureText) on stderr and set the exit status. */
export function reportFailure(error: CommandFailure, text: string = failureText(error)): void {
  const message = process.env.DEBUG && error.stack ? error.stack : text || String(error);
  process.stderr.write(`${message.replace(/\n+$/, "")}\n`);
  process.exitCode = error.oclif?.exit || error.exitCode || 1;
}
