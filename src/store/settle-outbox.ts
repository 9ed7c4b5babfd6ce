// How a call's usage row reaches Redis. The settle is sent as the answer leaves, and the answer
// does not wait for Redis to confirm it ("settle-behind"): a request on Redis costs one round trip
// of latency (its hold), not two (docs/decisions.md §21). A Redis that fails afterwards must not
// let the answer go unbilled: the row is appended to a local file, synced, and settled again in
// Redis once it answers. The Redis settle writes a row id once and releases a hold once, so a
// settle whose reply was lost (it may have run) and its replay bill once. The file is this
// instance's only state of its own: it belongs on a persistent volume (docs/decisions.md §21).
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from "node:fs";
import { writeFileAtomic } from "./atomic-write.js";
import type { CreditAccount, CreditBalance, CreditHold, CreditStore, HoldOutcome } from "./credit-store.js";
import type { RateTake } from "./rate-buckets.js";
import { StateStoreFailure } from "./state-failure.js";
import type { UsageRow } from "./usage-log.js";

interface PendingSettle {
  hold: CreditHold | null;
  row: UsageRow;
}

/** How often rows waiting in the outbox are tried again. */
const REPLAY_EVERY_MS = 2000;

export class SettleOutbox implements CreditStore {
  private replaying: Promise<void> | null = null;
  /** Settles sent and not yet confirmed: closing waits for them. */
  private readonly unconfirmed = new Set<Promise<void>>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly shared: CreditStore,
    private readonly file: string,
    private readonly log: { warn(message: string): void; info(message: string): void },
  ) {
    // A replay that fails (the outbox cannot be rewritten: a full disk) is told and tried again; a
    // rejection left unhandled would end the process.
    this.timer = setInterval(() => {
      this.replay().catch((error: unknown) => this.log.warn(`usage rows in ${this.file}: replaying them failed: ${String(error)}`));
    }, REPLAY_EVERY_MS);
    this.timer.unref();
  }

  /** Rows waiting to reach the shared store (left by a crash, too). */
  pending(): PendingSettle[] {
    if (!existsSync(this.file)) return [];
    return readFileSync(this.file, "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as PendingSettle];
        } catch {
          return []; // a line torn by a crash mid-append: its call was never answered as billed
        }
      });
  }

  /**
   * Send the row's settle and resolve at once: the command leaves in the same event-loop turn as
   * the caller's answer, and its outcome is handled here. A store that fails keeps the row in the
   * file; a refusal that is not the store failing (retrying cannot bill it) gives the hold back.
   */
  settle(hold: CreditHold | null, row: UsageRow): Promise<void> {
    const sent = this.shared.settle(hold, row).catch((error: unknown) => {
      if (error instanceof StateStoreFailure) {
        try {
          this.append({ hold, row });
          this.log.warn(`usage row ${row.id} of request ${row.requestId} kept in ${this.file} until the state store answers (${error.reason})`);
        } catch (appendError) {
          this.log.warn(`usage row ${JSON.stringify(row)} neither reached the state store (${error.reason}) nor ${this.file} (${String(appendError)})`);
        }
        return;
      }
      this.log.warn(`usage row ${JSON.stringify(row)} refused by the state store, not billed: ${String(error)}`);
      if (hold) this.shared.release(hold).catch(() => undefined); // else its lease returns the credits
    });
    this.unconfirmed.add(sent);
    void sent.finally(() => this.unconfirmed.delete(sent));
    return Promise.resolve();
  }

  /** Resolves once every settle sent so far is confirmed or kept in the file. */
  async confirmed(): Promise<void> {
    while (this.unconfirmed.size > 0) await Promise.all(this.unconfirmed);
  }

  /** Settle what waits, oldest first, until the store fails again; the rows settled leave the file. */
  replay(): Promise<void> {
    this.replaying ??= this.replayOnce().finally(() => {
      this.replaying = null;
    });
    return this.replaying;
  }

  /** Stop replaying, once the settles in flight are confirmed or kept. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.confirmed();
  }

  hold(account: CreditAccount, want: number, atLeast: number, period: string, take?: RateTake): Promise<HoldOutcome> {
    return this.shared.hold(account, want, atLeast, period, take);
  }

  release(hold: CreditHold): Promise<void> {
    return this.shared.release(hold);
  }

  keep(name: string, hold: CreditHold): Promise<void> {
    return this.shared.keep(name, hold);
  }

  keepUnchecked(name: string, agentId: string, amount: number, keyPrefix?: string): Promise<CreditHold> {
    return this.shared.keepUnchecked(name, agentId, amount, keyPrefix);
  }

  kept(name: string): Promise<CreditHold | undefined> {
    return this.shared.kept(name);
  }

  balance(account: CreditAccount, period: string): Promise<CreditBalance> {
    return this.shared.balance(account, period);
  }

  async hasRow(rowId: string, periods: readonly string[]): Promise<boolean> {
    return this.pending().some((entry) => entry.row.id === rowId) || this.shared.hasRow(rowId, periods);
  }

  private async replayOnce(): Promise<void> {
    const waiting = this.pending();
    if (waiting.length === 0) return;
    let settled = 0;
    for (const entry of waiting) {
      try {
        await this.shared.settle(entry.hold, entry.row);
        settled += 1;
      } catch (error) {
        if (error instanceof StateStoreFailure) break; // still down: the rest waits for the next try
        // Refused for good (not the store failing): retrying cannot bill it; the log keeps the row.
        this.log.warn(`usage row ${JSON.stringify(entry.row)} in ${this.file} refused by the state store, dropped: ${String(error)}`);
        settled += 1;
      }
    }
    if (settled === 0) return;
    // Rows appended while this ran stay: the file is rewritten from what it holds now.
    const left = this.pending().filter((entry) => !waiting.slice(0, settled).some((done) => done.row.id === entry.row.id));
    writeFileAtomic(this.file, left.map((entry) => `${JSON.stringify(entry)}\n`).join(""));
    this.log.info(`${settled} usage row(s) from ${this.file} reached the state store; ${left.length} left`);
  }

  private append(entry: PendingSettle): void {
    const descriptor = openSync(this.file, "a", 0o600);
    try {
      writeSync(descriptor, `${JSON.stringify(entry)}\n`);
      fsyncSync(descriptor);
    } finally {
      closeSync(descriptor);
    }
  }
}
