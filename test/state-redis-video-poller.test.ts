// Two video pollers sharing one Redis job store stand for two `gw serve` instances (issue 23): each
// has its own RedisVideoJobStore, VideoService and VideoPoller on one Redis, over one real gateway's
// services (its ledger, usage log, storage: the state the other ports share) and the Sora-shaped
// fake vendor. Driven by overlapping ticks of both, every job is submitted once, its clip
// downloaded once and billed once; a job claimed by an instance that then died is left alone while
// the claim holds and finished by the other once the lease has run out, billed once.
import test, { type ExecutionContext } from "ava";
import { homePaths } from "../src/config/paths.js";
import type { ServiceContext } from "../src/gateway/service-context.js";
import type { ToolCallContext } from "../src/gateway/upstream-calls/tool-provider-call.js";
import { VideoPoller } from "../src/gateway/video/video-poller.js";
import { type VideoJobBody, VideoService } from "../src/gateway/video/video-service.js";
import { RedisVideoJobStore } from "../src/store/redis-video-jobs.js";
import { StateStoreFailure } from "../src/store/state-failure.js";
import { periodOf, UsageLog } from "../src/store/usage-log.js";
import { newVideoJobId, type VideoJobRecord } from "../src/store/video-jobs.js";
import { type FakeOpenAIVideo, startFakeOpenAIVideo } from "./fakes/openai-video.js";
import type { VideoTaskScript } from "./fakes/video-tasks.js";
import { eventually } from "./helpers/eventually.js";
import { addKey, makeHome, quietLogger, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { startRedis, type TestRedis } from "./helpers/redis-server.js";

const OPENAI_KEY = "sk-video-secret-789";
const SECONDS = 4;
const PRICE_PER_SECOND = 100_000;

let redis: TestRedis;
let prefixes = 0;

test.before(async () => {
  redis = await startRedis();
});

test.after.always(async () => {
  await redis?.stop();
});

/** One gw instance's video side: its own connection and store on the shared Redis. */
interface Instance {
  jobs: RedisVideoJobStore;
  service: VideoService;
  poller: VideoPoller;
}

interface Setup {
  gateway: TestGateway;
  home: string;
  sora: FakeOpenAIVideo;
  clock: { offsetMs: number };
  prefix: string;
  a: Instance;
  b: Instance;
  context: ToolCallContext;
  key: string;
}

async function start(t: ExecutionContext, script: VideoTaskScript = { succeedAfterPolls: 2 }, concurrencyPerProvider = 2): Promise<Setup> {
  const sora = await startFakeOpenAIVideo({ apiKey: OPENAI_KEY, ...script });
  t.teardown(() => sora.close());
  const home = await makeHome((config) => {
    config.providers = { openai: { type: "openai", baseUrl: sora.url, apiKey: OPENAI_KEY } };
    config.tools.video = { default: "openai/sora-2", allow: ["openai/sora-2"] };
    // The gateway's own schedule stays out of it; the test drives both pollers' ticks.
    config.video = { tickSeconds: 60, pollIntervalSeconds: 1, concurrencyPerProvider };
    config.upstream = { ...config.upstream, retries: 0 };
  });
  const key = await addKey(home, "director", "pro");
  const clock = { offsetMs: 0 };
  const gateway = await startTestGateway(home, { now: () => Date.now() + clock.offsetMs });
  t.teardown(() => gateway.shutdown());
  await gateway.gateway.videoPoller.stop();
  // The services every instance would share (one ledger, usage log and storage here).
  const shared = (gateway.gateway.video as unknown as { shared: ServiceContext }).shared;
  const prefix = `p${prefixes++}:`;
  const instance = (): Instance => {
    const jobs = new RedisVideoJobStore(redis.client(), prefix);
    const service = new VideoService(shared, jobs);
    const poller = new VideoPoller(shared, jobs, service);
    t.teardown(() => poller.stop());
    return { jobs, service, poller };
  };
  const caller = await gateway.gateway.authenticator.authenticate(key);
  const plan = gateway.gateway.plans.of(caller);
  const context: ToolCallContext = { caller, planName: plan.name, plan: plan.limits, requestId: "req-test", signal: AbortSignal.timeout(60_000) };
  return { gateway, home, sora, clock, prefix, a: instance(), b: instance(), context, key };
}

const submit = (instance: Instance, setup: Setup, prompt: string): Promise<VideoJobBody> =>
  instance.service.submit({ prompt, model: "openai/sora-2", duration_seconds: SECONDS }, setup.context);

/** Both pollers tick at once, and again while what they started is in flight; then the clock moves past the next poll. */
async function round(setup: Setup): Promise<void> {
  const { a, b } = setup;
  await Promise.all([a.poller.tick(), b.poller.tick(), a.poller.tick(), b.poller.tick()]);
  await Promise.all([b.poller.tick(), a.poller.tick()]);
  await Promise.all([a.poller.idle(), b.poller.idle()]);
  setup.clock.offsetMs += 1100;
}

function videoRows(home: string) {
  return UsageLog.readRows(homePaths(home).usageDir, periodOf(new Date())).filter((row) => row.endpoint === "video.generations");
}

const submits = (sora: FakeOpenAIVideo) => sora.requests.filter((request) => request.method === "POST" && request.path === "/v1/videos");
const downloads = (sora: FakeOpenAIVideo, taskId: string) => sora.requests.filter((request) => request.path === `/v1/videos/${taskId}/content`);

async function allEnded(setup: Setup, ids: string[]): Promise<VideoJobRecord[]> {
  return eventually(
    async () => {
      await round(setup);
      return Promise.all(ids.map(async (id) => (await setup.b.jobs.get(id)) as VideoJobRecord));
    },
    {
      until: (jobs) => jobs.every((job) => ["SUCCEEDED", "FAILED", "CANCELLED"].includes(job.status)),
      what: "every job to end",
      timeoutMs: 90_000,
      intervalMs: 50,
    },
  );
}

test("two pollers on one Redis: every job submitted once, downloaded once, billed once", async (t) => {
  const setup = await start(t);
  const ids: string[] = [];
  for (let index = 0; index < 4; index++) ids.push((await submit(index % 2 === 0 ? setup.a : setup.b, setup, `shot ${index}`)).id);

  const jobs = await allEnded(setup, ids);
  for (const job of jobs) t.is(job.status, "SUCCEEDED", JSON.stringify(job));

  t.is(submits(setup.sora).length, ids.length, "one submit per job");
  const prompts = submits(setup.sora).map((request) => request.json.prompt as string);
  t.deepEqual([...prompts].sort(), ["shot 0", "shot 1", "shot 2", "shot 3"]);
  for (const job of jobs) t.is(downloads(setup.sora, job.taskId!).length, 1, `one download of ${job.id}`);
  const rows = videoRows(setup.home);
  t.deepEqual(rows.map((row) => row.requestId).sort(), [...ids].sort(), "one usage row per job");
  for (const row of rows) t.is(row.credits, SECONDS * PRICE_PER_SECOND);
  t.deepEqual(Object.fromEntries(await setup.a.jobs.countByStatus()), { SUCCEEDED: ids.length });
  t.deepEqual(await setup.a.jobs.active(), []);
});

test("video.concurrencyPerProvider counts across instances: while another instance holds the provider's one slot, a poller starts nothing of it", async (t) => {
  const setup = await start(t, { succeedAfterPolls: 2 }, 1);
  const queued = await submit(setup.b, setup, "waits its turn");
  // Instance a works some job of the same provider: its claim holds the provider's one slot.
  const working = await setup.a.jobs.claim(newVideoJobId(), 60_000, { group: "openai", limit: 1 });
  t.truthy(working);
  await setup.b.poller.tick();
  await setup.b.poller.idle();
  t.is(submits(setup.sora).length, 0, "nothing submitted while the slot is held elsewhere");
  t.like(await setup.b.jobs.get(queued.id), { status: "QUEUED" });
  await working!.release();
  await setup.b.poller.tick();
  await setup.b.poller.idle();
  t.is(submits(setup.sora).length, 1, "submitted once the slot is free");
  const [ended] = await allEnded(setup, [queued.id]);
  t.is(ended!.status, "SUCCEEDED");
  t.is(videoRows(setup.home).filter((row) => row.requestId === queued.id).length, 1, "billed once");
});

test("a job claimed by an instance that died is left alone until its lease runs out, then finished by the other, billed once", async (t) => {
  const setup = await start(t);
  const { id } = await submit(setup.a, setup, "orphaned");
  // Instance A claimed the job and was SIGKILLed: its claim is never renewed or released.
  const dead = await setup.a.jobs.claim(id, 60_000);
  t.truthy(dead);
  await setup.b.poller.tick();
  await setup.b.poller.idle();
  t.is(submits(setup.sora).length, 0, "not worked while the dead instance's claim holds");
  t.is((await setup.b.jobs.get(id))!.status, "QUEUED");

  // The lease runs out (as it would 60 s on, without a renewal).
  const client = redis.client();
  t.is(await client.pexpire(`${setup.prefix}video:claim:${id}`, 1), 1);
  const [job] = await eventually(
    async () => {
      await setup.b.poller.tick();
      await setup.b.poller.idle();
      setup.clock.offsetMs += 1100;
      return [(await setup.b.jobs.get(id)) as VideoJobRecord];
    },
    { until: ([each]) => each!.status === "SUCCEEDED" || each!.status === "FAILED", what: `job ${id} to end`, timeoutMs: 90_000, intervalMs: 50 },
  );
  t.is(job!.status, "SUCCEEDED", JSON.stringify(job));
  t.is(submits(setup.sora).length, 1);
  t.is(videoRows(setup.home).filter((row) => row.requestId === id).length, 1);
  // What the dead instance would write if it came back is refused.
  await t.throwsAsync(setup.a.jobs.update(id, { status: "FAILED", error: "late" }, dead!));
  t.is((await setup.a.jobs.get(id))!.status, "SUCCEEDED");
});

test("a job cancelled on one instance while the other downloads its clip is neither stored nor billed", async (t) => {
  const setup = await start(t, { succeedAfterPolls: 0, clipChunkDelayMs: 1500 });
  const agentId = setup.context.caller.agent.id;
  const allowance = setup.context.plan.monthlyCredits;
  const { id } = await submit(setup.a, setup, "cancelled elsewhere");
  await setup.a.poller.tick();
  await setup.a.poller.idle();
  t.is((await setup.a.jobs.get(id))!.status, "SUBMITTED");
  // Its first poll falls due; A finds the clip ready and starts downloading it.
  setup.clock.offsetMs += 1100;
  await setup.a.poller.tick();
  await eventually(() => setup.sora.requests.some((request) => request.path.endsWith("/content")), "the clip's download");
  const cancelled = await setup.b.service.cancel(agentId, id, setup.gateway.url);
  t.is(cancelled.status, "CANCELLED");
  await setup.a.poller.idle();
  t.like(await setup.b.jobs.get(id), { status: "CANCELLED", error: "cancelled by client" });
  t.is((await setup.b.jobs.get(id))!.billing, undefined);
  t.deepEqual(videoRows(setup.home), []);
  t.is((await setup.gateway.gateway.ledger.planBalance(agentId, allowance)).remaining, allowance, "the hold is given back");
  const stored = await fetch(`${setup.gateway.url}/v1/storage/files`, { headers: { authorization: `Bearer ${setup.key}` } });
  t.is(stored.status, 200);
  t.deepEqual(((await stored.json()) as { data: unknown[] }).data, [], "the clip was not kept");
});

test("a tick while the job store fails (Redis down) is told in the log, and the next tick works again", async (t) => {
  const setup = await start(t);
  const shared = (setup.gateway.gateway.video as unknown as { shared: ServiceContext }).shared;
  let failing = true;
  const jobs = new RedisVideoJobStore(redis.client(), setup.prefix);
  const flaky = new Proxy(jobs, {
    get: (target, name, receiver) =>
      name === "active" && failing
        ? () => Promise.reject(new StateStoreFailure("Redis videoJobs.active: no answer in time"))
        : Reflect.get(target, name, receiver),
  });
  const poller = new VideoPoller(shared, flaky, new VideoService(shared, flaky));
  t.teardown(() => poller.stop());
  const job = await submit(setup.a, setup, "a lighthouse at dusk");
  await t.notThrowsAsync(poller.tick());
  t.true(quietLogger.lines.includes("warn video jobs: looking for work failed: the state store failed: Redis videoJobs.active: no answer in time"));
  t.is(submits(setup.sora).length, 0, "nothing was started while the store failed");
  failing = false;
  await poller.tick();
  await poller.idle();
  t.is(submits(setup.sora).length, 1, "the next tick found the job");
  t.truthy(await jobs.get(job.id));
});
