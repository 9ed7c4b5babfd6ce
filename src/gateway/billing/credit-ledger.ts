// Credit balances per agent and period. Used credits come from the usage log's in-memory
// totals; in-flight requests hold reservations so a burst of parallel requests cannot spend
// more than the balance. A reservation settles to the real usage when the call ends.
import { randomUUID } from "node:crypto";
import { periodOf, type UsageLog, type UsageRow } from "../../store/usage-log.js";
import { InsufficientCreditsError } from "../errors.js";

export interface Reservation {
  agentId: string;
  amount: number;
  settled: boolean;
}

export type UsageEntry = Omit<UsageRow, "id" | "time">;

export class CreditLedger {
  private readonly reserved = new Map<string, number>();

  constructor(
    private readonly log: UsageLog,
    private readonly now: () => Date = () => new Date(),
    /** Told of every row once it is written (the access log). */
    private readonly onRecorded?: (row: UsageRow) => void,
  ) {}

  used(agentId: string): number {
    return this.log.creditsUsed(agentId, periodOf(this.now()));
  }

  remaining(agentId: string, allowance: number): number {
    return allowance - this.used(agentId) - (this.reserved.get(agentId) ?? 0);
  }

  /** Refuse with 402 unless `amount` credits are left (nothing is held). */
  requireAvailable(agentId: string, allowance: number, amount: number): void {
    const remaining = this.remaining(agentId, allowance);
    if (remaining <= 0 || remaining < amount) throw new InsufficientCreditsError(Math.max(0, remaining), amount);
  }

  /** Hold `amount` credits or refuse with 402 before any upstream call. */
  reserve(agentId: string, allowance: number, amount: number): Reservation {
    this.requireAvailable(agentId, allowance, amount);
    this.reserved.set(agentId, (this.reserved.get(agentId) ?? 0) + amount);
    return { agentId, amount, settled: false };
  }

  /**
   * Hold `amount` without a check: a reservation made before a restart (a video job still running)
   * is held again as it was, even if the balance has moved since.
   */
  hold(agentId: string, amount: number): Reservation {
    this.reserved.set(agentId, (this.reserved.get(agentId) ?? 0) + amount);
    return { agentId, amount, settled: false };
  }

  /**
   * Debit the usage row's credits and release the reservation; resolves once the row is written.
   * `rowId` names the row in advance, so a caller that records it can tell after a crash whether it was written.
   */
  settle(reservation: Reservation, entry: UsageEntry, rowId?: string): Promise<UsageRow> {
    this.release(reservation);
    return this.record(entry, rowId);
  }

  /** A row for free work (local OCR): nothing reserved, so never refused; resolves once written. */
  async record(entry: UsageEntry, rowId: string = randomUUID()): Promise<UsageRow> {
    const row: UsageRow = { id: rowId, time: this.now().toISOString(), ...entry };
    await this.log.append(row);
    this.onRecorded?.(row);
    return row;
  }

  release(reservation: Reservation): void {
    if (reservation.settled) return;
    reservation.settled = true;
    const left = (this.reserved.get(reservation.agentId) ?? 0) - reservation.amount;
    if (left > 0) this.reserved.set(reservation.agentId, left);
    else this.reserved.delete(reservation.agentId);
  }
}
