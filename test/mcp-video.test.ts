// The MCP video tools through the official SDK's own client, with the local ffmpeg engine:
// video_generate returns the queued job; video_status follows it to SUCCEEDED and gives the
// clip's signed link; refusals are tool errors carrying the HTTP code; another agent's job is
// not found.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import test from "ava";
import sharp from "sharp";
import { eventually } from "./helpers/eventually.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

let gateway: TestGateway;
let home: string;
let photo: string;

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: "gw-video-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

test.before(async () => {
  home = await makeHome((config) => {
    config.providers = { local: { type: "local" } };
    config.video = { tickSeconds: 1, pollIntervalSeconds: 1 };
  });
  gateway = await startTestGateway(home);
  const png = await sharp({ create: { width: 640, height: 400, channels: 3, background: { r: 200, g: 60, b: 90 } } })
    .png()
    .toBuffer();
  photo = `data:image/png;base64,${png.toString("base64")}`;
});

test.after.always(async () => {
  await gateway?.shutdown();
});

test.serial("video_generate queues a job; video_status follows it to SUCCEEDED with a link to the clip", async (t) => {
  const client = await connect(await addKey(home, "mcp-director", "pro"));
  try {
    const started = await call(client, "video_generate", { prompt: "a calm pan", image_url: photo, duration_seconds: 1, resolution: "480p" });
    t.falsy(started.isError, JSON.stringify(started.content));
    const job = started.structuredContent as { id: string; status: string; model: string };
    t.like(job, { status: "QUEUED", model: "local/kenburns" });
    const status = await eventually(
      async () => {
        const result = await call(client, "video_status", { id: job.id });
        t.falsy(result.isError, JSON.stringify(result.content));
        return result.structuredContent as { status: string; resultUrl?: string; resultExpiresAt?: string };
      },
      { until: (answer) => ["SUCCEEDED", "FAILED", "CANCELLED"].includes(answer.status), what: `job ${job.id} to finish`, intervalMs: 300 },
    );
    t.is(status.status, "SUCCEEDED", JSON.stringify(status));
    t.truthy(status.resultExpiresAt);
    const clip = await fetch(status.resultUrl!);
    t.is(clip.status, 200);
    t.is(clip.headers.get("content-type"), "video/mp4");
    t.true((await clip.arrayBuffer()).byteLength > 1000);
  } finally {
    await client.close();
  }
});

test.serial("refusals are tool errors with the HTTP code; another agent's job is not found", async (t) => {
  const client = await connect(await addKey(home, "mcp-other", "pro"));
  try {
    const cases: Array<[string, Record<string, unknown>, string, number]> = [
      ["video_generate", { prompt: "no photo" }, "invalid_parameter", 400],
      ["video_generate", { prompt: "x", image_url: photo, duration_seconds: 99 }, "invalid_parameter", 400],
      ["video_status", { id: "vid_01ARZ3NDEKTSV4RRFFQ69G5FAV" }, "video_job_not_found", 404],
    ];
    for (const [tool, args, code, status] of cases) {
      const result = await call(client, tool, args);
      t.true(result.isError, `${tool} ${code}`);
      const text = result.content[0]?.type === "text" ? result.content[0].text : "{}";
      const envelope = JSON.parse(text) as { error: { code: string; status: number } };
      t.is(envelope.error.code, code);
      t.is(envelope.error.status, status);
    }
  } finally {
    await client.close();
  }
});
