// The MCP server at /mcp through the official SDK's own client over Streamable HTTP: tools
// listed, each image tool called with real pictures (decoded with sharp), asset ids present in the
// caller's storage, errors as tool errors with the HTTP codes (the envelope as JSON text), Bearer auth.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import test from "ava";
import sharp from "sharp";
import { homePaths } from "../src/config/paths.js";
import { periodOf, UsageLog } from "../src/store/usage-log.js";
import { pngFile } from "./fakes/image-files.js";
import { field } from "./fakes/multipart-form.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { type FakeOpenAIImages, startFakeOpenAIImages } from "./fakes/openai-images.js";
import { addKey, gw, json, makeHome, type RawConfig, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { type PictureHosts, startPictureHosts } from "./helpers/picture-hosts.js";

interface Setup {
  gateway: TestGateway;
  images: FakeOpenAIImages;
  chat: FakeOpenAI;
  hosts: PictureHosts;
  keys: { pro: string; free: string; other: string };
}

async function withSetup(run: (setup: Setup) => Promise<void>, edit?: (config: RawConfig) => void): Promise<void> {
  const images = await startFakeOpenAIImages();
  const chat = await startFakeOpenAI();
  const hosts = await startPictureHosts();
  const home = await makeHome((config) => {
    config.providers = {
      local: { type: "local" },
      openai: { type: "openai", baseUrl: images.url, apiKey: "test-key", upstream: { retries: 0 } },
      seer: { type: "openai", baseUrl: chat.url, apiKey: "test-key", upstream: { retries: 0 } },
    };
    config.routes = [...config.routes, { prefix: "seer/", provider: "seer" }];
    config.tools.image = { default: "openai/gpt-image-1", allow: ["openai/dall-e-2"] };
    config.tools.describe = { default: "seer/vision-1", allow: [] };
    config.tools.upscale = { default: "local/lanczos", allow: [] };
    config.tools.background = { default: "local/flat-background", allow: [] };
    edit?.(config);
  });
  const keys = { pro: await addKey(home, "agent-pro", "pro"), free: await addKey(home, "agent-free", "free"), other: await addKey(home, "agent-other", "pro") };
  const gateway = await startTestGateway(home, { fetchUrl: hosts.fetchUrl });
  try {
    await run({ gateway, images, chat, hosts, keys });
  } finally {
    await gateway.shutdown();
    await Promise.all([images.close(), chat.close(), hosts.close()]);
  }
}

async function connect(gateway: TestGateway, key: string): Promise<Client> {
  const client = new Client({ name: "gw-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } });
  await client.connect(transport);
  return client;
}

interface PictureResult {
  content: Array<{ type: string; data?: string; mimeType?: string; text?: string }>;
  structuredContent?: { id?: string; model?: string; data?: Array<{ asset_id?: string; media_type: string }> };
  isError?: boolean;
}

/** A tool error's gateway envelope: the JSON of its text block (it has no structured content). */
function errorOf(result: PictureResult): { code?: string; message?: string; param?: string; status?: number } | undefined {
  if (!result.isError) return undefined;
  const text = result.content.find((block) => block.type === "text")?.text;
  return text ? (JSON.parse(text) as { error: { code: string; message: string; param?: string; status: number } }).error : undefined;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<PictureResult> {
  return (await client.callTool({ name, arguments: args })) as PictureResult;
}

async function storedIds(gateway: TestGateway, key: string): Promise<string[]> {
  const response = await fetch(`${gateway.url}/v1/storage/files?limit=100`, { headers: { authorization: `Bearer ${key}` } });
  return ((await response.json()) as { data: Array<{ id: string }> }).data.map((file) => file.id);
}

test("tools/list names the image, audio and video tools with their input schemas", async (t) => {
  await withSetup(async ({ gateway, keys }) => {
    const client = await connect(gateway, keys.pro);
    const { tools } = await client.listTools();
    const names = tools.map((tool) => tool.name);
    t.deepEqual(names.sort(), [
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
    ]);
    const edit = tools.find((tool) => tool.name === "image_edit")!;
    t.deepEqual(edit.inputSchema.required?.sort(), ["images", "prompt"]);
    t.truthy((edit.inputSchema.properties as Record<string, unknown>).image_roles);
    t.truthy(edit.outputSchema);
    await client.close();
  });
});

test("image_generate returns image content and asset ids stored in the caller's library, billed like HTTP", async (t) => {
  await withSetup(async ({ gateway, keys }) => {
    const client = await connect(gateway, keys.pro);
    const result = await call(client, "image_generate", { prompt: "a lighthouse", n: 2, output_format: "png" });
    t.falsy(result.isError, JSON.stringify(result.content));
    const pictures = result.content.filter((block) => block.type === "image");
    t.is(pictures.length, 2);
    for (const picture of pictures) {
      t.is(picture.mimeType, "image/png");
      const meta = await sharp(Buffer.from(picture.data!, "base64")).metadata();
      t.is(meta.format, "png");
      t.is(meta.width, 1024);
    }
    const data = result.structuredContent!.data!;
    t.is(data.length, 2);
    const stored = await storedIds(gateway, keys.pro);
    for (const item of data) t.true(stored.includes(item.asset_id!), "the asset is in the caller's storage");
    t.is(result.structuredContent!.model, "openai/gpt-image-1");
    const rows = UsageLog.readRows(homePaths(gateway.home).usageDir, periodOf(new Date())).filter((row) => row.endpoint === "image.generations");
    t.is(rows.length, 1);
    t.is(rows[0]!.requestId, result.structuredContent!.id ?? "missing");
    await client.close();
  });
});

test("image_edit takes URLs and asset ids with image_roles in the same order", async (t) => {
  await withSetup(async ({ gateway, images, hosts, keys }) => {
    hosts.serve("/style.png", pngFile(40, 40, [10, 200, 10, 255]), "image/png");
    const client = await connect(gateway, keys.pro);
    const first = await call(client, "image_generate", { prompt: "a cat", output_format: "png" });
    const assetId = first.structuredContent!.data![0]!.asset_id!;
    const result = await call(client, "image_edit", {
      prompt: "the cat in this style",
      images: [assetId, `${hosts.publicBase}/style.png`],
      image_roles: ["edit", "reference"],
    });
    t.falsy(result.isError, JSON.stringify(result.content));
    const form = images.requests.at(-1)!.form!;
    t.regex(field(form, "prompt")!, /Image 1: the picture to change[^\n]*\nImage 2: a reference/);
    t.is(form.files.length, 2);
    t.deepEqual(hosts.publicHits, ["/style.png"]);
    const newId = result.structuredContent!.data![0]!.asset_id!;
    t.true((await storedIds(gateway, keys.pro)).includes(newId));
    t.is(result.content.filter((block) => block.type === "image").length, 1);
    await client.close();
  });
});

test("image_describe answers {model, text} from a library asset through the chat router", async (t) => {
  await withSetup(async ({ gateway, chat, keys }) => {
    chat.set({ content: "A tabby cat on a sofa." });
    const client = await connect(gateway, keys.pro);
    const first = await call(client, "image_generate", { prompt: "a cat", output_format: "png" });
    const assetId = first.structuredContent!.data![0]!.asset_id!;
    const result = (await client.callTool({ name: "image_describe", arguments: { image: assetId, prompt: "What animal?" } })) as {
      content: Array<{ type: string; text?: string }>;
      structuredContent?: { model?: string; text?: string };
      isError?: boolean;
    };
    t.falsy(result.isError, JSON.stringify(result.content));
    t.deepEqual(result.structuredContent, { model: "seer/vision-1", text: "A tabby cat on a sofa." });
    const sent = chat.requests.at(-1)!.body as { messages: Array<{ content: Array<{ type: string; text?: string; image_url?: { url: string } }> }> };
    const parts = sent.messages[0]!.content;
    t.is(parts[0]!.text, "What animal?");
    t.regex(parts[1]!.image_url!.url, /^data:image\/png;base64,/);
    const rows = UsageLog.readRows(homePaths(gateway.home).usageDir, periodOf(new Date())).filter((row) => row.endpoint === "image.describe");
    t.is(rows.length, 1);
    await client.close();
  });
});

test("image_upscale and image_background_remove work on library assets and URLs, with lineage", async (t) => {
  await withSetup(async ({ gateway, hosts, keys }) => {
    const disc = `<svg xmlns="http://www.w3.org/2000/svg" width="120" height="80"><rect width="100%" height="100%" fill="#ffffff"/><circle cx="60" cy="40" r="25" fill="#2040c0"/></svg>`;
    hosts.serve("/disc.png", await sharp(Buffer.from(disc)).png().toBuffer(), "image/png");
    const client = await connect(gateway, keys.pro);
    const removed = await call(client, "image_background_remove", { image: `${hosts.publicBase}/disc.png`, output_format: "png" });
    t.falsy(removed.isError, JSON.stringify(removed.content));
    const cutout = Buffer.from(removed.content.find((block) => block.type === "image")!.data!, "base64");
    const { data, info } = await sharp(cutout).raw().toBuffer({ resolveWithObject: true });
    t.is(info.channels, 4);
    t.is(data[3], 0, "transparent corner");
    t.is(data[(40 * info.width + 60) * 4 + 3], 255, "opaque subject");
    const cutoutId = removed.structuredContent!.data![0]!.asset_id!;

    const upscaled = await call(client, "image_upscale", { parent_asset_id: cutoutId, scale: 4 });
    t.falsy(upscaled.isError, JSON.stringify(upscaled.content));
    const meta = await sharp(Buffer.from(upscaled.content.find((block) => block.type === "image")!.data!, "base64")).metadata();
    t.deepEqual([meta.format, meta.width, meta.height], ["webp", 480, 320]);
    const upscaledId = upscaled.structuredContent!.data![0]!.asset_id!;
    t.true((await storedIds(gateway, keys.pro)).includes(upscaledId));

    const unoffered = await call(client, "image_upscale", { parent_asset_id: cutoutId, scale: 3 });
    t.is(errorOf(unoffered)?.code, "invalid_parameter");
    t.is(errorOf(unoffered)?.param, "scale");
    const jpeg = await call(client, "image_background_remove", { parent_asset_id: cutoutId, output_format: "jpeg" });
    t.is(errorOf(jpeg)?.param, "output_format");
    await client.close();
  });
});

test("upscale and background removal with no capable provider are tool errors with 503 provider_not_configured", async (t) => {
  await withSetup(
    async ({ gateway, keys }) => {
      const client = await connect(gateway, keys.pro);
      const image = `data:image/png;base64,${pngFile(8, 8).toString("base64")}`;
      for (const name of ["image_upscale", "image_background_remove"]) {
        const result = await call(client, name, { image });
        t.true(result.isError);
        t.is(errorOf(result)?.code, "provider_not_configured", name);
        t.is(errorOf(result)?.status, 503);
      }
      await client.close();
    },
    (config) => {
      config.tools.upscale = { default: null, allow: [] };
      config.tools.background = { default: null, allow: [] };
    },
  );
});

test("errors are tool errors carrying the HTTP codes", async (t) => {
  await withSetup(async ({ gateway, images, hosts, keys }) => {
    const client = await connect(gateway, keys.free);
    const capped = await call(client, "image_generate", { prompt: "x", n: 3 });
    t.true(capped.isError);
    t.is(errorOf(capped)?.code, "plan_limit_exceeded");
    t.is(errorOf(capped)?.status, 403);
    t.falsy(capped.structuredContent, "a tool error has no structured content to fail the outputSchema");
    t.regex(errorOf(capped)?.message ?? "", /\S/);

    const role = await call(client, "image_edit", {
      prompt: "x",
      model: "openai/dall-e-2",
      images: [`data:image/png;base64,${pngFile(8, 8).toString("base64")}`],
      image_roles: ["reference"],
    });
    t.is(errorOf(role)?.code, "image_reference_unsupported");

    const ssrf = await call(client, "image_edit", { prompt: "x", images: [`http://127.0.0.1:${hosts.internal.port}/a.png`] });
    t.is(errorOf(ssrf)?.code, "url_not_allowed");
    t.is(hosts.internal.requests.length + hosts.internal.connections, 0);

    const foreign = await call(client, "image_edit", { prompt: "x", images: ["file_01JAAAAAAAAAAAAAAAAAAAAAAA"] });
    t.is(errorOf(foreign)?.code, "asset_not_found");

    const bad = await call(client, "image_generate", { prompt: "x", aspect_ratio: "7:3" });
    t.is(errorOf(bad)?.code, "invalid_parameter");
    t.is(errorOf(bad)?.param, "aspect_ratio");
    t.is(images.requests.length, 0);
    await client.close();
  });
});

test("/mcp needs a valid key: 401 in the gateway envelope", async (t) => {
  await withSetup(async ({ gateway }) => {
    const response = await fetch(`${gateway.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    t.is(response.status, 401);
    t.is(((await response.json()) as { error: { code: string } }).error.code, "invalid_api_key");
    t.truthy(response.headers.get("x-request-id"));
    await t.throwsAsync(() => connect(gateway, "gw_wrong"));
  });
});

test("gw mcp prints the endpoint and a client config whose URL and header connect", async (t) => {
  await withSetup(async ({ gateway, keys }) => {
    const env = { GW_BASE_URL: gateway.url, GW_API_KEY: keys.pro };
    const placeholder = json<{ endpoint: string; config: { mcpServers: Record<string, { url: string; headers: Record<string, string> }> } }>(
      await gw(["mcp", "--json"], { env }),
    );
    t.is(placeholder.endpoint, `${gateway.url}/mcp`);
    t.is(placeholder.config.mcpServers.gw!.headers.Authorization, "Bearer ${GW_API_KEY}");
    const text = await gw(["mcp"], { env });
    t.is(text.code, 0);
    t.false(text.stdout.includes(keys.pro), "the key is not printed unless asked");

    const withKey = json<typeof placeholder>(await gw(["mcp", "--with-key", "--json", "--name", "studio"], { env }));
    const server = withKey.config.mcpServers.studio!;
    const client = new Client({ name: "gw-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers } }));
    t.true((await client.listTools()).tools.length >= 3);
    await client.close();

    const noKey = await gw(["mcp", "--with-key"], { env: { GW_BASE_URL: gateway.url } });
    t.not(noKey.code, 0);
    t.regex(noKey.stderr, /needs a key/);
  });
});

test("GET and DELETE /mcp answer 405: the server is stateless, with no stream or session to open or end", async (t) => {
  await withSetup(async ({ gateway, keys }) => {
    for (const method of ["GET", "DELETE"]) {
      const response = await fetch(`${gateway.url}/mcp`, { method, headers: { authorization: `Bearer ${keys.pro}`, accept: "text/event-stream" } });
      t.is(response.status, 405, method);
      t.is(response.headers.get("allow"), "POST");
      t.is(((await response.json()) as { error: { code: string } }).error.code, "method_not_allowed");
    }
  });
});
