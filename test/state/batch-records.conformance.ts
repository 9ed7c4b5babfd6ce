// The cases every BatchRecords (src/store/batch-records.ts) must pass, whatever keeps the batches.
// Not a test file itself (ava runs test/**/*.test.ts only): a test file calls
//
//   batchRecordsConformance(test, "redis", async () => ({ store, twin, close }));
//
// `open` is called once per case and gives an empty store, and `twin`, another handle on the same
// batches (another gw instance on the same Redis; the same object for the embedded store, which
// one process serves); `close` is called when the case ends, pass or fail.
import { randomUUID } from "node:crypto";
import type { TestFn } from "ava";
import { BatchClaimLostError, BatchEndedError, type BatchLineResult, type BatchRecord, type BatchRecords, newBatchId } from "../../src/store/batch-records.js";
import { eventually } from "../helpers/eventually.js";

export interface OpenedBatchRecords {
  store: BatchRecords;
  /** Another handle on the same batches (another instance); the same object for an embedded store. */
  twin: BatchRecords;
  close(): Promise<void> | void;
}

/** An agent id of the metadata stores' alphabet, new for each use. */
export function newAgentId(): string {
  return `agt_${randomUUID().replaceAll("-", "").slice(0, 20)}`;
}

/** A batch as the gateway creates one (validating, nothing answered yet), with `change` over it. */
export function newBatch(agentId: string, change: Partial<BatchRecord> = {}): BatchRecord {
  const createdAt = Math.floor(Date.now() / 1000);
  return {
    id: newBatchId(Date.now()),
    agentId,
    keyId: "key_01",
    keyPrefix: "gw_abc",
    endpoint: "/v1/chat/completions",
    inputFileId: "file-01HX",
    completionWindow: "24h",
    metadata: { purpose: "nightly eval — ✓", 'quote"key': "line\nbreak" },
    status: "validating",
    createdAt,
    expiresAt: createdAt + 86_400,
    requestCounts: { total: 0, completed: 0, failed: 0 },
    concurrency: 4,
    ...change,
  };
}

/** The result of line `index`: a line of the output file when ok, of the error file otherwise. */
export function lineResult(index: number, ok = true): BatchLineResult {
  const line = ok
    ? JSON.stringify({
        id: `batch_req_${index}`,
        custom_id: `request-${index}`,
        response: { status_code: 200, body: { content: 'héllo "world" ✓' } },
        error: null,
      })
    : JSON.stringify({ id: `batch_req_${index}`, custom_id: `request-${index}`, response: null, error: { code: "upstream_error", message: "no" } });
  return { index, ok, line };
}

/** Every result of a batch, in the order the store gives them. */
export async function allResults(store: BatchRecords, id: string): Promise<BatchLineResult[]> {
  const results: BatchLineResult[] = [];
  for await (const result of store.results(id)) results.push(result);
  return results;
}

const HOUR_MS = 3_600_000;

export function batchRecordsConformance(test: TestFn, name: string, open: () => Promise<OpenedBatchRecords>): void {
  const opened = async (t: { teardown(fn: () => Promise<void> | void): void }): Promise<OpenedBatchRecords> => {
    const handles = await open();
    t.teardown(() => handles.close());
    return handles;
  };
  const named = (title: string) => `${name}: ${title}`;

  test(named("a created batch reads back whole, from the other instance too; a second create of its id is refused"), async (t) => {
    const { store, twin } = await opened(t);
    const created = newBatch(newAgentId(), { requestCounts: { total: 12, completed: 0, failed: 0 } });
    await store.create(created);
    t.deepEqual(await store.get(created.id), created);
    t.deepEqual(await twin.get(created.id), created);
    await t.throwsAsync(twin.create({ ...created, status: "in_progress" }), { message: /already/ });
    t.is((await store.get(created.id))?.status, "validating");
  });

  test(named("any text in a record round trips, and its results are still counted (a lone surrogate, an empty list)"), async (t) => {
    const { store, twin } = await opened(t);
    const created = newBatch(newAgentId(), { metadata: { odd: "\ud800 alone", empty: "" }, errors: [], status: "in_progress" });
    await store.create(created);
    t.deepEqual(await twin.get(created.id), created);
    const claim = await store.claim(created.id, HOUR_MS);
    t.true(await store.addResult(created.id, lineResult(0), claim!));
    t.deepEqual(await twin.get(created.id), { ...created, requestCounts: { total: 0, completed: 1, failed: 0 } });
  });

  test(named("ids not made by gw, and batches never created, are not found"), async (t) => {
    const { store } = await opened(t);
    for (const id of ["", "batch_", "batch_../../etc/passwd", "file-01HX", `batch_${"0".repeat(25)}`, "BATCH_01HXAAAAAAAAAAAAAAAAAAAAAA"])
      t.is(await store.get(id), undefined, id);
    t.is(await store.get(newBatchId(Date.now())), undefined);
    t.deepEqual(await allResults(store, "batch_../x"), []);
    t.deepEqual(await allResults(store, newBatchId(Date.now())), []);
    await store.dropResults("batch_../x");
    await store.dropResults(newBatchId(Date.now()));
    await t.throwsAsync(store.update(newBatchId(Date.now()), { status: "in_progress" }), { message: /is not in the store/ });
    await t.throwsAsync(store.update("batch_../x", { status: "in_progress" }), { message: /is not in the store/ });
  });

  test(named("list pages an agent's batches newest first: `after` is the cursor, hasMore says whether more follow"), async (t) => {
    const { store, twin } = await opened(t);
    const [agent, other] = [newAgentId(), newAgentId()];
    const mine: BatchRecord[] = [];
    for (let n = 0; n < 7; n++) {
      mine.push(newBatch(agent));
      await store.create(mine[n]!);
      if (n % 3 === 0) await store.create(newBatch(other));
    }
    const ids = (batches: BatchRecord[]) => batches.map((batch) => batch.id);
    const first = await twin.list(agent, { limit: 3 });
    t.deepEqual(ids(first.batches), [mine[6]!.id, mine[5]!.id, mine[4]!.id]);
    t.true(first.hasMore);
    const second = await twin.list(agent, { after: mine[4]!.id, limit: 3 });
    t.deepEqual(ids(second.batches), [mine[3]!.id, mine[2]!.id, mine[1]!.id]);
    t.true(second.hasMore);
    const last = await twin.list(agent, { after: mine[1]!.id, limit: 3 });
    t.deepEqual(ids(last.batches), [mine[0]!.id]);
    t.false(last.hasMore);
    t.deepEqual(await twin.list(agent, { after: mine[0]!.id, limit: 3 }), { batches: [], hasMore: false });
    const exact = await twin.list(agent, { after: mine[3]!.id, limit: 3 });
    t.deepEqual(ids(exact.batches), [mine[2]!.id, mine[1]!.id, mine[0]!.id]);
    t.false(exact.hasMore, "exactly `limit` left: nothing more");
    const whole = await twin.list(agent, { limit: 100 });
    t.deepEqual(whole.batches, [...mine].reverse(), "the records themselves, newest first");
    t.false(whole.hasMore);
  });

  test(named("an agent lists only its own batches"), async (t) => {
    const { store, twin } = await opened(t);
    const [alice, bob] = [newAgentId(), newAgentId()];
    // Made in this order: Bob's id comes between Alice's two.
    const alices = [newBatch(alice)];
    const bobs = newBatch(bob);
    alices.push(newBatch(alice));
    await store.create(alices[0]!);
    await store.create(bobs);
    await store.create(alices[1]!);
    t.deepEqual(
      (await twin.list(alice, { limit: 10 })).batches.map((batch) => batch.id),
      [alices[1]!.id, alices[0]!.id],
    );
    t.deepEqual(
      (await twin.list(bob, { limit: 10 })).batches.map((batch) => batch.id),
      [bobs.id],
    );
    t.deepEqual(await twin.list(newAgentId(), { limit: 10 }), { batches: [], hasMore: false });
    // Bob's batch as a cursor does not let Alice see past her own.
    t.deepEqual(
      (await twin.list(alice, { after: bobs.id, limit: 10 })).batches.map((batch) => batch.id),
      [alices[0]!.id],
    );
  });

  test(named("active lists the batches that have not ended, oldest first"), async (t) => {
    const { store, twin } = await opened(t);
    const agent = newAgentId();
    const batches = [newBatch(agent), newBatch(newAgentId()), newBatch(agent), newBatch(agent), newBatch(agent), newBatch(agent)];
    for (const batch of batches) await store.create(batch);
    await store.update(batches[0]!.id, { status: "in_progress" });
    await store.update(batches[1]!.id, { status: "cancelling" });
    await store.update(batches[2]!.id, { status: "completed" });
    await store.update(batches[3]!.id, { status: "failed" });
    await store.update(batches[4]!.id, { status: "finalizing" });
    await store.create(newBatch(agent, { status: "expired" }));
    const active = await twin.active();
    t.deepEqual(
      active.map((batch) => batch.id),
      [batches[0]!.id, batches[1]!.id, batches[4]!.id, batches[5]!.id],
    );
    t.deepEqual(
      active.map((batch) => batch.status),
      ["in_progress", "cancelling", "finalizing", "validating"],
    );
    // An ended batch never comes back to the runner, whatever is changed in it afterwards.
    await store.update(batches[2]!.id, { outputFileId: "file-out" });
    t.false((await twin.active()).some((batch) => batch.id === batches[2]!.id));
  });

  test(named("an update applies fields and removes the ones set to undefined; the other instance reads the result"), async (t) => {
    const { store, twin } = await opened(t);
    const created = newBatch(newAgentId(), { errors: [{ code: "invalid_json", message: "line 3", param: null, line: 3 }] });
    await store.create(created);
    const next = await store.update(created.id, {
      status: "in_progress",
      inProgressAt: created.createdAt + 2,
      requestCounts: { total: 40, completed: 0, failed: 0 },
      errors: undefined,
      metadata: null,
    });
    const { errors: _errors, ...rest } = created;
    const expected: BatchRecord = {
      ...rest,
      status: "in_progress",
      inProgressAt: created.createdAt + 2,
      requestCounts: { total: 40, completed: 0, failed: 0 },
      metadata: null,
    };
    t.deepEqual(next, expected);
    t.deepEqual(await twin.get(created.id), expected);
    t.false("errors" in (await twin.get(created.id))!);
  });

  test(named("an update under a held claim is written; under a lost claim, or one on another batch, it is refused and nothing is written"), async (t) => {
    const { store, twin } = await opened(t);
    const [first, second] = [newBatch(newAgentId()), newBatch(newAgentId())];
    await store.create(first);
    await store.create(second);
    const claim = await store.claim(first.id, HOUR_MS);
    t.truthy(claim);
    t.is((await store.update(first.id, { status: "in_progress", inProgressAt: 5 }, claim!)).status, "in_progress");
    await t.throwsAsync(store.update(second.id, { status: "in_progress" }, claim!), { instanceOf: BatchClaimLostError });
    t.is((await twin.get(second.id))?.status, "validating");
    await claim!.release();
    const refused = await t.throwsAsync(store.update(first.id, { status: "finalizing" }, claim!), { instanceOf: BatchClaimLostError });
    t.is(refused.batchId, first.id);
    t.like(await twin.get(first.id), { status: "in_progress", inProgressAt: 5 });
  });

  test(named("a claim whose lease ran out is taken by the other; the old holder's update is then refused"), async (t) => {
    const { store, twin } = await opened(t);
    const created = newBatch(newAgentId(), { status: "in_progress" });
    await store.create(created);
    const stale = await store.claim(created.id, 50);
    t.truthy(stale);
    const taken = await eventually(() => twin.claim(created.id, HOUR_MS), { what: "the claim after its lease ran out" });
    await t.throwsAsync(store.update(created.id, { status: "finalizing", finalizingAt: 1 }, stale!), { instanceOf: BatchClaimLostError });
    t.like(await twin.get(created.id), { status: "in_progress" });
    t.false("finalizingAt" in (await twin.get(created.id))!);
    t.is((await twin.update(created.id, { status: "finalizing", finalizingAt: 2 }, taken!)).finalizingAt, 2);
  });

  test(named("an update under a claim to a batch that ended meanwhile is refused with its status"), async (t) => {
    const { store, twin } = await opened(t);
    const created = newBatch(newAgentId(), { status: "in_progress" });
    await store.create(created);
    const claim = await store.claim(created.id, HOUR_MS);
    // Expired on the other instance, without the claim (as a client's cancel is made).
    await twin.update(created.id, { status: "expired", expiredAt: 9 });
    const ended = await t.throwsAsync(store.update(created.id, { status: "completed", outputFileId: "file-late" }, claim!), { instanceOf: BatchEndedError });
    t.is(ended.status, "expired");
    t.is(ended.batchId, created.id);
    t.like(await twin.get(created.id), { status: "expired", expiredAt: 9 });
    t.false("outputFileId" in (await twin.get(created.id))!);
  });

  test(named("a check sees the record the change applies to; one that throws refuses the change"), async (t) => {
    const { store, twin } = await opened(t);
    const created = newBatch(newAgentId(), { status: "in_progress" });
    await store.create(created);
    const claim = await store.claim(created.id, HOUR_MS);
    await store.addResult(created.id, lineResult(0, false), claim!);
    const seen: BatchRecord[] = [];
    await twin.update(created.id, { status: "cancelling", cancellingAt: 3 }, undefined, (current) => void seen.push(current));
    t.is(seen.length, 1);
    t.like(seen[0], { status: "in_progress", requestCounts: { total: 0, completed: 0, failed: 1 } });
    const refusal = new Error("batch already ended");
    await t.throwsAsync(
      twin.update(created.id, { status: "cancelled", cancelledAt: 4 }, undefined, (current) => {
        if (current.status === "cancelling") throw refusal;
      }),
      { is: refusal },
    );
    t.like(await store.get(created.id), { status: "cancelling", cancellingAt: 3 });
    t.false("cancelledAt" in (await store.get(created.id))!);
  });

  test(named("addResult counts completed and failed lines; a line recorded before is refused and not counted again"), async (t) => {
    const { store, twin } = await opened(t);
    const created = newBatch(newAgentId(), { status: "in_progress", requestCounts: { total: 5, completed: 0, failed: 0 } });
    await store.create(created);
    const claim = await store.claim(created.id, HOUR_MS);
    t.true(await store.addResult(created.id, lineResult(0), claim!));
    t.true(await store.addResult(created.id, lineResult(3, false), claim!));
    t.true(await store.addResult(created.id, lineResult(1), claim!));
    t.deepEqual((await twin.get(created.id))?.requestCounts, { total: 5, completed: 2, failed: 1 });
    t.false(await store.addResult(created.id, lineResult(3, true), claim!), "line 3 was recorded (as failed): not again");
    t.false(await store.addResult(created.id, lineResult(0), claim!));
    t.deepEqual((await twin.get(created.id))?.requestCounts, { total: 5, completed: 2, failed: 1 });
    t.deepEqual(await allResults(twin, created.id), [lineResult(0), lineResult(3, false), lineResult(1)]);
    // Two of the same line at once: one is recorded.
    const twice = await Promise.all([store.addResult(created.id, lineResult(4), claim!), store.addResult(created.id, lineResult(4, false), claim!)]);
    t.deepEqual(twice.sort(), [false, true]);
    t.deepEqual((await twin.get(created.id))?.requestCounts, { total: 5, completed: 3, failed: 1 });
    t.is((await allResults(twin, created.id)).length, 4);
  });

  test(named("addResult under a lost claim, or to an ended batch, is refused and records nothing"), async (t) => {
    const { store, twin } = await opened(t);
    const created = newBatch(newAgentId(), { status: "in_progress", requestCounts: { total: 3, completed: 0, failed: 0 } });
    const other = newBatch(newAgentId(), { status: "in_progress" });
    await store.create(created);
    await store.create(other);
    const stale = await store.claim(created.id, 50);
    const otherClaim = await store.claim(other.id, HOUR_MS);
    await t.throwsAsync(store.addResult(created.id, lineResult(0), otherClaim!), { instanceOf: BatchClaimLostError });
    const taken = await eventually(() => twin.claim(created.id, HOUR_MS), { what: "the claim after its lease ran out" });
    await t.throwsAsync(store.addResult(created.id, lineResult(0), stale!), { instanceOf: BatchClaimLostError });
    t.deepEqual((await twin.get(created.id))?.requestCounts, { total: 3, completed: 0, failed: 0 });
    t.deepEqual(await allResults(twin, created.id), []);
    t.true(await twin.addResult(created.id, lineResult(0), taken!), "the line was not recorded by the refused call");
    await store.update(created.id, { status: "cancelled", cancelledAt: 8 });
    const ended = await t.throwsAsync(twin.addResult(created.id, lineResult(1), taken!), { instanceOf: BatchEndedError });
    t.is(ended.status, "cancelled");
    t.deepEqual((await store.get(created.id))?.requestCounts, { total: 3, completed: 1, failed: 0 });
    t.deepEqual(await allResults(store, created.id), [lineResult(0)]);
  });

  test(named("results come back in the order they were recorded, however many (more than one chunk)"), async (t) => {
    const { store, twin } = await opened(t);
    const created = newBatch(newAgentId(), { status: "in_progress", requestCounts: { total: 1200, completed: 0, failed: 0 } });
    await store.create(created);
    const claim = await store.claim(created.id, HOUR_MS);
    // Not in index order: a line answered sooner is recorded sooner. Every 7th fails.
    const order = Array.from({ length: 1200 }, (_, n) => (n * 7919) % 1200);
    const expected = order.map((index) => lineResult(index, index % 7 !== 0));
    // Recorded as a runner does: several lines in flight at once, awaited in groups.
    for (let start = 0; start < expected.length; start += 100) {
      const recorded = await Promise.all(expected.slice(start, start + 100).map((result) => store.addResult(created.id, result, claim!)));
      t.true(recorded.every(Boolean));
    }
    t.deepEqual(await allResults(twin, created.id), expected);
    const failed = order.filter((index) => index % 7 === 0).length;
    t.deepEqual((await twin.get(created.id))?.requestCounts, { total: 1200, completed: 1200 - failed, failed });
  });

  test(named("dropResults forgets the results; the record and its counts stay"), async (t) => {
    const { store, twin } = await opened(t);
    const created = newBatch(newAgentId(), { status: "in_progress", requestCounts: { total: 2, completed: 0, failed: 0 } });
    const kept = newBatch(created.agentId, { status: "in_progress" });
    await store.create(created);
    await store.create(kept);
    const claim = await store.claim(created.id, HOUR_MS);
    const keptClaim = await store.claim(kept.id, HOUR_MS);
    await store.addResult(created.id, lineResult(0), claim!);
    await store.addResult(created.id, lineResult(1, false), claim!);
    await store.addResult(kept.id, lineResult(0), keptClaim!);
    const done = await store.update(created.id, { status: "completed", completedAt: 7, outputFileId: "file-out", errorFileId: "file-err" }, claim!);
    await twin.dropResults(created.id);
    t.deepEqual(await allResults(store, created.id), []);
    t.deepEqual(await store.get(created.id), done);
    t.deepEqual(done.requestCounts, { total: 2, completed: 1, failed: 1 });
    t.deepEqual(await allResults(store, kept.id), [lineResult(0)], "another batch's results stay");
    await twin.dropResults(created.id); // again: nothing to forget
  });

  test(named("a claim is exclusive until released, across instances; a released or expired one cannot be renewed"), async (t) => {
    const { store, twin } = await opened(t);
    const [created, other] = [newBatch(newAgentId()), newBatch(newAgentId())];
    await store.create(created);
    await store.create(other);
    const claim = await store.claim(created.id, HOUR_MS);
    t.truthy(claim);
    t.is(claim!.jobId, created.id);
    t.is(await twin.claim(created.id, HOUR_MS), null);
    t.is(await store.claim(created.id, HOUR_MS), null, "not even by the instance that holds it");
    t.truthy(await twin.claim(other.id, HOUR_MS), "a claim is per batch");
    t.true(await claim!.renew());
    await claim!.release();
    const taken = await twin.claim(created.id, HOUR_MS);
    t.truthy(taken);
    t.false(await claim!.renew(), "a released claim cannot be renewed");
    await claim!.release(); // releasing it again lets nobody else's claim go
    t.is(await store.claim(created.id, HOUR_MS), null);
    t.true(await taken!.renew());
    // An expired claim: the batch can be claimed again, and the old one does not renew.
    const third = newBatch(newAgentId());
    await store.create(third);
    const stale = await store.claim(third.id, 50);
    t.truthy(stale);
    await eventually(() => twin.claim(third.id, HOUR_MS), { what: "the claim after its lease ran out" });
    t.false(await stale!.renew());
    await stale!.release();
    t.is(await store.claim(third.id, HOUR_MS), null, "releasing a lost claim does not let the new holder's go");
    await t.throwsAsync(store.claim(third.id, 0), { instanceOf: RangeError });
  });

  test(named("countByStatus follows every create and status change"), async (t) => {
    const { store, twin } = await opened(t);
    t.deepEqual([...(await twin.countByStatus())], []);
    const batches = [newBatch(newAgentId()), newBatch(newAgentId()), newBatch(newAgentId()), newBatch(newAgentId())];
    for (const batch of batches) await store.create(batch);
    await store.create(newBatch(newAgentId(), { status: "failed" }));
    await store.update(batches[0]!.id, { status: "in_progress" });
    await store.update(batches[1]!.id, { status: "in_progress" });
    await store.update(batches[1]!.id, { status: "finalizing" });
    await store.update(batches[1]!.id, { status: "completed" });
    await store.update(batches[2]!.id, { status: "cancelling" });
    await store.update(batches[2]!.id, { metadata: null });
    const counts = await twin.countByStatus();
    t.deepEqual(Object.fromEntries([...counts].filter(([, count]) => count > 0)), { validating: 1, in_progress: 1, completed: 1, cancelling: 1, failed: 1 });
  });
}
