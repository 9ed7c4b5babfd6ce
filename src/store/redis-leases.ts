// Claims on jobs kept in Redis (video jobs, batches; store/job-claims.ts): a claim is a key set
// with `SET NX PX` to a random token, renewed and released by a script that first checks the
// token, so an instance whose lease ran out can neither extend nor drop another's claim.
import { randomUUID } from "node:crypto";
import type { Redis, Result } from "ioredis";
import { checkLease, type JobClaim } from "./job-claims.js";

type ScriptArgument = string | number | Buffer;

declare module "ioredis" {
  interface RedisCommander<Context> {
    gwLeaseRenew(...args: ScriptArgument[]): Result<unknown, Context>;
    gwLeaseRelease(...args: ScriptArgument[]): Result<unknown, Context>;
  }
}

// KEYS: claim. ARGV: token, lease (ms).
const RENEW = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

// KEYS: claim. ARGV: token.
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`;

/** Give a connection the renew and release scripts (once per store; defining them again is harmless). */
export function defineLeaseCommands(redis: Redis): void {
  redis.defineCommand("gwLeaseRenew", { numberOfKeys: 1, lua: RENEW });
  redis.defineCommand("gwLeaseRelease", { numberOfKeys: 1, lua: RELEASE });
}

/** Claim job `jobId` under `key` for `ttlMs`; null while someone holds it. */
export async function takeLease(redis: Redis, key: string, jobId: string, ttlMs: number): Promise<RedisLease | null> {
  checkLease(ttlMs);
  const token = randomUUID();
  const taken = await redis.set(key, token, "PX", ttlMs, "NX");
  return taken === "OK" ? new RedisLease(redis, jobId, token, key, ttlMs) : null;
}

export class RedisLease implements JobClaim {
  constructor(
    protected readonly connection: Redis,
    readonly jobId: string,
    readonly token: string,
    readonly key: string,
    protected readonly ttlMs: number,
  ) {}

  async renew(): Promise<boolean> {
    return (await this.connection.gwLeaseRenew(this.key, this.token, this.ttlMs)) === 1;
  }

  async release(): Promise<void> {
    await this.connection.gwLeaseRelease(this.key, this.token);
  }
}
