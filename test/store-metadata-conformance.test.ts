// One suite for every MetadataRecords (src/store/metadata-store.ts): the lowdb file and the Redis
// document against a real redis-server give the same answers to the same calls, so the server and
// the `gw` commands cannot tell which one holds their agents and keys. Two stores on one backend
// stand for two processes (the CLI and a server) or two gw instances: neither loses the other's
// writes, and each sees the other's changes.
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import test from "ava";
import type { Redis } from "ioredis";
import { type MetadataRecords, MetadataStore } from "../src/store/metadata-store.js";
import type { AgentRecord, MetadataData } from "../src/store/records.js";
import { RedisMetadataStore } from "../src/store/redis-metadata-store.js";
import { StoreError } from "../src/store/store-error.js";
import { eventually } from "./helpers/eventually.js";
import { startRedis, type TestRedis } from "./helpers/redis-server.js";
import { tempDir } from "./helpers/temp-dirs.js";

let redis: TestRedis;

test.before(async () => {
  redis = await startRedis();
});

test.after.always(async () => {
  await redis?.stop();
});

/** One backend's worth of state: open stores on it, and write to it behind the stores' backs. */
interface Backend {
  /** Open a store on this backend; `create` makes an empty document when there is none. */
  open(options?: { create?: boolean }): Promise<MetadataRecords>;
  /** Replace the stored document with these bytes, as a damaged disk or a stray writer would. */
  overwrite(text: string): Promise<void>;
  /** The stored document's bytes, or null when there is none. */
  stored(): Promise<string | null>;
}

let prefixes = 0;

const implementations: Array<{ name: string; backend(): Backend }> = [
  {
    name: "file",
    backend() {
      const file = path.join(tempDir("gw-metadata-"), "metadata.json");
      return {
        open: (options) => MetadataStore.open(file, options),
        overwrite: (text) => writeFile(file, text),
        stored: () => readFile(file, "utf8").catch(() => null),
      };
    },
  },
  {
    name: "redis",
    backend() {
      const prefix = `m${prefixes++}:`;
      const raw = redis.client();
      return {
        open: (options) => RedisMetadataStore.open(redis.client(), redis.client(), { prefix, ...options }),
        overwrite: async (text) => {
          await raw.set(`${prefix}meta`, text);
        },
        stored: () => raw.get(`${prefix}meta`),
      };
    },
  },
];

/** Stores opened by a test, closed when it ends. */
function closing<T extends MetadataRecords>(t: { teardown(fn: () => void): void }, store: T): T {
  t.teardown(() => store.close());
  return store;
}

function agent(name: string): AgentRecord {
  return { id: `agt_${name}`, name, plan: "free", createdAt: "2025-01-01T00:00:00.000Z" };
}

function names(data: MetadataData): string[] {
  return data.agents.map((record) => record.name).sort();
}

for (const implementation of implementations) {
  const named = (title: string) => `${implementation.name}: ${title}`;

  test(named("mutate resolves with apply's result, and what it changed is kept"), async (t) => {
    const backend = implementation.backend();
    const store = closing(t, await backend.open({ create: true }));
    const result = await store.mutate((data) => {
      data.agents.push(agent("alice"));
      return { count: data.agents.length };
    });
    t.deepEqual(result, { count: 1 });
    t.deepEqual(names(store.data), ["alice"]);
    const reopened = closing(t, await backend.open());
    t.deepEqual(reopened.data.agents, [agent("alice")]);
    t.deepEqual(reopened.data.keys, []);
  });

  test(named("a throwing apply rejects only its own mutation"), async (t) => {
    const backend = implementation.backend();
    const store = closing(t, await backend.open({ create: true }));
    const [first, failed, last] = await Promise.allSettled([
      store.mutate((data) => data.agents.push(agent("first"))),
      store.mutate(() => {
        throw new Error('agent "x" already exists');
      }),
      store.mutate((data) => data.agents.push(agent("last"))),
    ]);
    t.deepEqual(first, { status: "fulfilled", value: 1 });
    t.is(failed?.status, "rejected");
    t.is(failed?.status === "rejected" ? (failed.reason as Error).message : "", 'agent "x" already exists');
    t.deepEqual(last, { status: "fulfilled", value: 2 });
    t.deepEqual(names((await backend.open().then((reopened) => closing(t, reopened))).data), ["first", "last"]);
  });

  test(named("mutations issued together are applied in order in one write"), async (t) => {
    const backend = implementation.backend();
    const store = closing(t, await backend.open({ create: true }));
    let changes = 0;
    store.onChange(() => changes++);
    const counts = await Promise.all(Array.from({ length: 20 }, (_, index) => store.mutate((data) => data.agents.push(agent(`a${index}`)))));
    t.deepEqual(
      counts,
      Array.from({ length: 20 }, (_, index) => index + 1),
    );
    // One write for the twenty: the file store reports its read under the lock and its write, Redis its write.
    t.true(changes >= 1 && changes <= 2, `${changes} change notices for one batch`);
  });

  test(named("50 concurrent mutations through two stores on one backend lose none"), async (t) => {
    const backend = implementation.backend();
    const first = closing(t, await backend.open({ create: true }));
    const second = closing(t, await backend.open());
    const stores = [first, second];
    await Promise.all(Array.from({ length: 50 }, (_, index) => stores[index % 2]!.mutate((data) => data.agents.push(agent(`n${index}`)))));
    const expected = Array.from({ length: 50 }, (_, index) => `n${index}`).sort();
    for (const store of stores) {
      await store.reloadIfChanged();
      t.deepEqual(names(store.data), expected);
    }
    t.deepEqual(names(closing(t, await backend.open()).data), expected);
  });

  test(named("a change through one store reaches the other on reloadIfChanged"), async (t) => {
    const backend = implementation.backend();
    const store = closing(t, await backend.open({ create: true }));
    const other = closing(t, await backend.open());
    t.false(await other.reloadIfChanged(), "nothing changed yet");
    await store.mutate((data) => data.agents.push(agent("bob")));
    t.deepEqual(names(other.data), [], "not watching: the other store has not re-read yet");
    t.true(await other.reloadIfChanged());
    t.deepEqual(names(other.data), ["bob"]);
    t.false(await other.reloadIfChanged(), "read once per change");
  });

  test(named("a watching store follows another store's changes without being asked"), async (t) => {
    const backend = implementation.backend();
    const store = closing(t, await backend.open({ create: true }));
    const other = closing(t, await backend.open());
    other.watch();
    // The subscription (or file watch) settles on its own time: repeat the change until it is followed.
    let round = 0;
    await eventually(
      async () => {
        const name = `carol${round++}`;
        await store.mutate((data) => data.agents.push(agent(name)));
        return eventually(() => other.data.agents.some((record) => record.name === name), { what: `${name} in the watching store`, timeoutMs: 5_000 });
      },
      { what: "the watching store to follow a change" },
    );
    t.pass();
  });

  test(named("onChange listeners run after an own mutation and after a reload, seeing the new data"), async (t) => {
    const backend = implementation.backend();
    const store = closing(t, await backend.open({ create: true }));
    const other = closing(t, await backend.open());
    const seenByStore: string[][] = [];
    const seenByOther: string[][] = [];
    store.onChange(() => seenByStore.push(names(store.data)));
    other.onChange(() => seenByOther.push(names(other.data)));
    await store.mutate((data) => data.agents.push(agent("dave")));
    // The file store tells its listeners once its lock is released, a moment after mutate resolves.
    await eventually(() => seenByStore.at(-1)?.join() === "dave", "the store's listener to see its own change");
    t.deepEqual(seenByOther, []);
    await other.reloadIfChanged();
    t.deepEqual(seenByOther.at(-1), ["dave"]);
  });

  test(named("a missing document refuses to open, unless asked to create one"), async (t) => {
    const backend = implementation.backend();
    const error = await t.throwsAsync(backend.open(), { instanceOf: StoreError, message: /is missing; refusing to start with empty balances and keys/ });
    t.regex(error?.commandMessage ?? "", /is missing/);
    t.is(await backend.stored(), null, "refusing wrote nothing");
    const created = closing(t, await backend.open({ create: true }));
    t.deepEqual(created.data, { version: 1, agents: [], keys: [] });
    t.deepEqual(closing(t, await backend.open()).data, { version: 1, agents: [], keys: [] });
  });

  test(named("creating keeps a document that is already there"), async (t) => {
    const backend = implementation.backend();
    const store = closing(t, await backend.open({ create: true }));
    await store.mutate((data) => data.agents.push(agent("erin")));
    t.deepEqual(names(closing(t, await backend.open({ create: true })).data), ["erin"]);
  });

  test(named("a document that is not JSON refuses to open"), async (t) => {
    const backend = implementation.backend();
    await backend.overwrite("{ not json");
    const error = await t.throwsAsync(backend.open(), { instanceOf: StoreError, message: /is corrupt \(.+\); refusing to start — restore it from a backup/ });
    t.regex(error?.commandMessage ?? "", /is not valid JSON/);
    await t.throwsAsync(backend.open({ create: true }), { instanceOf: StoreError }, "create never replaces a damaged document");
    t.is(await backend.stored(), "{ not json");
  });

  test(named("JSON without agents and keys lists refuses to open"), async (t) => {
    const backend = implementation.backend();
    await backend.overwrite(JSON.stringify({ version: 1, agents: [] }));
    const error = await t.throwsAsync(backend.open(), { instanceOf: StoreError, message: /is not a gw metadata (file|document); refusing to start/ });
    t.regex(error?.commandMessage ?? "", /no agents and keys lists/);
  });

  test(named("a document damaged while open refuses mutations and is left as it is"), async (t) => {
    const backend = implementation.backend();
    const store = closing(t, await backend.open({ create: true }));
    await store.mutate((data) => data.agents.push(agent("frank")));
    await backend.overwrite("garbage");
    await t.throwsAsync(
      store.mutate((data) => data.agents.push(agent("grace"))),
      { instanceOf: StoreError },
    );
    t.is(await backend.stored(), "garbage");
  });
}

/** Two Redis stores on one prefix, with the raw client and each store's subscriber at hand. */
async function redisPair(t: { teardown(fn: () => void): void }) {
  const prefix = `r${prefixes++}:`;
  const raw = redis.client();
  const subscriber = redis.client();
  const store = closing(t, await RedisMetadataStore.open(redis.client(), redis.client(), { prefix, create: true }));
  const other = closing(t, await RedisMetadataStore.open(redis.client(), subscriber, { prefix }));
  return { prefix, raw, store, other, subscriber };
}

test("redis: a batch of mutations moves the version once and announces it on the changes channel", async (t) => {
  const { prefix, raw, store } = await redisPair(t);
  const listener = redis.client();
  const announced: string[] = [];
  listener.on("message", (channel: string, message: string) => {
    if (channel === `${prefix}changes`) announced.push(message);
  });
  await listener.subscribe(`${prefix}changes`);
  const before = Number((await raw.get(`${prefix}meta:v`)) ?? 0);
  await Promise.all([1, 2, 3].map((index) => store.mutate((data) => data.agents.push(agent(`v${index}`)))));
  t.is(Number(await raw.get(`${prefix}meta:v`)), before + 1);
  await eventually(() => announced.length > 0, "the change announced");
  t.deepEqual(announced, [String(before + 1)]);
  t.deepEqual(
    JSON.parse((await raw.get(`${prefix}meta`)) ?? "null").agents.map((record: AgentRecord) => record.name),
    ["v1", "v2", "v3"],
  );
});

test("redis: with its subscriber gone, a store still picks up a change on reloadIfChanged", async (t) => {
  const { store, other, subscriber } = await redisPair(t);
  other.watch();
  // Follow one change by pub/sub first, so the subscription was really live before it goes.
  await store.mutate((data) => data.agents.push(agent("before")));
  await eventually(() => other.data.agents.length === 1, "the first change followed by pub/sub");
  subscriber.disconnect();
  await eventually(() => subscriber.status === "end", "the subscriber closed");
  await store.mutate((data) => data.agents.push(agent("after")));
  t.deepEqual(names(other.data), ["before"], "nothing delivered the change");
  t.true(await other.reloadIfChanged());
  t.deepEqual(names(other.data), ["after", "before"]);
});

test("redis: stores with different prefixes on one server do not see each other", async (t) => {
  const first = await redisPair(t);
  const second = await redisPair(t);
  await first.store.mutate((data) => data.agents.push(agent("mine")));
  t.false(await second.other.reloadIfChanged());
  t.deepEqual(second.store.data.agents, []);
  t.deepEqual(closing(t, await RedisMetadataStore.open(redis.client(), redis.client(), { prefix: second.prefix })).data.agents, []);
});

test("redis: the store's connection may carry other transactions at the same time", async (t) => {
  // The server shares one connection between stores (responses save with MULTI): an EXEC there
  // must not release this store's WATCH, or two instances' writes could overwrite each other.
  const prefix = `s${prefixes++}:`;
  const shared: Redis = redis.client();
  const first = closing(t, await RedisMetadataStore.open(shared, redis.client(), { prefix, create: true }));
  const second = closing(t, await RedisMetadataStore.open(redis.client(), redis.client(), { prefix }));
  let busy = true;
  const noise = (async () => {
    while (busy) await shared.multi().set(`${prefix}noise`, "x").exec();
  })();
  try {
    await Promise.all(Array.from({ length: 60 }, (_, index) => [first, second][index % 2]!.mutate((data) => data.agents.push(agent(`w${index}`)))));
  } finally {
    busy = false;
    await noise;
  }
  const stored = closing(t, await RedisMetadataStore.open(redis.client(), redis.client(), { prefix }));
  t.is(stored.data.agents.length, 60);
});
