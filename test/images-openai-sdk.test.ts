// The official `openai` SDK's images API pointed at gw: client.images.generate and
// client.images.edit reach the spec's endpoints through OpenAI's paths (/v1/images/*), with
// OpenAI's defaults (png, bare model ids, DALL·E 3 quality words) and the gateway's rules,
// billing and library behind them.
import test from "ava";
import OpenAI, { toFile } from "openai";
import sharp from "sharp";
import { homePaths } from "../src/config/paths.js";
import { periodOf, UsageLog } from "../src/store/usage-log.js";
import { pngFile } from "./fakes/image-files.js";
import { field } from "./fakes/multipart-form.js";
import { type FakeOpenAIImages, startFakeOpenAIImages } from "./fakes/openai-images.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

let images: FakeOpenAIImages;
let gateway: TestGateway;
let client: OpenAI;
let freeClient: OpenAI;

test.before(async () => {
  images = await startFakeOpenAIImages();
  const home = await makeHome((config) => {
    config.providers = { openai: { type: "openai", baseUrl: images.url, apiKey: "test-key", upstream: { retries: 0 } } };
    config.tools.image = { default: "openai/gpt-image-1", allow: ["openai/dall-e-3"] };
  });
  const key = await addKey(home, "sdk-user", "pro");
  const freeKey = await addKey(home, "sdk-free", "free");
  gateway = await startTestGateway(home);
  client = new OpenAI({ apiKey: key, baseURL: gateway.v1, maxRetries: 0 });
  freeClient = new OpenAI({ apiKey: freeKey, baseURL: gateway.v1, maxRetries: 0 });
});

test.after.always(async () => {
  await gateway?.shutdown();
  await images?.close();
});

test.serial("images.generate with a bare model id answers base64 png, stored and billed like /v1/image/generations", async (t) => {
  const result = await client.images.generate({ model: "gpt-image-1", prompt: "a red fox", size: "1536x1024", quality: "low" });
  const picture = result.data![0]!;
  const meta = await sharp(Buffer.from(picture.b64_json!, "base64")).metadata();
  t.deepEqual([meta.format, meta.width, meta.height], ["png", 1536, 1024]);
  const extra = picture as unknown as { asset_id?: string; media_type?: string };
  t.is(extra.media_type, "image/png");
  t.regex(extra.asset_id ?? "", /^file_/);
  const sent = images.requests.at(-1)!.json;
  t.is(sent.model, "gpt-image-1");
  t.is(sent.quality, "low");
  const rows = UsageLog.readRows(homePaths(gateway.home).usageDir, periodOf(new Date())).filter((row) => row.endpoint === "image.generations");
  t.is(rows.at(-1)!.model, "openai/gpt-image-1");
});

test.serial("DALL·E 3's quality words map to the spec's (hd is high)", async (t) => {
  const result = await client.images.generate({ model: "dall-e-3", prompt: "a lighthouse", quality: "hd", response_format: "b64_json" });
  t.truthy(result.data![0]!.b64_json);
  t.is(images.requests.at(-1)!.json.quality, "hd");
});

test.serial("images.edit sends the SDK's multipart form through the edits rules", async (t) => {
  const photo = pngFile(64, 48);
  const result = await client.images.edit({ model: "gpt-image-1", prompt: "make it night", image: [await toFile(photo, "photo.png", { type: "image/png" })] });
  const meta = await sharp(Buffer.from(result.data![0]!.b64_json!, "base64")).metadata();
  t.is(meta.format, "png");
  const form = images.requests.at(-1)!.form!;
  t.is(images.requests.at(-1)!.path, "/v1/images/edits");
  t.regex(field(form, "prompt")!, /^make it night/);
  t.true(form.files[0]!.bytes.equals(photo));
});

test.serial("errors reach the SDK as APIErrors with the gateway's codes", async (t) => {
  const unknown = await t.throwsAsync(client.images.generate({ model: "dall-e-2", prompt: "x" }), { instanceOf: OpenAI.APIError });
  t.is(unknown.status, 400);
  t.is((unknown.error as { code?: string }).code, "model_not_allowed");
  const capped = await t.throwsAsync(freeClient.images.generate({ model: "gpt-image-1", prompt: "x", n: 2 }), { instanceOf: OpenAI.APIError });
  t.is(capped.status, 403);
  t.is((capped.error as { code?: string }).code, "plan_limit_exceeded");
  const urls = await t.throwsAsync(client.images.generate({ model: "dall-e-3", prompt: "x", response_format: "url" }), { instanceOf: OpenAI.APIError });
  t.is(urls.status, 400);
  t.is((urls.error as { param?: string }).param, "response_format");
});
