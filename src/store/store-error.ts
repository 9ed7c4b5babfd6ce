/** The metadata or usage files cannot be trusted: the server refuses to start rather than reset balances. */
export class StoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StoreError";
  }
}
