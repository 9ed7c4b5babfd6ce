// One suite for every VideoJobRecords (src/store/video-jobs.ts): the embedded file store and the
// Redis store against a real redis-server give the same answers to the same calls, so the video
// service and poller cannot tell which one they have. For Redis, two stores on one Redis stand for
// two gw instances: a claim one makes the other cannot take until it ends, and a change made under
// a claim that has run out is not written. The embedded store serves one process, so its "other
// instance" is the same store object.
import { randomUUID } from "node:crypto";
import { readdirSync } from "node:fs";
import test from "ava";
import { RedisVideoJobStore } from "../src/store/redis-video-jobs.js";
import {
  newVideoJobId,
  VideoJobClaimLostError,
  VideoJobEndedError,
  type VideoJobRecord,
  type VideoJobRecords,
  VideoJobStore,
} from "../src/store/video-jobs.js";
import { eventually } from "./helpers/eventually.js";
import { redisForTests } from "./helpers/redis-server.js";
import { tempDir } from "./helpers/temp-dirs.js";

const redis = redisForTests(test);

interface Opened {
  store: VideoJobRecords;
  /** Another handle on the same state (another instance, for Redis). */
  twin: VideoJobRecords;
  /** Whether the reference photo is still kept (a file beside the job, or its Redis key). */
  photoKept(id: string): Promise<boolean>;
}

const implementations: Array<{ name: string; open(): Promise<Opened> }> = [
  {
    name: "file",
    async open() {
      const dir = tempDir("gw-video-jobs-");
      const store = VideoJobStore.open(dir);
      return { store, twin: store, photoKept: async (id) => readdirSync(dir).includes(`${id}.input`) };
    },
  },
  {
    name: "redis",
    async open() {
      const prefix = redis.prefix();
      const client = redis.client();
      return {
        store: new RedisVideoJobStore(client, prefix),
        twin: new RedisVideoJobStore(redis.client(), prefix),
        photoKept: async (id) => (await client.exists(`${prefix}video:input:${id}`)) === 1,
      };
    },
  },
];

function job(agentId = "agent-1", change: Partial<VideoJobRecord> = {}): VideoJobRecord {
  return {
    id: newVideoJobId(),
    agentId,
    keyPrefix: "gw_abc",
    model: "runway/gen4_turbo",
    provider: "runway",
    vendorModel: "gen4_turbo",
    status: "QUEUED",
    queuedAt: new Date().toISOString(),
    request: { prompt: "the sun rises — ✓", durationSeconds: 5, resolution: "720p", ratio: "16:9", width: 1280, height: 720 },
    projectId: "proj_1",
    estimateCredits: 250_000,
    polls: 0,
    ...change,
  };
}

const PHOTO = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x80]);

for (const implementation of implementations) {
  const named = (title: string) => `${implementation.name}: ${title}`;

  test(named("a created job reads back whole, from the other handle too; an update applies and removes fields"), async (t) => {
    const { store, twin } = await implementation.open();
    const created = job("agent-1", { nextPollAt: new Date().toISOString(), progress: 0.25 });
    await store.create(created);
    t.deepEqual(await store.get(created.id), created);
    t.deepEqual(await twin.get(created.id), created);
    const next = await store.update(created.id, { status: "SUBMITTED", taskId: "task-1", polls: 2, nextPollAt: undefined, progress: undefined });
    const { nextPollAt: _next, progress: _progress, ...rest } = created;
    const expected = { ...rest, status: "SUBMITTED" as const, taskId: "task-1", polls: 2 };
    t.deepEqual(next, expected);
    t.deepEqual(await twin.get(created.id), expected);
    t.false("nextPollAt" in (await twin.get(created.id))!);
    t.is(await store.get(newVideoJobId()), undefined);
    t.is(await store.get("not-a-job"), undefined);
    await t.throwsAsync(store.update(newVideoJobId(), { polls: 1 }), { message: /is not in the store/ });
  });

  test(named("active lists unfinished jobs oldest first; list is an agent's jobs newest first, limited"), async (t) => {
    const { store, twin } = await implementation.open();
    const jobs = [job("agent-a"), job("agent-b"), job("agent-a"), job("agent-a"), job("agent-b")];
    for (const each of jobs) await store.create(each);
    await store.update(jobs[2]!.id, { status: "SUCCEEDED" });
    await store.update(jobs[4]!.id, { status: "CANCELLED" });
    await store.update(jobs[1]!.id, { status: "SUBMITTED" });
    t.deepEqual(
      (await twin.active()).map((each) => each.id),
      [jobs[0]!.id, jobs[1]!.id, jobs[3]!.id],
    );
    t.is((await twin.active())[1]!.status, "SUBMITTED");
    t.deepEqual(
      (await twin.list("agent-a", 10)).map((each) => each.id),
      [jobs[3]!.id, jobs[2]!.id, jobs[0]!.id],
    );
    t.deepEqual(
      (await twin.list("agent-a", 2)).map((each) => each.id),
      [jobs[3]!.id, jobs[2]!.id],
    );
    t.is((await twin.list("agent-a", 2))[1]!.status, "SUCCEEDED");
    t.deepEqual(await twin.list("agent-c", 10), []);
  });

  test(named("countByStatus follows every create and status change"), async (t) => {
    const { store, twin } = await implementation.open();
    t.deepEqual([...(await twin.countByStatus())], []);
    const jobs = [job(), job(), job(), job()];
    for (const each of jobs) await store.create(each);
    await store.update(jobs[0]!.id, { status: "SUBMITTED" });
    await store.update(jobs[1]!.id, { status: "SUBMITTED" });
    await store.update(jobs[1]!.id, { status: "SUCCEEDED" });
    await store.update(jobs[2]!.id, { status: "FAILED", error: "no" });
    await store.update(jobs[2]!.id, { error: "no, really" });
    const counts = await twin.countByStatus();
    t.deepEqual(Object.fromEntries([...counts].filter(([, count]) => count > 0)), { QUEUED: 1, SUBMITTED: 1, SUCCEEDED: 1, FAILED: 1 });
  });

  test(named("the reference photo is kept, byte for byte, until the job ends"), async (t) => {
    const { store, twin, photoKept } = await implementation.open();
    const withPhoto = job("agent-1", { request: { ...job().request, image: { mediaType: "image/png", width: 640, height: 360 } } });
    await store.create(withPhoto, PHOTO);
    t.deepEqual(await twin.readImage(withPhoto.id), PHOTO);
    await store.update(withPhoto.id, { status: "SUBMITTED", taskId: "t" });
    t.deepEqual(await twin.readImage(withPhoto.id), PHOTO, "still needed while it runs (a lost task is submitted again)");
    t.true(await photoKept(withPhoto.id));
    await store.update(withPhoto.id, { status: "FAILED", error: "x" });
    t.is(await twin.readImage(withPhoto.id), undefined);
    t.false(await photoKept(withPhoto.id));
    const without = job();
    await store.create(without);
    t.is(await store.readImage(without.id), undefined);
  });

  test(named("a claim is exclusive until released, across handles"), async (t) => {
    const { store, twin } = await implementation.open();
    const created = job();
    await store.create(created);
    const claim = await store.claim(created.id, 60_000);
    t.truthy(claim);
    t.is(await twin.claim(created.id, 60_000), null);
    t.is(await store.claim(created.id, 60_000), null, "not even by the store that holds it");
    const other = job();
    await store.create(other);
    t.truthy(await twin.claim(other.id, 60_000), "a claim is per job");
    await claim!.release();
    const taken = await twin.claim(created.id, 60_000);
    t.truthy(taken);
    t.false(await claim!.renew(), "a released claim cannot be renewed");
    await claim!.release(); // releasing it again lets nobody else's claim go
    t.is(await store.claim(created.id, 60_000), null);
    t.true(await taken!.renew());
  });

  test(named("a claim whose lease ran out is taken by the other; its holder's change is then refused"), async (t) => {
    const { store, twin } = await implementation.open();
    const created = job();
    await store.create(created);
    const stale = await store.claim(created.id, 50);
    t.truthy(stale);
    const taken = await eventually(() => twin.claim(created.id, 60_000), { what: "the claim after its lease ran out" });
    await t.throwsAsync(store.update(created.id, { status: "SUBMITTED", taskId: "twice" }, stale!), { instanceOf: VideoJobClaimLostError });
    t.false(await stale!.renew());
    await stale!.release(); // does not let the new holder's claim go
    t.is(await store.claim(created.id, 60_000), null);
    const next = await twin.update(created.id, { status: "SUBMITTED", taskId: "once" }, taken!);
    t.is(next.taskId, "once");
    t.like(await store.get(created.id), { status: "SUBMITTED", taskId: "once" });
  });

  test(named("a change under a claim on another job, or a released one, is refused; one under a held claim is written"), async (t) => {
    const { store } = await implementation.open();
    const first = job();
    const second = job();
    await store.create(first);
    await store.create(second);
    const claim = await store.claim(first.id, 60_000);
    await t.throwsAsync(store.update(second.id, { polls: 1 }, claim!), { instanceOf: VideoJobClaimLostError });
    t.is((await store.update(first.id, { polls: 1 }, claim!)).polls, 1);
    await claim!.release();
    await t.throwsAsync(store.update(first.id, { polls: 2 }, claim!), { instanceOf: VideoJobClaimLostError });
    t.is((await store.get(first.id))!.polls, 1);
  });

  test(named("a claimed change to a job that ended meanwhile is refused; an unclaimed one's check sees the current record"), async (t) => {
    const { store, twin } = await implementation.open();
    const created = job();
    await store.create(created);
    const claim = await store.claim(created.id, 60_000);
    // A client cancels it on the other instance (no claim), checking the record it writes over.
    const seen: string[] = [];
    await twin.update(created.id, { status: "CANCELLED", error: "cancelled by client" }, undefined, (current) => seen.push(current.status));
    t.deepEqual(seen, ["QUEUED"]);
    const ended = await t.throwsAsync(store.update(created.id, { status: "SUBMITTED", taskId: "late" }, claim!), { instanceOf: VideoJobEndedError });
    t.is(ended.status, "CANCELLED");
    t.like(await store.get(created.id), { status: "CANCELLED", error: "cancelled by client" });
    t.false("taskId" in (await store.get(created.id))!);
    // A check that throws refuses the change.
    await t.throwsAsync(
      twin.update(created.id, { status: "FAILED" }, undefined, () => {
        throw new Error("finished");
      }),
      { message: "finished" },
    );
    t.is((await store.get(created.id))!.status, "CANCELLED");
  });

  test(named("claims with a slot: at most the limit of one group at once across handles; a released or expired claim frees its slot"), async (t) => {
    const { store, twin } = await implementation.open();
    const jobs = [job(), job(), job(), job()];
    for (const created of jobs) await store.create(created);
    const group = `provider-${randomUUID().slice(0, 8)}`;
    const slot = { group, limit: 2 };
    const first = await store.claim(jobs[0]!.id, 60_000, slot);
    const second = await twin.claim(jobs[1]!.id, 60_000, slot);
    t.truthy(first);
    t.truthy(second);
    t.is(await twin.claim(jobs[2]!.id, 60_000, slot), null, "both slots are taken");
    t.is(await store.claim(jobs[2]!.id, 60_000, slot), null);
    t.truthy(await store.claim(jobs[3]!.id, 60_000, { group: `${group}-other`, limit: 1 }), "another group has slots of its own");
    t.true(await second!.renew(), "a claim with a slot renews");
    await first!.release();
    const third = await twin.claim(jobs[2]!.id, 60_000, slot);
    t.truthy(third, "a released claim frees its slot");
    t.is(await store.claim(jobs[0]!.id, 60_000, slot), null);
    await second!.release();
    // A claim whose lease runs out (its instance died) frees its slot with it.
    const stale = await store.claim(jobs[1]!.id, 50, slot);
    t.truthy(stale);
    t.is(await twin.claim(jobs[0]!.id, 60_000, slot), null);
    const after = await eventually(() => twin.claim(jobs[0]!.id, 60_000, slot), { what: "the slot after the lease ran out" });
    t.truthy(after);
    t.false(await stale!.renew());
  });

  test(named("renewing keeps a claim held past its first lease"), async (t) => {
    const { store, twin } = await implementation.open();
    const created = job();
    await store.create(created);
    const leaseMs = 1500;
    const claim = await store.claim(created.id, leaseMs);
    const since = Date.now();
    // Renewed often (well inside the lease, however slow the machine), for well past the first lease.
    while (Date.now() - since < 2.5 * leaseMs) {
      t.true(await claim!.renew());
      t.is(await twin.claim(created.id, leaseMs), null);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    t.is((await store.update(created.id, { polls: 3 }, claim!)).polls, 3);
  });
}
