import test from "ava";
import { RedisResponseStore } from "../src/store/redis-response-store.js";
import { FileResponseStore, type ResponseStore, type StoredResponse } from "../src/store/response-records.js";
import { redisForTests } from "./helpers/redis-server.js";
import { tempDir } from "./helpers/temp-dirs.js";

const redis = redisForTests(test);

/** Each implementation, fresh per test; `twin` is a second handle on the same state (another instance). */
const implementations: Array<{ name: string; open(): Promise<{ store: ResponseStore; twin: ResponseStore }> }> = [
  {
    name: "file",
    async open() {
      const dir = tempDir("gw-responses-");
      return { store: new FileResponseStore(dir), twin: new FileResponseStore(dir) };
    },
  },
  {
    name: "redis",
    async open() {
      const prefix = redis.prefix();
      return { store: new RedisResponseStore(redis.client(), prefix), twin: new RedisResponseStore(redis.client(), prefix) };
    },
  },
];

const NOW = Math.floor(Date.now() / 1000);
let ids = 0;

function record(createdAt = NOW, agentId = "agent-1"): StoredResponse {
  const id = `resp_${(ids++).toString(16).padStart(48, "0")}`;
  return {
    id,
    agentId,
    createdAt,
    response: { id, object: "response", status: "completed", output: [{ type: "message", content: [{ type: "output_text", text: "héllo ✓" }] }] },
    input: [{ type: "message", id: `msg_${id.slice(5)}i0000`, role: "user", content: [{ type: "input_text", text: "hi" }] }],
  };
}

for (const implementation of implementations) {
  const named = (title: string) => `${implementation.name}: ${title}`;

  test(named("a saved response reads back whole, from another handle too"), async (t) => {
    const { store, twin } = await implementation.open();
    const saved = record();
    await store.save(saved);
    t.deepEqual(await store.get(saved.id), saved);
    t.deepEqual(await twin.get(saved.id), saved);
  });

  test(named("saving the same id again replaces it"), async (t) => {
    const { store } = await implementation.open();
    const first = record();
    await store.save(first);
    const second = { ...first, response: { ...first.response, status: "incomplete" } };
    await store.save(second);
    t.deepEqual(await store.get(first.id), second);
  });

  test(named("an unknown id, or one gw never makes, is undefined"), async (t) => {
    const { store } = await implementation.open();
    t.is(await store.get(`resp_${"f".repeat(48)}`), undefined);
    t.is(await store.get("../../etc/passwd"), undefined);
    t.is(await store.get("resp_short"), undefined);
  });

  test(named("delete answers whether there was one, once"), async (t) => {
    const { store, twin } = await implementation.open();
    const saved = record();
    await store.save(saved);
    t.true(await twin.delete(saved.id));
    t.false(await store.delete(saved.id));
    t.is(await store.get(saved.id), undefined);
    t.false(await store.delete("not-an-id"));
  });

  test(named("prune removes what was created before the cut, counts it, and keeps the rest"), async (t) => {
    const { store } = await implementation.open();
    // The file store dates a response by its file's time, the Redis store by created_at: both are the save's moment here.
    const kept = record(NOW + 3600);
    await store.save(kept);
    t.is(await store.prune(NOW - 3600), 0);
    t.deepEqual(await store.get(kept.id), kept);
    t.is(await store.prune(NOW + 7200), 1);
    t.is(await store.get(kept.id), undefined);
    t.is(await store.prune(NOW + 7200), 0);
  });
}

test("redis: two instances pruning at once remove and count each response once", async (t) => {
  const { store, twin } = await implementations[1]!.open();
  const old = Array.from({ length: 1200 }, () => record(NOW - 100_000));
  const recent = record(NOW);
  for (const saved of [...old, recent]) await store.save(saved);
  const [first, second] = await Promise.all([store.prune(NOW - 50_000), twin.prune(NOW - 50_000)]);
  t.is(first + second, old.length);
  t.is(await store.get(old[0]!.id), undefined);
  t.is(await store.get(old.at(-1)!.id), undefined);
  t.deepEqual(await twin.get(recent.id), recent);
});

test("redis: pruning by created_at, not by when it was written", async (t) => {
  const { store } = await implementations[1]!.open();
  const ancient = record(NOW - 40 * 24 * 3600);
  const fresh = record(NOW);
  await store.save(ancient);
  await store.save(fresh);
  t.is(await store.prune(NOW - 30 * 24 * 3600), 1);
  t.is(await store.get(ancient.id), undefined);
  t.deepEqual(await store.get(fresh.id), fresh);
});

test("redis: a stored value that is not a response reads as undefined, not as a broken record", async (t) => {
  const client = redis.client();
  const store = new RedisResponseStore(client, "broken:");
  const id = `resp_${"a".repeat(48)}`;
  await client.set(`broken:response:${id}`, JSON.stringify({ id, agentId: "a" }));
  t.is(await store.get(id), undefined);
});
