// The cases every ResponseCacheStore (src/store/response-cache.ts) must pass, whatever keeps its
// entries. Not a test file itself (ava runs test/**/*.test.ts only): a test file calls
//
//   responseCacheConformance(test, "redis", async () => ({ cache, twin, close }));
//
// `open` is called once per case and gives an empty cache, and `twin`, another handle on the same
// entries (another gw instance on the same Redis; the same object for the embedded cache, which one
// process serves); `close` is called when the case ends, pass or fail.
import { createHash, randomUUID } from "node:crypto";
import type { TestFn } from "ava";
import type { ResponseCacheStore } from "../../src/store/response-cache.js";
import { eventually } from "../helpers/eventually.js";

export interface OpenedResponseCache {
  cache: ResponseCacheStore;
  /** Another handle on the same entries (another instance); the same object for an embedded cache. */
  twin: ResponseCacheStore;
  close(): Promise<void> | void;
}

const HOUR_MS = 3_600_000;
const ROOMY = 1024 * 1024;

/** A request's hash, as the gateway makes them. */
export function hashOf(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** An agent id of the metadata stores' alphabet, new for each use. */
export function newAgentId(): string {
  return `agt_${randomUUID().replaceAll("-", "").slice(0, 20)}`;
}

/** `size` bytes of every value 0..255 in turn, starting at `first`: binary, not text. */
export function bytes(size: number, first = 0): Buffer {
  return Buffer.from(Array.from({ length: size }, (_, index) => (first + index) % 256));
}

export function responseCacheConformance(test: TestFn, name: string, open: () => Promise<OpenedResponseCache>): void {
  const opened = async (t: { teardown(fn: () => Promise<void> | void): void }): Promise<OpenedResponseCache> => {
    const handles = await open();
    t.teardown(() => handles.close());
    return handles;
  };
  const named = (title: string) => `${name}: ${title}`;

  test(named("a value put reads back byte for byte, from the other instance too"), async (t) => {
    const { cache, twin } = await opened(t);
    const agent = newAgentId();
    const value = Buffer.concat([bytes(256), Buffer.from('\r\n\0 {"ok":true} ✓'), bytes(70_000, 7)]);
    await cache.put(agent, hashOf("round trip"), value, HOUR_MS, ROOMY);
    t.deepEqual(await cache.get(agent, hashOf("round trip")), value);
    t.deepEqual(await twin.get(agent, hashOf("round trip")), value);
  });

  test(named("a hash never put, or put by another agent, is a miss"), async (t) => {
    const { cache } = await opened(t);
    const [owner, other] = [newAgentId(), newAgentId()];
    t.is(await cache.get(owner, hashOf("never put")), undefined);
    await cache.put(owner, hashOf("mine"), Buffer.from("owner's answer"), HOUR_MS, ROOMY);
    t.is(await cache.get(other, hashOf("mine")), undefined);
    t.deepEqual(await cache.totals(other), { entries: 0, bytes: 0 });
    t.deepEqual(await cache.get(owner, hashOf("mine")), Buffer.from("owner's answer"));
  });

  test(named("a put replaces the value under the same hash, and the totals count the new one"), async (t) => {
    const { cache } = await opened(t);
    const agent = newAgentId();
    await cache.put(agent, hashOf("replaced"), bytes(300), HOUR_MS, ROOMY);
    await cache.put(agent, hashOf("replaced"), Buffer.from("newer"), HOUR_MS, ROOMY);
    t.deepEqual(await cache.get(agent, hashOf("replaced")), Buffer.from("newer"));
    t.deepEqual(await cache.totals(), { entries: 1, bytes: 5 });
  });

  test(named("two puts of one hash at once leave one entry: the last one's value and size"), async (t) => {
    const { cache, twin } = await opened(t);
    const agent = newAgentId();
    // The bigger write first: it takes longer, so it would land last unless puts of one entry keep their order.
    await Promise.all([cache.put(agent, hashOf("raced"), bytes(900_000), HOUR_MS, ROOMY), cache.put(agent, hashOf("raced"), bytes(40, 1), HOUR_MS, ROOMY)]);
    t.deepEqual(await cache.get(agent, hashOf("raced")), bytes(40, 1));
    t.deepEqual(await cache.totals(), { entries: 1, bytes: 40 });
    // From two instances, either may land last; the entry's size is always its value's.
    await Promise.all([cache.put(agent, hashOf("raced"), bytes(900_000), HOUR_MS, ROOMY), twin.put(agent, hashOf("raced"), bytes(41, 2), HOUR_MS, ROOMY)]);
    const value = await twin.get(agent, hashOf("raced"));
    t.true(value?.equals(bytes(41, 2)) || value?.equals(bytes(900_000)), `a value put: ${value?.length} bytes`);
    t.deepEqual(await cache.totals(), { entries: 1, bytes: value?.length ?? -1 });
  });

  test(named("an entry outlives its lifetime as a miss, and the totals stop counting it unread"), async (t) => {
    const { cache } = await opened(t);
    const agent = newAgentId();
    await cache.put(agent, hashOf("brief"), bytes(10), 150, ROOMY);
    await cache.put(agent, hashOf("brief, never read"), bytes(20), 150, ROOMY);
    await cache.put(agent, hashOf("lasting"), bytes(30), HOUR_MS, ROOMY);
    await eventually(() => cache.get(agent, hashOf("brief")), { what: "the brief entry to lapse", until: (value) => value === undefined });
    // The other brief one, lapsed too by now, was never read: the totals still leave it out.
    await eventually(() => cache.totals(), { what: "the unread brief entry to lapse", until: (totals) => totals.entries === 1 });
    t.deepEqual(await cache.totals(), { entries: 1, bytes: 30 });
    t.deepEqual(await cache.totals(agent), { entries: 1, bytes: 30 });
    t.is(await cache.get(agent, hashOf("brief, never read")), undefined);
    t.deepEqual(await cache.get(agent, hashOf("lasting")), bytes(30));
  });

  test(named("at the bound the least recently used entry goes first, and a hit counts as a use"), async (t) => {
    const { cache } = await opened(t);
    const [agent, other] = [newAgentId(), newAgentId()];
    await cache.put(agent, hashOf("a"), bytes(100), HOUR_MS, 300);
    await cache.put(other, hashOf("b"), bytes(100), HOUR_MS, 300);
    await cache.put(agent, hashOf("c"), bytes(100), HOUR_MS, 300);
    t.deepEqual(await cache.totals(), { entries: 3, bytes: 300 }, "at the bound exactly, nothing goes");
    t.deepEqual(await cache.get(agent, hashOf("a")), bytes(100)); // now b is the least recently used
    await cache.put(agent, hashOf("d"), bytes(100), HOUR_MS, 300);
    t.is(await cache.get(other, hashOf("b")), undefined, "the least recently used entry, of another agent, went");
    for (const kept of ["a", "c", "d"]) t.deepEqual(await cache.get(agent, hashOf(kept)), bytes(100), kept);
    t.deepEqual(await cache.totals(), { entries: 3, bytes: 300 });
    // Read in the order a, c, d: one big entry pushes out as many of them as it takes, oldest first.
    await cache.put(agent, hashOf("big"), bytes(150), HOUR_MS, 300);
    t.is(await cache.get(agent, hashOf("a")), undefined);
    t.is(await cache.get(agent, hashOf("c")), undefined);
    t.deepEqual(await cache.get(agent, hashOf("d")), bytes(100));
    t.deepEqual(await cache.totals(), { entries: 2, bytes: 250 });
  });

  test(named("a value larger than the bound on its own is not stored, and evicts nothing"), async (t) => {
    const { cache } = await opened(t);
    const agent = newAgentId();
    await cache.put(agent, hashOf("small"), bytes(50), HOUR_MS, 100);
    await cache.put(agent, hashOf("too big"), bytes(101), HOUR_MS, 100);
    t.is(await cache.get(agent, hashOf("too big")), undefined);
    t.deepEqual(await cache.get(agent, hashOf("small")), bytes(50));
    t.deepEqual(await cache.totals(), { entries: 1, bytes: 50 });
  });

  test(named("the totals count every agent's entries, or one agent's"), async (t) => {
    const { cache, twin } = await opened(t);
    const [alice, bob, carol] = [newAgentId(), newAgentId(), newAgentId()];
    await cache.put(alice, hashOf("1"), bytes(10), HOUR_MS, ROOMY);
    await cache.put(alice, hashOf("2"), bytes(20), HOUR_MS, ROOMY);
    await twin.put(bob, hashOf("1"), bytes(5), HOUR_MS, ROOMY);
    t.deepEqual(await cache.totals(), { entries: 3, bytes: 35 });
    t.deepEqual(await twin.totals(alice), { entries: 2, bytes: 30 });
    t.deepEqual(await cache.totals(bob), { entries: 1, bytes: 5 });
    t.deepEqual(await cache.totals(carol), { entries: 0, bytes: 0 });
  });

  test(named("clearing an agent removes its entries only, and says what it removed"), async (t) => {
    const { cache, twin } = await opened(t);
    const [alice, bob] = [newAgentId(), newAgentId()];
    await cache.put(alice, hashOf("1"), bytes(10), HOUR_MS, ROOMY);
    await cache.put(alice, hashOf("2"), bytes(20), HOUR_MS, ROOMY);
    await cache.put(bob, hashOf("1"), bytes(5), HOUR_MS, ROOMY);
    t.deepEqual(await twin.clear(alice), { entries: 2, bytes: 30 });
    t.is(await cache.get(alice, hashOf("1")), undefined);
    t.is(await cache.get(alice, hashOf("2")), undefined);
    t.deepEqual(await cache.get(bob, hashOf("1")), bytes(5));
    t.deepEqual(await cache.totals(), { entries: 1, bytes: 5 });
    t.deepEqual(await cache.clear(alice), { entries: 0, bytes: 0 });
    // The agent caches again afterwards.
    await cache.put(alice, hashOf("1"), bytes(11), HOUR_MS, ROOMY);
    t.deepEqual(await cache.get(alice, hashOf("1")), bytes(11));
  });

  test(named("clearing everything removes every agent's entries"), async (t) => {
    const { cache, twin } = await opened(t);
    const [alice, bob] = [newAgentId(), newAgentId()];
    await cache.put(alice, hashOf("1"), bytes(10), HOUR_MS, ROOMY);
    await cache.put(alice, hashOf("2"), bytes(20), HOUR_MS, ROOMY);
    await cache.put(bob, hashOf("1"), bytes(5), HOUR_MS, ROOMY);
    t.deepEqual(await twin.clear(), { entries: 3, bytes: 35 });
    t.deepEqual(await cache.totals(), { entries: 0, bytes: 0 });
    t.deepEqual(await cache.totals(alice), { entries: 0, bytes: 0 });
    t.is(await cache.get(bob, hashOf("1")), undefined);
    t.deepEqual(await cache.clear(), { entries: 0, bytes: 0 });
    await cache.put(bob, hashOf("1"), bytes(6), HOUR_MS, ROOMY);
    t.deepEqual(await cache.totals(), { entries: 1, bytes: 6 });
  });

  test(named("an agent id or hash that could not name an entry reads as a miss and is refused for a put"), async (t) => {
    const { cache } = await opened(t);
    const agent = newAgentId();
    const hash = hashOf("valid");
    await cache.put(agent, hash, bytes(10), HOUR_MS, ROOMY);
    const badHashes = ["../../etc/passwd", hash.toUpperCase(), hash.slice(1), `${hash}0`, `${hash.slice(0, 63)}/`, ""];
    const badAgents = ["..", "../agent", "a/b", "a:b", "", "a".repeat(65), "agent.1"];
    for (const bad of badHashes) {
      t.is(await cache.get(agent, bad), undefined, bad);
      await t.throwsAsync(cache.put(agent, bad, bytes(1), HOUR_MS, ROOMY), undefined, bad);
    }
    for (const bad of badAgents) {
      t.is(await cache.get(bad, hash), undefined, bad);
      await t.throwsAsync(cache.put(bad, hash, bytes(1), HOUR_MS, ROOMY), undefined, bad);
      t.deepEqual(await cache.totals(bad), { entries: 0, bytes: 0 }, bad);
      await t.throwsAsync(cache.clear(bad), undefined, bad);
    }
    await t.throwsAsync(cache.put(agent, hash, bytes(1), 0, ROOMY), { instanceOf: RangeError });
    await t.throwsAsync(cache.put(agent, hash, bytes(1), HOUR_MS, 0), { instanceOf: RangeError });
    t.deepEqual(await cache.totals(), { entries: 1, bytes: 10 });
    t.deepEqual(await cache.get(agent, hash), bytes(10));
  });
}
