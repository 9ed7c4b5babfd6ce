/** A failure the user can act on: printed as its message alone, with a non-zero exit. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = "CliError";
  }
}

/** Exit status of a command line that is wrong in itself (docs/decisions.md §17), as oclif's own parse errors. */
export const USAGE_EXIT = 2;

/**
 * The command line is wrong in itself, whatever the home or the gateway hold: a flag value of the
 * wrong form, flags that exclude each other, a missing argument. Exit 2; a failure while running
 * (a name the home does not have, a refused request, a file that cannot be read) stays a CliError, exit 1.
 */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, USAGE_EXIT);
    this.name = "UsageError";
  }
}
