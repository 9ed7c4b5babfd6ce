// The poller's retry rule is the gateway's one rule (isRetryableStatus: 429, 408, 409, 5xx): a
// vendor's 409 on a poll (a lock on concurrent requests) is passing, so the job polls again and
// succeeds, billed once, where it used to fail.
import test from "ava";
import { homePaths } from "../src/config/paths.js";
import { periodOf, UsageLog } from "../src/store/usage-log.js";
import { startFakeOpenAIVideo } from "./fakes/openai-video.js";
import { eventually } from "./helpers/eventually.js";
import { addKey, makeHome, startTestGateway } from "./helpers/gateway-harness.js";

const OPENAI_KEY = "sk-video-secret-409";

test("a vendor 409 on a poll is passing: the job polls again and succeeds, billed once", async (t) => {
  const sora = await startFakeOpenAIVideo({ apiKey: OPENAI_KEY, pollError: { status: 409, count: 1 } });
  t.teardown(() => sora.close());
  const home = await makeHome((config) => {
    config.providers = { openai: { type: "openai", baseUrl: sora.url, apiKey: OPENAI_KEY } };
    config.tools.video = { default: "openai/sora-2", allow: ["openai/sora-2"] };
    config.video = { tickSeconds: 1, pollIntervalSeconds: 1 };
    config.upstream = { ...config.upstream, retries: 0 };
  });
  const key = await addKey(home, "director", "pro");
  const gateway = await startTestGateway(home);
  t.teardown(() => gateway.shutdown());
  const call = async (method: string, route: string, body?: unknown) => {
    const response = await fetch(`${gateway.url}${route}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as { id: string; status: string; error?: string } };
  };

  const submitted = await call("POST", "/v1/video/generations", { prompt: "through the lock", model: "openai/sora-2" });
  t.is(submitted.status, 202, JSON.stringify(submitted.body));
  const job = await eventually(async () => (await call("GET", `/v1/video/jobs/${submitted.body.id}`)).body, {
    until: (body) => ["SUCCEEDED", "FAILED", "CANCELLED"].includes(body.status),
    what: `job ${submitted.body.id}`,
    intervalMs: 100,
  });
  t.is(job.status, "SUCCEEDED", JSON.stringify(job));
  const task = [...sora.tasks.values()][0];
  t.is(task?.erroredPolls, 1);
  const rows = UsageLog.readRows(homePaths(home).usageDir, periodOf(new Date())).filter((row) => row.endpoint === "video.generations");
  t.deepEqual(
    rows.map((row) => row.requestId),
    [submitted.body.id],
  );
});
