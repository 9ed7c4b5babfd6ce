/** What a command's work gives back: its result (printed as JSON under --json) and how to draw it for people otherwise. */
export interface CommandOutcome<T> {
  result: T;
  view: () => unknown;
}
