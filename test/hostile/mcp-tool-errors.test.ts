// Hostile and fault cases for the MCP tools, through the official SDK client after `tools/list`:
// once the client knows each tool's outputSchema it validates every callTool result against it,
// so a tool error must be a result it accepts (isError, the gateway envelope readable from the
// text) instead of a -32602 schema failure that hides the real code. Non-object `arguments` must
// be a clear JSON-RPC invalid-params error, not an internal error with a validation dump.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import test, { type ExecutionContext } from "ava";
import { pngFile } from "../fakes/image-files.js";
import { type FakeOpenAI, startFakeOpenAI } from "../fakes/openai.js";
import { type FakeOpenAIImages, startFakeOpenAIImages } from "../fakes/openai-images.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "../helpers/gateway-harness.js";
import { type PictureHosts, startPictureHosts } from "../helpers/picture-hosts.js";

const UPSTREAM_SECRET = "sk-upstream-secret-do-not-leak";
const TOOL_NAMES = [
  "audio_speak",
  "audio_transcribe",
  "image_background_remove",
  "image_describe",
  "image_edit",
  "image_generate",
  "image_upscale",
  "video_generate",
  "video_status",
  "web_search",
];

interface Setup {
  gateway: TestGateway;
  images: FakeOpenAIImages;
  chat: FakeOpenAI;
  hosts: PictureHosts;
  /** `pro` can pay; `broke` is on a plan whose monthly credits are zero. */
  keys: { pro: string; broke: string };
}

async function withSetup(run: (setup: Setup) => Promise<void>): Promise<void> {
  const images = await startFakeOpenAIImages();
  const chat = await startFakeOpenAI();
  const hosts = await startPictureHosts();
  const home = await makeHome((config) => {
    config.providers = {
      local: { type: "local" },
      openai: { type: "openai", baseUrl: images.url, apiKey: UPSTREAM_SECRET, upstream: { retries: 0 } },
      seer: { type: "openai", baseUrl: chat.url, apiKey: UPSTREAM_SECRET, upstream: { retries: 0 } },
    };
    config.routes = [...config.routes, { prefix: "seer/", provider: "seer" }];
    config.tools.image = { default: "openai/gpt-image-1", allow: [] };
    config.tools.describe = { default: "seer/vision-1", allow: [] };
    config.tools.upscale = { default: "local/lanczos", allow: [] };
    config.tools.background = { default: "local/flat-background", allow: [] };
    config.tools.speech = { default: "local/espeak", allow: [] };
    config.tools.transcription = { default: "openai/whisper-1", allow: [] };
    config.plans = { ...config.plans, free: { ...(config.plans?.free ?? {}), monthlyCredits: 0 } };
  });
  const keys = { pro: await addKey(home, "agent-pro", "pro"), broke: await addKey(home, "agent-broke", "free") };
  const gateway = await startTestGateway(home, { fetchUrl: hosts.fetchUrl });
  try {
    await run({ gateway, images, chat, hosts, keys });
  } finally {
    await gateway.shutdown();
    await Promise.all([images.close(), chat.close(), hosts.close()]);
  }
}

/** An SDK client that has listed the tools, so it holds (and enforces) every outputSchema. */
async function listedClient(t: ExecutionContext, gateway: TestGateway, key: string): Promise<Client> {
  const client = new Client({ name: "gw-hostile-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  const { tools } = await client.listTools();
  t.deepEqual(tools.map((tool) => tool.name).sort(), TOOL_NAMES);
  t.true(
    tools.every((tool) => tool.outputSchema !== undefined),
    "every tool declares an outputSchema the client will enforce",
  );
  return client;
}

interface GatewayErrorEnvelope {
  message: string;
  type: string;
  code: string;
  status: number;
  param?: string;
}

/** Call a tool that must fail; the call must resolve, and the gateway's envelope must be readable from the text. */
async function failingCall(t: ExecutionContext, client: Client, name: string, args: Record<string, unknown>, secrets: string[]): Promise<GatewayErrorEnvelope> {
  const result = await client.callTool({ name, arguments: args });
  t.true(result.isError, `${name}: ${JSON.stringify(result)}`);
  const serialized = JSON.stringify(result);
  for (const secret of secrets) t.false(serialized.includes(secret), `${name}: a secret leaked into the result`);
  const content = result.content as Array<{ type: string; text?: string }>;
  const text = content.find((block) => block.type === "text")?.text ?? "";
  const { error } = JSON.parse(text) as { error: GatewayErrorEnvelope };
  t.is(typeof error.message, "string", name);
  t.true(error.message.length > 0, name);
  t.is(typeof error.type, "string", name);
  return error;
}

const notAPicture = `data:image/png;base64,${Buffer.from("hello, this is not a picture").toString("base64")}`;
const tinyPicture = `data:image/png;base64,${pngFile(8, 8).toString("base64")}`;

test("image_generate: a model off the allowlist and an agent out of credits come back as tool errors with their codes", async (t) => {
  await withSetup(async ({ gateway, images, keys }) => {
    const secrets = [keys.pro, keys.broke, UPSTREAM_SECRET];
    const pro = await listedClient(t, gateway, keys.pro);
    const offList = await failingCall(t, pro, "image_generate", { prompt: "a lighthouse", model: "openai/dall-e-3" }, secrets);
    t.like(offList, { code: "model_not_allowed", status: 400, param: "model" });
    t.regex(offList.message, /dall-e-3/);
    await pro.close();

    const broke = await listedClient(t, gateway, keys.broke);
    const credits = await failingCall(t, broke, "image_generate", { prompt: "a lighthouse" }, secrets);
    t.like(credits, { code: "insufficient_credits", status: 402 });
    t.regex(credits.message, /credits/);
    await broke.close();
    t.is(images.requests.length, 0, "nothing reached the upstream");
  });
});

test("image_edit: a picture that is not one and a private URL come back as invalid_image and url_not_allowed", async (t) => {
  await withSetup(async ({ gateway, images, hosts, keys }) => {
    const secrets = [keys.pro, UPSTREAM_SECRET];
    const client = await listedClient(t, gateway, keys.pro);
    const bad = await failingCall(t, client, "image_edit", { prompt: "x", images: [notAPicture] }, secrets);
    t.like(bad, { code: "invalid_image", status: 400 });
    t.regex(bad.param ?? "", /^images\[0\]/, "the field of the bad picture is named");
    const internal = await failingCall(t, client, "image_edit", { prompt: "x", images: [`http://127.0.0.1:${hosts.internal.port}/a.png`] }, secrets);
    t.like(internal, { code: "url_not_allowed", status: 400 });
    t.is(hosts.internal.requests.length + hosts.internal.connections, 0, "the private address was never contacted");
    t.is(images.requests.length, 0);
    await client.close();
  });
});

test("image_upscale: a picture that is not one comes back as invalid_image", async (t) => {
  await withSetup(async ({ gateway, keys }) => {
    const client = await listedClient(t, gateway, keys.pro);
    const bad = await failingCall(t, client, "image_upscale", { image: notAPicture, scale: 2 }, [keys.pro, UPSTREAM_SECRET]);
    t.like(bad, { code: "invalid_image", status: 400, param: "image" });
    await client.close();
  });
});

test("image_background_remove: a private URL comes back as url_not_allowed, never fetched", async (t) => {
  await withSetup(async ({ gateway, hosts, keys }) => {
    const client = await listedClient(t, gateway, keys.pro);
    const internal = await failingCall(t, client, "image_background_remove", { image: `http://localhost:${hosts.internal.port}/a.png` }, [
      keys.pro,
      UPSTREAM_SECRET,
    ]);
    t.like(internal, { code: "url_not_allowed", status: 400 });
    t.is(hosts.internal.requests.length + hosts.internal.connections, 0);
    await client.close();
  });
});

test("image_describe: not a picture, a model off the allowlist and no credits are tool errors with their codes", async (t) => {
  await withSetup(async ({ gateway, chat, keys }) => {
    const secrets = [keys.pro, keys.broke, UPSTREAM_SECRET];
    const pro = await listedClient(t, gateway, keys.pro);
    const bad = await failingCall(t, pro, "image_describe", { image: Buffer.from("just some text, not pixels").toString("base64") }, secrets);
    t.like(bad, { code: "invalid_image", status: 400 });
    const offList = await failingCall(t, pro, "image_describe", { image: tinyPicture, model: "seer/not-allowed" }, secrets);
    t.like(offList, { code: "model_not_allowed", status: 400 });
    await pro.close();

    const broke = await listedClient(t, gateway, keys.broke);
    const credits = await failingCall(t, broke, "image_describe", { image: tinyPicture }, secrets);
    t.like(credits, { code: "insufficient_credits", status: 402 });
    await broke.close();
    t.is(chat.requests.length, 0, "nothing reached the chat upstream");
  });
});

test("audio_speak: a voice the model does not speak and a missing input come back as tool errors with their codes", async (t) => {
  await withSetup(async ({ gateway, keys }) => {
    const secrets = [keys.pro, UPSTREAM_SECRET];
    const client = await listedClient(t, gateway, keys.pro);
    const voice = await failingCall(t, client, "audio_speak", { input: "hello", model: "local/espeak", voice: "no-such-voice" }, secrets);
    t.like(voice, { code: "invalid_voice", status: 400, param: "voice" });
    t.regex(voice.message, /no-such-voice/);
    const empty = await failingCall(t, client, "audio_speak", { input: "", model: "local/espeak" }, secrets);
    t.like(empty, { status: 400, param: "input" });
    await client.close();
  });
});

test("audio_transcribe: bytes that are not audio and a private URL come back as invalid_audio and url_not_allowed", async (t) => {
  await withSetup(async ({ gateway, images, hosts, keys }) => {
    const secrets = [keys.pro, UPSTREAM_SECRET];
    const client = await listedClient(t, gateway, keys.pro);
    const bad = await failingCall(t, client, "audio_transcribe", { audio: Buffer.from("hello, this is not audio at all").toString("base64") }, secrets);
    t.like(bad, { code: "invalid_audio", status: 400 });
    t.regex(bad.message, /audio/);
    const internal = await failingCall(t, client, "audio_transcribe", { audio: `http://127.0.0.1:${hosts.internal.port}/a.mp3` }, secrets);
    t.like(internal, { code: "url_not_allowed", status: 400 });
    t.is(hosts.internal.requests.length + hosts.internal.connections, 0, "the private address was never contacted");
    t.is(images.requests.length, 0, "nothing reached the upstream");
    await client.close();
  });
});

test("video_generate and video_status: a bad duration and an unknown job id come back as tool errors with their codes", async (t) => {
  await withSetup(async ({ gateway, keys }) => {
    const secrets = [keys.pro, keys.broke, UPSTREAM_SECRET];
    const client = await listedClient(t, gateway, keys.pro);
    const noPhoto = await failingCall(t, client, "video_generate", { prompt: "a calm pan", model: "local/kenburns" }, secrets);
    t.like(noPhoto, { code: "invalid_parameter", status: 400 });
    const tooLong = await failingCall(
      t,
      client,
      "video_generate",
      { prompt: "x", model: "local/kenburns", image_url: tinyPicture, duration_seconds: 99 },
      secrets,
    );
    t.like(tooLong, { code: "invalid_parameter", status: 400 });
    t.regex(tooLong.message, /99/);
    const unknown = await failingCall(t, client, "video_status", { id: "vid_01ARZ3NDEKTSV4RRFFQ69G5FAV" }, secrets);
    t.like(unknown, { code: "video_job_not_found", status: 404 });
    t.regex(unknown.message, /vid_01ARZ3NDEKTSV4RRFFQ69G5FAV/);
    await client.close();
  });
});

test("web_search: no search provider and an empty query come back as tool errors with their codes", async (t) => {
  await withSetup(async ({ gateway, keys }) => {
    const secrets = [keys.pro, UPSTREAM_SECRET];
    const client = await listedClient(t, gateway, keys.pro);
    const empty = await failingCall(t, client, "web_search", { query: "   " }, secrets);
    t.like(empty, { status: 400, param: "query" });
    t.regex(empty.message, /empty/);
    const tooMany = await failingCall(t, client, "web_search", { query: "lighthouses", max_results: 500 }, secrets);
    t.like(tooMany, { status: 400, param: "max_results" });
    const unconfigured = await failingCall(t, client, "web_search", { query: "lighthouses" }, secrets);
    t.like(unconfigured, { code: "search_not_configured", status: 503 });
    t.regex(unconfigured.message, /tools\.search/);
    await client.close();
  });
});

test("tools/call with non-object arguments is JSON-RPC -32602 naming the tool, not an internal error", async (t) => {
  await withSetup(async ({ gateway, keys }) => {
    const hostileArguments: unknown[] = ["a lighthouse", ["a lighthouse"], 42, true, null];
    for (const [index, args] of hostileArguments.entries()) {
      const response = await fetch(`${gateway.url}/mcp`, {
        method: "POST",
        headers: { authorization: `Bearer ${keys.pro}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: index + 1, method: "tools/call", params: { name: "image_generate", arguments: args } }),
      });
      const label = JSON.stringify(args);
      t.is(response.status, 200, label);
      const body = (await response.json()) as { id: number; error?: { code: number; message: string }; result?: unknown };
      t.is(body.id, index + 1, label);
      t.is(body.result, undefined, label);
      t.is(body.error?.code, -32602, `${label}: ${JSON.stringify(body)}`);
      t.regex(body.error?.message ?? "", /image_generate/, label);
      t.regex(body.error?.message ?? "", /arguments must be an object/i, label);
      t.notRegex(body.error?.message ?? "", /invalid_type|expected|"path"/, `${label}: no validation dump`);
    }
  });
});
