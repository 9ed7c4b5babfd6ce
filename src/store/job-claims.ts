// Claims on jobs (video jobs, batches): whoever works one first claims it for a while (a lease)
// and renews the claim as it goes, so two workers never work one job at once, and a job whose
// worker died is taken by another once its lease ends. LocalClaims keeps one process's claims
// (the embedded stores); the Redis stores keep theirs in Redis.
import { randomUUID } from "node:crypto";

/** A claim on one job: held until released or until its lease runs out without a renewal. */
export interface JobClaim {
  readonly jobId: string;
  /** Extend the lease by its length again; false when the claim is no longer held (it ran out, or another took the job). */
  renew(): Promise<boolean>;
  /** Let the job go now (another instance may take it at once); nothing when it is no longer held. */
  release(): Promise<void>;
}

/**
 * A claim that also takes one of a group's slots (the poller's group is the job's provider): at
 * most `limit` claims of one group are held at once, across every instance sharing the store.
 */
export interface ClaimSlot {
  group: string;
  limit: number;
}

/** A lease is a whole, positive number of milliseconds (Redis's PX takes nothing else). */
export function checkLease(ttlMs: number): void {
  if (!(Number.isSafeInteger(ttlMs) && ttlMs > 0)) throw new RangeError(`a claim's lease must be a whole number of ms above 0, not ${ttlMs}`);
}

interface Lease {
  token: string;
  expiresAt: number;
  group?: string;
}

/** One process's claims: a Map of leases with their expiry. */
export class LocalClaims {
  /** Job id -> the lease on it. */
  private readonly leases = new Map<string, Lease>();

  /** Claim a job for `ttlMs`; null while a live lease holds it, or while `slot`'s group has `limit` live claims. */
  take(id: string, ttlMs: number, slot?: ClaimSlot): JobClaim | null {
    checkLease(ttlMs);
    const now = Date.now();
    const held = this.leases.get(id);
    if (held && held.expiresAt > now) return null;
    if (slot) {
      let taken = 0;
      for (const lease of this.leases.values()) if (lease.group === slot.group && lease.expiresAt > now) taken++;
      if (taken >= slot.limit) return null;
    }
    const token = randomUUID();
    this.leases.set(id, { token, expiresAt: now + ttlMs, group: slot?.group });
    return new LocalClaim(id, token, ttlMs, this.leases);
  }

  /** Whether `claim` is one of these, on job `id`, and still held. */
  holds(claim: JobClaim, id: string): boolean {
    if (!(claim instanceof LocalClaim && claim.jobId === id)) return false;
    const held = this.leases.get(id);
    return held !== undefined && held.token === claim.token && held.expiresAt > Date.now();
  }
}

class LocalClaim implements JobClaim {
  constructor(
    readonly jobId: string,
    readonly token: string,
    private readonly ttlMs: number,
    private readonly leases: Map<string, Lease>,
  ) {}

  async renew(): Promise<boolean> {
    const held = this.leases.get(this.jobId);
    if (!held || held.token !== this.token || held.expiresAt <= Date.now()) return false;
    held.expiresAt = Date.now() + this.ttlMs;
    return true;
  }

  async release(): Promise<void> {
    if (this.leases.get(this.jobId)?.token === this.token) this.leases.delete(this.jobId);
  }
}
