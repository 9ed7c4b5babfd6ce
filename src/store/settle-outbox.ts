// Usage rows that could not reach Redis when their call ended. A call's hold is taken before the
// upstream is called, so a Redis that fails afterwards must not let the answer (a stream already
// relayed, say) go unbilled: its row is appended to a local file, synced, and settled again in
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
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly shared: CreditStore,
    private readonly file: string,
    private readonly log: { warn(message: string): void; info(message: string): void },
  ) {
    this.timer = setInterval(() => void this.replay(), REPLAY_EVERY_MS);
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

  async settle(hold: CreditHold | null, row: UsageRow): Promise<void> {
    try {
      await this.shared.settle(hold, row);
    } catch (error) {
      if (!(error instanceof StateStoreFailure)) throw error;
      this.append({ hold, row });
      this.log.warn(`usage row ${row.id} kept in ${this.file} until the state store answers (${error.reason})`);
    }
  }

  /** Settle what waits, oldest first, until the store fails again; the rows settled leave the file. */
  replay(): Promise<void> {
    this.replaying ??= this.replayOnce().finally(() => {
      this.replaying = null;
    });
    return this.replaying;
  }

  close(): void {
    clearInterval(this.timer);
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
