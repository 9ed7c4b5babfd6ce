// Base of every gw command: the global --home flag, and errors printed as their message alone on
// stderr (also under --json, so stdout only ever carries the result) with a non-zero exit: 2 for a
// command line that is wrong in itself (oclif's parse errors, UsageError), 1 for a failure while
// running (docs/decisions.md §17). An unknown flag is answered with the closest known one.
// A command with `static enableJsonFlag = true` returns its result from run(): oclif prints it as
// JSON (two-space indented, one trailing newline) under --json, and `shown` draws it for people
// otherwise. Errors keep gw's form under --json too: catch() below replaces oclif's, which would
// print `{"error": ...}` on stdout.
import { Command, Errors } from "@oclif/core";
import { StoreError } from "../store/store-error.js";
import { type CommandFailure, reportFailure } from "./command-failure.js";
import { unknownFlagsOf, withFlagSuggestions } from "./flag-suggestion.js";
import { homeFlag } from "./flags.js";
import { exitQuietlyOnBrokenPipe } from "./output.js";

export abstract class GwCommand extends Command {
  static override baseFlags = { home: homeFlag };

  override async init(): Promise<void> {
    await super.init();
    exitQuietlyOnBrokenPipe();
  }

  /** The command's result: returned for oclif to print under --json, else drawn by `view` first. */
  protected async shown<T>(result: T, view: (result: T) => unknown): Promise<T> {
    if (!this.jsonEnabled()) await view(result);
    return result;
  }

  protected override async catch(error: CommandFailure): Promise<void> {
    if (error instanceof Errors.ExitError) throw error;
    // Parse errors from oclif carry their own help hints; everything else is the message alone
    // (store errors in the wording meant for commands: command-failure.ts).
    const unknownFlags = error instanceof StoreError ? undefined : unknownFlagsOf(error);
    reportFailure(error, unknownFlags ? withFlagSuggestions(error.message, unknownFlags, { ...this.ctor.baseFlags, ...this.ctor.flags }) : undefined);
  }
}
