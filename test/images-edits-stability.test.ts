// POST /v1/image/edits against the Stability fake: image-to-image on sd3 and ultra (the picture to
// edit, its shape kept), the wire form Stability takes, and what Stability cannot do refused before
// any upstream call.
import test from "ava";
import sharp from "sharp";
import { homePaths } from "../src/config/paths.js";
import { periodOf, UsageLog } from "../src/store/usage-log.js";
import { pngFile } from "./fakes/image-files.js";
import { field } from "./fakes/multipart-form.js";
import { type FakeStability, startFakeStability } from "./fakes/stability.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

interface Setup {
  gateway: TestGateway;
  stability: FakeStability;
  key: string;
}

async function withSetup(run: (setup: Setup) => Promise<void>): Promise<void> {
  const stability = await startFakeStability();
  const home = await makeHome((config) => {
    config.providers = { stability: { type: "stability", baseUrl: stability.url, apiKey: "test-key", upstream: { retries: 0 } } };
    config.tools.image = { default: "stability/sd3", allow: ["stability/ultra", "stability/core"] };
  });
  const key = await addKey(home, "agent", "pro");
  const gateway = await startTestGateway(home);
  try {
    await run({ gateway, stability, key });
  } finally {
    await gateway.shutdown();
    await stability.close();
  }
}

async function edit(gateway: TestGateway, key: string, body: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const response = await fetch(`${gateway.url}/v1/image/edits`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

const landscape = pngFile(1200, 800, [30, 90, 160, 255]);
const dataUrl = `data:image/png;base64,${landscape.toString("base64")}`;

test("sd3 edits by image-to-image: mode, strength and the picture sent, no aspect_ratio, the shape kept, billed", async (t) => {
  await withSetup(async ({ gateway, stability, key }) => {
    const { status, body } = await edit(gateway, key, {
      prompt: "as a watercolour",
      images: [dataUrl],
      negative_prompt: "blur",
      seed: 7,
      style_preset: "anime",
    });
    t.is(status, 200, JSON.stringify(body));
    const sent = stability.requests.at(-1)!;
    t.is(sent.path, "/v2beta/stable-image/generate/sd3");
    t.is(field(sent.form, "mode"), "image-to-image");
    t.is(field(sent.form, "strength"), "0.5");
    t.is(field(sent.form, "aspect_ratio"), undefined);
    t.is(field(sent.form, "negative_prompt"), "blur");
    t.is(field(sent.form, "seed"), "7");
    t.is(field(sent.form, "style_preset"), "anime");
    const image = sent.form.files.find((file) => file.field === "image")!;
    t.true(image.bytes.equals(landscape));
    const meta = await sharp(Buffer.from(body.data[0].b64_json, "base64")).metadata();
    t.deepEqual([meta.format, meta.width, meta.height], ["webp", 1216, 832]);
    const rows = UsageLog.readRows(homePaths(gateway.home).usageDir, periodOf(new Date())).filter((row) => row.endpoint === "image.edits");
    t.is(rows.length, 1);
    t.is(rows[0]!.credits, 65_000);
    t.is(rows[0]!.model, "stability/sd3");
  });
});

test("ultra edits with `image` and `strength` only; n pictures are n calls", async (t) => {
  await withSetup(async ({ gateway, stability, key }) => {
    const { status, body } = await edit(gateway, key, {
      prompt: "at dawn",
      model: "stability/ultra",
      images: [{ url: dataUrl, role: "edit" }],
      n: 2,
      output_format: "png",
    });
    t.is(status, 200, JSON.stringify(body));
    t.is(body.data.length, 2);
    t.is(stability.requests.length, 2);
    for (const sent of stability.requests) {
      t.is(sent.path, "/v2beta/stable-image/generate/ultra");
      t.is(field(sent.form, "mode"), undefined);
      t.is(field(sent.form, "strength"), "0.5");
    }
  });
});

test("what Stability cannot do is refused before any call: other roles, two pictures, core, another shape", async (t) => {
  await withSetup(async ({ gateway, stability, key }) => {
    const reference = await edit(gateway, key, { prompt: "x", images: [{ url: dataUrl, role: "reference" }] });
    t.is(reference.status, 400);
    t.is(reference.body.error.code, "image_reference_unsupported");
    const two = await edit(gateway, key, { prompt: "x", images: [dataUrl, dataUrl] });
    t.is(two.status, 400);
    t.is(two.body.error.param, "images");
    const core = await edit(gateway, key, { prompt: "x", model: "stability/core", images: [dataUrl] });
    t.is(core.status, 400);
    t.is(core.body.error.param, "model");
    const square = await edit(gateway, key, { prompt: "x", images: [dataUrl], aspect_ratio: "1:1" });
    t.is(square.status, 400);
    t.is(square.body.error.param, "aspect_ratio");
    t.regex(square.body.error.message, /keep the picture's shape \(here 3:2\)/);
    // The ratio it keeps anyway is not a contradiction.
    const same = await edit(gateway, key, { prompt: "x", images: [dataUrl], aspect_ratio: "3:2" });
    t.is(same.status, 200, JSON.stringify(same.body));
    t.is(stability.requests.length, 1);
  });
});
