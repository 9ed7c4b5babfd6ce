/**
 * The metadata or usage files cannot be trusted: the server refuses to start rather than reset
 * balances. The message is worded for the server's start; a command that only reads or edits the
 * store starts nothing, so it prints `commandMessage` (what is wrong, which file, how to recover).
 */
export class StoreError extends Error {
  readonly commandMessage: string;

  constructor(message: string, options: { commandMessage?: string } = {}) {
    super(message);
    this.name = "StoreError";
    this.commandMessage = options.commandMessage ?? withoutRefusalToStart(message);
  }
}

/** "X; refusing to start — restore it" -> "X: restore it", for errors given no wording of their own. */
function withoutRefusalToStart(message: string): string {
  return message.replace(/; refusing to start(?: — |$)/, (match) => (match.endsWith("— ") ? ": " : ""));
}
