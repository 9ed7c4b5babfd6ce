// `gw migrate --to redis`: an embedded home, used as a user uses one (keys made with `gw keys
// create`, chat calls billed through the server, files uploaded, a project, a stored response, and
// the rows of an earlier month in its usage log), moved into a real redis-server and an S3 bucket
// (s3rver), then served by two instances on that config: the same keys work, the same credits are
// used, the files download byte for byte, the conversation goes on. Run again, nothing is doubled;
// refused while a `gw serve` runs on the home, and on a home already on Redis.
import { randomBytes } from "node:crypto";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import test from "ava";
import sharp from "sharp";
import { DEFAULT_VIDEO_MODEL_INPUTS } from "../src/config/default-video-models.js";
import { homePaths } from "../src/config/paths.js";
import type { MetadataData } from "../src/store/records.js";
import { periodOf, type UsageRow } from "../src/store/usage-log.js";
import { storageApi } from "./_storage.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { eventually } from "./helpers/eventually.js";
import { gw, json, makeHome, spawnServe, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { startRedis, type TestRedis } from "./helpers/redis-server.js";
import { startS3, type TestS3 } from "./helpers/s3-server.js";
import { tempDir } from "./helpers/temp-dirs.js";

const BUCKET = "gw-migrated";
const PREFIX = "mg:";
const S3_ENV = { AWS_ACCESS_KEY_ID: "S3RVER", AWS_SECRET_ACCESS_KEY: "S3RVER" };

let redis: TestRedis;
let bucket: TestS3;
let s3Endpoint: string;
let openai: FakeOpenAI;

test.before(async () => {
  redis = await startRedis();
  bucket = await startS3([BUCKET]);
  s3Endpoint = bucket.endpoint;
  openai = await startFakeOpenAI();
  openai.set({ usage: { prompt_tokens: 7, completion_tokens: 13 } });
});

test.after.always(async () => {
  await openai?.close();
  await bucket?.close();
  await redis?.stop();
});

function homeConfig(config: Record<string, any>): void {
  config.providers = { up: { type: "openai", baseUrl: openai.url, apiKey: "sk-up" } };
  config.routes = [{ prefix: "m/", provider: "up", priority: 1 }];
  config.models = [{ id: "m/chat", name: "Chat", context_length: 100_000, max_output_tokens: 1000, pricing: { input_per_mtok: 3, output_per_mtok: 15 } }];
  config.plans = { roomy: { monthlyCredits: 1_000_000_000, freeTierOnly: false, requestsPerMinute: 6000 } };
  // Video on the local engine (ffmpeg), billed per second of clip.
  config.providers.local = { type: "local" };
  config.video = { tickSeconds: 1, pollIntervalSeconds: 1 };
  const kenburns = DEFAULT_VIDEO_MODEL_INPUTS.find((model) => model.id === "local/kenburns")!;
  config.catalog = {
    video: [{ ...kenburns, id: "local/kenburns-priced", freeTier: false, pricing: { perSecond: { "480p": 700, "720p": 700, "1080p": 700 } } }],
  };
  config.tools.video = { default: "local/kenburns-priced", allow: ["local/kenburns-priced"] };
}

const post = (gateway: TestGateway, key: string, pathname: string, body: unknown) =>
  fetch(`${gateway.url}${pathname}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
const getJson = async (gateway: TestGateway, key: string, pathname: string) => {
  const response = await fetch(`${gateway.url}${pathname}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, body: (await response.json()) as any };
};

/** What a key reads of its spend: the agent's credits this month, and the key's over its life (its budget is lifetime). */
async function spend(gateway: TestGateway, key: string): Promise<{ month: number; lifetime: number }> {
  const { status, body } = await getJson(gateway, key, "/v1/key");
  if (status !== 200) throw new Error(`GET /v1/key answered ${status}: ${JSON.stringify(body)}`);
  return { month: body.data.plan_credits.spent, lifetime: body.data.budget.spent };
}

/** The month `back` months before this one. */
function earlierPeriod(back: number): string {
  const now = new Date();
  return periodOf(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 15)));
}

async function redisCounts(agentIds: string[], periods: string[]): Promise<Record<string, number>> {
  const client = redis.client();
  const counts: Record<string, number> = {};
  for (const period of periods) {
    counts[`stream ${period}`] = await client.xlen(`${PREFIX}usage:${period}`);
    for (const id of agentIds) counts[`${id} ${period}`] = Number((await client.hget(`${PREFIX}{a:${id}}:spent:${period}`, "plan")) ?? 0);
  }
  const totals = await client.hgetall(`${PREFIX}files:totals`);
  counts.files = Number(totals.files ?? 0);
  counts.bytes = Number(totals.bytes ?? 0);
  return counts;
}

test.serial("an embedded home moves into Redis and S3 without loss, and two instances serve it as it was", async (t) => {
  const home = await makeHome(homeConfig);
  const paths = homePaths(home);
  // Keys as a user makes them; the budget is lifetime, so /v1/key reads each key's spend over every month.
  const keys: Record<string, string> = {};
  for (const agent of ["ann", "bob"]) {
    const created = await gw(["keys", "create", "--agent", agent, "--plan", "roomy", "--budget", "500000000", "--budget-period", "total", "--json"], { home });
    t.is(created.code, 0, created.stderr);
    keys[agent] = json<{ key: string }>(created).key;
  }
  const metadata = JSON.parse(readFileSync(paths.metadata, "utf8")) as MetadataData;
  const agentId = (name: string) => metadata.agents.find((agent) => agent.name === name)!.id;
  const keyPrefix = (name: string) => metadata.keys.find((key) => key.agentId === agentId(name))!.prefix;

  // Rows of two months ago, as the usage log stores them (one JSON line each, in the month's file).
  const earlier = earlierPeriod(2);
  const earlierRows: UsageRow[] = [1, 2, 3].map((n) => ({
    id: `01JEARLIER${n}`,
    time: `${earlier}-0${n}T10:00:00.000Z`,
    agent: agentId(n === 3 ? "bob" : "ann"),
    keyPrefix: keyPrefix(n === 3 ? "bob" : "ann"),
    endpoint: "chat",
    model: "m/chat",
    provider: "up",
    units: { input_tokens: 100 * n, output_tokens: 10 * n },
    credits: 1000 * n,
    requestId: `req-earlier-${n}`,
  }));
  writeFileSync(path.join(paths.usageDir, `${earlier}.jsonl`), earlierRows.map((row) => `${JSON.stringify(row)}\n`).join(""));

  // The home in use: billed chat calls, files, a project, a stored response.
  const embedded = await startTestGateway(home);
  for (const [agent, calls] of [
    ["ann", 3],
    ["bob", 2],
  ] as const)
    for (let call = 0; call < calls; call += 1) {
      const response = await post(embedded, keys[agent]!, "/v1/chat/completions", {
        model: "m/chat",
        max_tokens: 50,
        messages: [{ role: "user", content: `hi ${call}` }],
      });
      t.is(response.status, 200, await response.text());
    }
  const annFiles = storageApi(embedded, keys.ann!);
  const big = randomBytes(300 * 1024);
  const small = Buffer.from("a small text file\n");
  const bigFile = (await annFiles.upload("big.bin", big)).body.data;
  const smallFile = (await annFiles.upload("small.txt", small, "text/plain")).body.data;
  const linkBefore = (await annFiles.url(bigFile.id)).body.data.url as string;
  const project = await post(embedded, keys.ann!, "/v1/projects", { name: "posters" });
  t.is(project.status, 201, await project.clone().text());
  const projectId = ((await project.json()) as any).project_id as string;
  openai.enqueue({ content: "Remember: the password is swordfish.", usage: { prompt_tokens: 5, completion_tokens: 6 } });
  const stored = await post(embedded, keys.ann!, "/v1/responses", { model: "m/chat", input: "Tell me the password", store: true });
  t.is(stored.status, 200, await stored.clone().text());
  const responseId = ((await stored.json()) as any).id as string;
  const photo = await sharp({ create: { width: 320, height: 200, channels: 3, background: { r: 200, g: 120, b: 40 } } })
    .png()
    .toBuffer();
  const video = await post(embedded, keys.bob!, "/v1/video/generations", {
    prompt: "a slow look at an orange wall",
    image_url: `data:image/png;base64,${photo.toString("base64")}`,
    duration_seconds: 1,
    resolution: "480p",
    ratio: "16:9",
  });
  t.is(video.status, 202, await video.clone().text());
  const videoId = ((await video.json()) as any).id as string;
  const job = await eventually(async () => (await getJson(embedded, keys.bob!, `/v1/video/jobs/${videoId}`)).body, {
    until: (body: any) => ["SUCCEEDED", "FAILED", "CANCELLED"].includes(body.status),
    what: `video job ${videoId}`,
    timeoutMs: 60_000,
    intervalMs: 200,
  });
  t.is(job.status, "SUCCEEDED", JSON.stringify(job));
  const clip = Buffer.from(await (await fetch(job.resultUrl)).arrayBuffer());
  const spentBefore = { ann: await spend(embedded, keys.ann!), bob: await spend(embedded, keys.bob!) };
  const quotaAnswer = await annFiles.quota();
  const quotaBefore = quotaAnswer.body.data.usedBytes as number;
  const operationsBefore = quotaAnswer.headers.get("x-service-storage-operations-used");
  t.is(operationsBefore, "2");
  await embedded.shutdown();
  t.is(spentBefore.ann.lifetime, spentBefore.ann.month + 1000 + 2000);
  t.is(spentBefore.bob.lifetime, spentBefore.bob.month + 3000);

  const migrateArgs = [
    "migrate",
    "--to",
    "redis",
    "--redis-url",
    redis.socket,
    "--prefix",
    PREFIX,
    "--blobs-to",
    "s3",
    "--s3-endpoint",
    s3Endpoint,
    "--s3-bucket",
    BUCKET,
    "--json",
  ];
  const embeddedConfig = readFileSync(paths.config, "utf8");

  // Refused while a server runs on the home; nothing reaches Redis.
  const serving = await spawnServe(home);
  const refused = await gw(migrateArgs, { home, env: S3_ENV });
  serving.child.kill("SIGTERM");
  await serving.exited;
  t.not(refused.code, 0);
  t.regex(refused.stderr, /another gw serve \(pid \d+/);
  t.deepEqual(await redis.client().keys(`${PREFIX}*`), []);
  t.is(readFileSync(paths.config, "utf8"), embeddedConfig);

  const migrated = await gw(migrateArgs, { home, env: S3_ENV });
  t.is(migrated.code, 0, migrated.stderr);
  const summary = json<any>(migrated);
  t.like(summary, {
    agents: 2,
    keys: 2,
    projects: 3, // ann's default and posters, and bob's default (made by the video job)
    responses: { copied: 1, expired: 0 },
    videoJobs: { jobs: 1, running: 0 },
    files: { records: 3, bytes: big.length + small.length + clip.length, blobsCopied: 3 },
  });
  t.deepEqual(
    summary.usage.months.map((month: { period: string }) => month.period),
    [earlier, periodOf(new Date())],
  );
  for (const name of ["ann", "bob"]) {
    const balance = summary.balances.find((entry: { name: string }) => entry.name === name);
    t.like(balance, { monthBefore: spentBefore[name as "ann"].month, monthAfter: spentBefore[name as "ann"].month });
    t.is(balance.lifetimeAfter, balance.lifetimeBefore);
  }
  // The home now says Redis and S3; the bucket's credentials only as references, the url as given.
  const config = JSON.parse(readFileSync(paths.config, "utf8"));
  t.deepEqual(config.state, { driver: "redis", url: redis.socket, prefix: PREFIX });
  t.like(config.storage, {
    driver: "s3",
    options: { endpoint: s3Endpoint, bucket: BUCKET, accessKeyId: "${AWS_ACCESS_KEY_ID}", secretAccessKey: "${AWS_SECRET_ACCESS_KEY}" },
  });
  t.false(readFileSync(paths.config, "utf8").includes("S3RVER"));

  // Run again (as after a run cut short before the switch): nothing is written twice.
  const ids = [agentId("ann"), agentId("bob")];
  const periods = [earlier, periodOf(new Date())];
  const countsAfterFirst = await redisCounts(ids, periods);
  t.is(countsAfterFirst[`stream ${earlier}`], 3);
  t.is(countsAfterFirst[`${agentId("ann")} ${earlier}`], 3000);
  t.is(countsAfterFirst[`${agentId("bob")} ${earlier}`], 3000);
  const migratedConfig = readFileSync(paths.config, "utf8");
  writeFileSync(paths.config, embeddedConfig);
  const again = await gw(migrateArgs, { home, env: S3_ENV });
  t.is(again.code, 0, again.stderr);
  t.like(json<any>(again), { files: { blobsCopied: 0, blobsPresent: 3 } });
  t.deepEqual(await redisCounts(ids, periods), countsAfterFirst);
  t.is(readFileSync(paths.config, "utf8"), migratedConfig);

  // A home already on Redis is refused.
  const onRedis = await gw(migrateArgs, { home, env: S3_ENV });
  t.not(onRedis.code, 0);
  t.regex(onRedis.stderr, /already keeps its state in Redis/);

  // Two instances on the migrated config: this home, and another with only its config.json.
  const otherHome = tempDir("gw-migrated-peer-");
  copyFileSync(paths.config, path.join(otherHome, "config.json"));
  process.env.AWS_ACCESS_KEY_ID = S3_ENV.AWS_ACCESS_KEY_ID;
  process.env.AWS_SECRET_ACCESS_KEY = S3_ENV.AWS_SECRET_ACCESS_KEY;
  const instances = [await startTestGateway(home), await startTestGateway(otherHome)];
  try {
    for (const instance of instances) {
      t.deepEqual({ ann: await spend(instance, keys.ann!), bob: await spend(instance, keys.bob!) }, spentBefore);
      const files = storageApi(instance, keys.ann!);
      const quota = await files.quota();
      t.is(quota.body.data.usedBytes, quotaBefore);
      t.is(quota.headers.get("x-service-storage-operations-used"), operationsBefore);
      for (const [file, bytes] of [
        [bigFile, big],
        [smallFile, small],
      ] as const) {
        const link = (await files.url(file.id)).body.data.url as string;
        const download = await fetch(link);
        t.is(download.status, 200);
        t.true(Buffer.from(await download.arrayBuffer()).equals(bytes));
      }
      // A link the embedded home signed still downloads (its signing key came along).
      const old = new URL(linkBefore);
      const oldDownload = await fetch(`${instance.url}${old.pathname}${old.search}`);
      t.is(oldDownload.status, 200);
      t.true(Buffer.from(await oldDownload.arrayBuffer()).equals(big));
      const projects = await getJson(instance, keys.ann!, "/v1/projects");
      t.true(projects.body.data.some((entry: { project_id: string; name: string }) => entry.project_id === projectId && entry.name === "posters"));
      t.is((await getJson(instance, keys.ann!, `/v1/responses/${responseId}`)).status, 200);
      // The finished video job, and its clip behind the link it answers with.
      const migratedJob = (await getJson(instance, keys.bob!, `/v1/video/jobs/${videoId}`)).body;
      t.like(migratedJob, { id: videoId, status: "SUCCEEDED" });
      t.true(Buffer.from(await (await fetch(migratedJob.resultUrl)).arrayBuffer()).equals(clip));
    }
    // The conversation goes on through the second instance.
    openai.enqueue({ content: "It was swordfish.", usage: { prompt_tokens: 9, completion_tokens: 4 } });
    const followUp = await post(instances[1]!, keys.ann!, "/v1/responses", { model: "m/chat", input: "What was it?", previous_response_id: responseId });
    t.is(followUp.status, 200, await followUp.clone().text());
    const sent = JSON.stringify(openai.requests.at(-1)?.body);
    t.true(sent.includes("swordfish"), sent);
  } finally {
    for (const instance of instances) await instance.shutdown();
  }
});

test.serial("a home whose files are on its own disk must say where they go; an unreachable Redis is refused; nothing is changed", async (t) => {
  const home = await makeHome(homeConfig);
  const before = readFileSync(homePaths(home).config, "utf8");
  const noBlobs = await gw(["migrate", "--to", "redis", "--redis-url", redis.socket, "--prefix", "nb:"], { home });
  t.not(noBlobs.code, 0);
  t.regex(noBlobs.stderr, /--blobs-to s3/);
  const unreachable = await gw(
    ["migrate", "--to", "redis", "--redis-url", "redis://:hunter2secret@127.0.0.1:1/0", "--blobs-to", "fs", "--blobs-dir", tempDir("gw-blobs-")],
    { home },
  );
  t.not(unreachable.code, 0);
  t.regex(unreachable.stderr, /cannot be reached/);
  t.false(unreachable.stderr.includes("hunter2secret"));
  t.is(readFileSync(homePaths(home).config, "utf8"), before);
  t.deepEqual(await redis.client().keys("nb:*"), []);
});
