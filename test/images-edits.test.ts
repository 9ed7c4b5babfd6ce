// POST /v1/image/edits end to end against the OpenAI Images fake: JSON and multipart forms,
// roles per the catalog, masks refused, pictures from data: URLs, downloaded URLs (through the
// real SSRF-safe fetcher, with an internal trap that must never be reached) and library assets,
// real pixels decoded with sharp, lineage, billing.
import { promises as fs } from "node:fs";
import path from "node:path";
import test from "ava";
import sharp from "sharp";
import { homePaths } from "../src/config/paths.js";
import type { FileRecord } from "../src/store/file-records.js";
import { periodOf, UsageLog, type UsageRow } from "../src/store/usage-log.js";
import { jpegFile, pngFile } from "./fakes/image-files.js";
import { field } from "./fakes/multipart-form.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { type FakeOpenAIImages, startFakeOpenAIImages } from "./fakes/openai-images.js";
import { addKey, makeHome, type RawConfig, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { type PictureHosts, startPictureHosts } from "./helpers/picture-hosts.js";

interface Setup {
  gateway: TestGateway;
  images: FakeOpenAIImages;
  chat: FakeOpenAI;
  hosts: PictureHosts;
  keys: { free: string; pro: string; other: string };
}

async function withSetup(run: (setup: Setup) => Promise<void>, edit?: (config: RawConfig) => void): Promise<void> {
  const images = await startFakeOpenAIImages();
  const chat = await startFakeOpenAI();
  const hosts = await startPictureHosts();
  const home = await makeHome((config) => {
    config.providers = {
      openai: { type: "openai", baseUrl: images.url, apiKey: "test-key", upstream: { retries: 0 } },
      writer: { type: "openai", baseUrl: chat.url, apiKey: "test-key", upstream: { retries: 0 } },
    };
    config.routes = [{ prefix: "writer/", provider: "writer" }];
    config.tools.image = { default: "openai/gpt-image-1", allow: ["openai/dall-e-2", "openai/dall-e-3"] };
    config.tools.enhance = { default: "writer/gpt-x", allow: [] };
    edit?.(config);
  });
  const keys = { free: await addKey(home, "agent-free", "free"), pro: await addKey(home, "agent-pro", "pro"), other: await addKey(home, "agent-other", "pro") };
  const gateway = await startTestGateway(home, { fetchUrl: hosts.fetchUrl });
  try {
    await run({ gateway, images, chat, hosts, keys });
  } finally {
    await gateway.shutdown();
    await Promise.all([images.close(), chat.close(), hosts.close()]);
  }
}

interface ResultBody {
  id: string;
  model: string;
  data: Array<{ b64_json: string; media_type: string; revised_prompt: string; asset_id?: string }>;
  enhanced_prompt?: string;
  error?: { message: string; type: string; code: string; param?: string; provider?: string };
}

async function edit(gateway: TestGateway, key: string, body: Record<string, unknown>): Promise<{ status: number; headers: Headers; body: ResultBody }> {
  const response = await fetch(`${gateway.url}/v1/image/edits`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as ResultBody };
}

async function editForm(gateway: TestGateway, key: string, form: FormData): Promise<{ status: number; body: ResultBody }> {
  const response = await fetch(`${gateway.url}/v1/image/edits`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
  return { status: response.status, body: (await response.json()) as ResultBody };
}

function blobPart(bytes: Buffer): Uint8Array<ArrayBuffer> {
  return new Uint8Array(bytes);
}

function dataUrl(bytes: Buffer, type = "image/png"): string {
  return `data:${type};base64,${bytes.toString("base64")}`;
}

function usageRows(gateway: TestGateway, endpoint: string): UsageRow[] {
  return UsageLog.readRows(homePaths(gateway.home).usageDir, periodOf(new Date())).filter((row) => row.endpoint === endpoint);
}

async function assetRecord(gateway: TestGateway, assetId: string): Promise<FileRecord> {
  const records = path.join(homePaths(gateway.home).dataDir, "storage", "records");
  for (const agent of await fs.readdir(records)) {
    try {
      return JSON.parse(await fs.readFile(path.join(records, agent, `${assetId}.json`), "utf8")) as FileRecord;
    } catch {}
  }
  throw new Error(`no record for ${assetId}`);
}

async function storedCount(gateway: TestGateway, key: string): Promise<number> {
  const response = await fetch(`${gateway.url}/v1/storage/files?limit=100`, { headers: { authorization: `Bearer ${key}` } });
  return ((await response.json()) as { pagination: { total: number } }).pagination.total;
}

const picture = pngFile(64, 48, [20, 120, 220, 255]);

test("JSON edit of a data: URL: default role reference told to the upstream, webp result stored and billed", async (t) => {
  await withSetup(async ({ gateway, images, keys }) => {
    const { status, headers, body } = await edit(gateway, keys.pro, { prompt: "make it night", images: [dataUrl(picture)] });
    t.is(status, 200, JSON.stringify(body));
    t.is(body.id, headers.get("x-request-id") ?? "missing");
    t.regex(headers.get("x-service-upstream-trace-id") ?? "", /^req_img_/);
    t.is(body.model, "openai/gpt-image-1");
    t.is(body.data.length, 1);
    t.is(body.data[0]!.media_type, "image/webp");
    t.is(body.data[0]!.revised_prompt, "make it night");
    const meta = await sharp(Buffer.from(body.data[0]!.b64_json, "base64")).metadata();
    t.is(meta.format, "webp");
    // No shape asked: the 4:3 input keeps the nearest ratio the model draws (3:2), not a square.
    t.deepEqual([meta.width, meta.height], [1536, 1024]);

    const sent = images.requests.at(-1)!;
    t.is(sent.path, "/v1/images/edits");
    const form = sent.form!;
    t.is(field(form, "model"), "gpt-image-1");
    t.is(field(form, "size"), "1536x1024");
    t.regex(field(form, "prompt")!, /^make it night\n\nImage 1: a reference/);
    const parts = form.files.filter((file) => file.field === "image[]");
    t.is(parts.length, 1);
    t.is(parts[0]!.contentType, "image/png");
    t.true(parts[0]!.bytes.equals(picture), "the picture reaches the upstream byte for byte");

    const record = await assetRecord(gateway, body.data[0]!.asset_id!);
    t.is(record.contentType, "image/webp");
    t.is(record.image?.prompt, "make it night");
    const rows = usageRows(gateway, "image.edits");
    t.is(rows.length, 1);
    t.is(rows[0]!.model, "openai/gpt-image-1");
    t.is(rows[0]!.requestId, body.id);
    t.true(rows[0]!.credits > 0);
  });
});

test("a downloaded URL with role edit, generation parameters applied, enhance_prompt ignored", async (t) => {
  await withSetup(async ({ gateway, images, chat, hosts, keys }) => {
    hosts.serve("/photo.jpg", jpegFile(80, 80), "image/jpeg");
    const { status, body } = await edit(gateway, keys.pro, {
      prompt: "add a hat",
      images: [{ url: `${hosts.publicBase}/photo.jpg`, role: "edit" }],
      aspect_ratio: "2:3",
      output_format: "png",
      quality: "low",
      enhance_prompt: true,
    });
    t.is(status, 200, JSON.stringify(body));
    t.deepEqual(hosts.publicHits, ["/photo.jpg"]);
    t.is(body.enhanced_prompt, undefined);
    t.is(chat.requests.length, 0, "no enhancement call on edits");
    const meta = await sharp(Buffer.from(body.data[0]!.b64_json, "base64")).metadata();
    t.is(meta.format, "png");
    t.deepEqual([meta.width, meta.height], [1024, 1536]);
    const form = images.requests.at(-1)!.form!;
    // One picture to edit needs no role words.
    t.is(field(form, "prompt"), "add a hat");
    t.is(field(form, "quality"), "low");
    t.is(form.files[0]!.contentType, "image/jpeg");
  });
});

test("a GIF is sent to the vendor as a PNG of its first frame (image vendors take PNG, JPEG and WebP)", async (t) => {
  await withSetup(async ({ gateway, images, keys }) => {
    const gif = await sharp({ create: { width: 40, height: 30, channels: 3, background: "#884422" } })
      .gif()
      .toBuffer();
    const { status, body } = await edit(gateway, keys.pro, { prompt: "x", images: [dataUrl(gif, "image/gif")] });
    t.is(status, 200, JSON.stringify(body));
    const part = images.requests.at(-1)!.form!.files[0]!;
    t.is(part.contentType, "image/png");
    const meta = await sharp(part.bytes).metadata();
    t.deepEqual([meta.format, meta.width, meta.height], ["png", 40, 30]);
  });
});

test("a transparent background on an edit comes back with alpha; opaque pictures have none", async (t) => {
  await withSetup(async ({ gateway, images, keys }) => {
    const transparent = await edit(gateway, keys.pro, { prompt: "cut it out", images: [dataUrl(picture)], background: "transparent", output_format: "webp" });
    t.is(transparent.status, 200, JSON.stringify(transparent.body));
    t.is(field(images.requests.at(-1)!.form!, "background"), "transparent");
    const meta = await sharp(Buffer.from(transparent.body.data[0]!.b64_json, "base64")).metadata();
    t.is(meta.format, "webp");
    t.true(meta.hasAlpha);
    const jpeg = await edit(gateway, keys.pro, { prompt: "x", images: [dataUrl(picture)], background: "transparent", output_format: "jpeg" });
    t.is(jpeg.status, 400);
    t.is(jpeg.body.error?.param, "background");
    const opaque = await edit(gateway, keys.pro, { prompt: "x", images: [dataUrl(picture)], output_format: "jpeg" });
    t.false((await sharp(Buffer.from(opaque.body.data[0]!.b64_json, "base64")).metadata()).hasAlpha);
  });
});

test("an {asset_id} input is read from the library, not saved again, and the result joins its lineage", async (t) => {
  await withSetup(async ({ gateway, images, keys }) => {
    const generated = await fetch(`${gateway.url}/v1/image/generations`, {
      method: "POST",
      headers: { authorization: `Bearer ${keys.pro}`, "content-type": "application/json" },
      body: JSON.stringify({ prompt: "a cat", output_format: "png" }),
    });
    const source = ((await generated.json()) as ResultBody).data[0]!;
    const before = await storedCount(gateway, keys.pro);

    const { status, body } = await edit(gateway, keys.pro, { prompt: "the cat on the moon", images: [{ asset_id: source.asset_id, role: "subject" }] });
    t.is(status, 200, JSON.stringify(body));
    t.is(await storedCount(gateway, keys.pro), before + 1, "only the result is stored");
    const record = await assetRecord(gateway, body.data[0]!.asset_id!);
    t.is(record.image?.parentAssetId, source.asset_id);
    const form = images.requests.at(-1)!.form!;
    t.regex(field(form, "prompt")!, /Image 1: a person or object to keep/);
    t.true(form.files[0]!.bytes.equals(Buffer.from(source.b64_json, "base64")), "the stored bytes are sent");

    // Another agent's asset answers like a missing one, before anything is drawn or billed.
    const calls = images.requests.length;
    const foreign = await edit(gateway, keys.other, { prompt: "x", images: [{ asset_id: source.asset_id }] });
    t.is(foreign.status, 404);
    t.is(foreign.body.error?.code, "asset_not_found");
    t.is(foreign.body.error?.param, "images[0].asset_id");
    const missing = await edit(gateway, keys.pro, { prompt: "x", images: [{ asset_id: "file_doesnotexist" }] });
    t.is(missing.status, 404);
    t.is(missing.body.error?.message, foreign.body.error?.message);
    t.is(images.requests.length, calls);
    t.is(usageRows(gateway, "image.edits").length, 1);
  });
});

test("multipart form: repeated image[] parts take the default role, scalars parsed from text", async (t) => {
  await withSetup(async ({ gateway, images, keys }) => {
    const form = new FormData();
    form.append("prompt", "combine these");
    form.append("n", "2");
    form.append("output_format", "jpeg");
    form.append("output_compression", "60");
    form.append("image[]", new Blob([blobPart(picture)], { type: "application/octet-stream" }), "a.png");
    form.append("image", new Blob([blobPart(jpegFile(32, 32))]), "b.jpg");
    const { status, body } = await editForm(gateway, keys.pro, form);
    t.is(status, 200, JSON.stringify(body));
    t.is(body.data.length, 2);
    for (const item of body.data) {
      t.is(item.media_type, "image/jpeg");
      t.is((await sharp(Buffer.from(item.b64_json, "base64")).metadata()).format, "jpeg");
      t.truthy(item.asset_id);
    }
    const sent = images.requests.at(-1)!.form!;
    t.is(field(sent, "n"), "2");
    t.is(field(sent, "output_compression"), "60");
    // The sniffed types are sent, not the declared ones.
    t.deepEqual(
      sent.files.map((file) => file.contentType),
      ["image/png", "image/jpeg"],
    );
    t.regex(field(sent, "prompt")!, /Image 1: a reference[^\n]*\nImage 2: a reference/);

    const bad = new FormData();
    bad.append("prompt", "x");
    bad.append("n", "two");
    bad.append("image", new Blob([blobPart(picture)]), "a.png");
    const refused = await editForm(gateway, keys.pro, bad);
    t.is(refused.status, 400);
    t.is(refused.body.error?.param, "n");

    const huge = new FormData();
    huge.append("prompt", "x");
    huge.append("image", new Blob([new Uint8Array(20 * 1024 * 1024 + 1)]), "huge.png");
    const tooLarge = await editForm(gateway, keys.pro, huge);
    t.is(tooLarge.status, 413);
    t.is(tooLarge.body.error?.code, "payload_too_large");

    const six = new FormData();
    six.append("prompt", "x");
    for (let index = 0; index < 6; index++) six.append("image[]", new Blob([blobPart(picture)]), `p${index}.png`);
    const tooMany = await editForm(gateway, keys.pro, six);
    t.is(tooMany.status, 400);

    const noImage = new FormData();
    noImage.append("prompt", "x");
    const missing = await editForm(gateway, keys.pro, noImage);
    t.is(missing.status, 400);
    t.is(missing.body.error?.param, "image");
  });
});

test("mask is refused in both forms with mask_unsupported, nothing sent upstream", async (t) => {
  await withSetup(async ({ gateway, images, keys }) => {
    const json = await edit(gateway, keys.pro, { prompt: "x", images: [dataUrl(picture)], mask: dataUrl(picture) });
    t.is(json.status, 400);
    t.is(json.body.error?.code, "mask_unsupported");
    t.is(json.body.error?.param, "mask");
    const form = new FormData();
    form.append("prompt", "x");
    form.append("image", new Blob([blobPart(picture)]), "a.png");
    form.append("mask", new Blob([blobPart(picture)]), "mask.png");
    const multipart = await editForm(gateway, keys.pro, form);
    t.is(multipart.status, 400);
    t.is(multipart.body.error?.code, "mask_unsupported");
    t.is(images.requests.length, 0);
  });
});

test("roles: a role the model cannot serve is image_reference_unsupported, the only role is the default, edit only first", async (t) => {
  await withSetup(async ({ gateway, images, keys }) => {
    // dall-e-2 serves only `edit`: a bare picture takes it (rule 1) ...
    const plain = await edit(gateway, keys.pro, { prompt: "brighter", model: "openai/dall-e-2", images: [dataUrl(picture)] });
    t.is(plain.status, 200, JSON.stringify(plain.body));
    const sent = images.requests.at(-1)!.form!;
    t.is(field(sent, "model"), "dall-e-2");
    t.is(field(sent, "prompt"), "brighter");
    t.is(sent.files[0]!.field, "image");
    t.deepEqual((await sharp(Buffer.from(plain.body.data[0]!.b64_json, "base64")).metadata()).width, 1024);
    const calls = images.requests.length;

    // ... and a reference is refused, not drawn as an edit (rule 2).
    const reference = await edit(gateway, keys.pro, { prompt: "x", model: "openai/dall-e-2", images: [{ url: dataUrl(picture), role: "reference" }] });
    t.is(reference.status, 400);
    t.is(reference.body.error?.code, "image_reference_unsupported");
    t.is(reference.body.error?.param, "images[0].role");
    t.regex(reference.body.error!.message, /dall-e-2.*roles are edit/);

    const tooMany = await edit(gateway, keys.pro, { prompt: "x", model: "openai/dall-e-2", images: [dataUrl(picture), dataUrl(picture)] });
    t.is(tooMany.status, 400);
    t.is(tooMany.body.error?.param, "images");

    const editSecond = await edit(gateway, keys.pro, { prompt: "x", images: [dataUrl(picture), { url: dataUrl(picture), role: "edit" }] });
    t.is(editSecond.status, 400);
    t.is(editSecond.body.error?.param, "images[1].role");

    const badRole = await edit(gateway, keys.pro, { prompt: "x", images: [{ url: dataUrl(picture), role: "style" }] });
    t.is(badRole.status, 400);
    t.is(badRole.body.error?.param, "images[0].role");

    const five = await edit(gateway, keys.pro, { prompt: "x", images: Array.from({ length: 5 }, () => dataUrl(picture)) });
    t.is(five.status, 400);
    t.is(five.body.error?.param, "images");

    const none = await edit(gateway, keys.pro, { prompt: "x", images: [] });
    t.is(none.status, 400);

    // A model that does not edit at all.
    const dalle3 = await edit(gateway, keys.pro, { prompt: "x", model: "openai/dall-e-3", images: [dataUrl(picture)] });
    t.is(dalle3.status, 400);
    t.is(dalle3.body.error?.param, "model");
    t.is(images.requests.length, calls);
    t.is(usageRows(gateway, "image.edits").length, 1);
  });
});

test("private and internal URLs, redirect loops and oversized downloads are url_not_allowed; the internal host is never reached", async (t) => {
  await withSetup(async ({ gateway, images, hosts, keys }) => {
    const port = hosts.internal.port;
    hosts.redirect("/moved.png", `http://127.0.0.1:${port}/secret.png`);
    hosts.redirect("/loop.png", "/loop.png");
    hosts.serve("/huge.png", Buffer.alloc(20 * 1024 * 1024 + 1), "image/png");
    hosts.redirect("/to-intranet.png", `http://intranet.test:${port}/secret.png`);
    const refused = [
      `http://127.0.0.1:${port}/a.png`,
      `http://localhost:${port}/a.png`,
      `http://2130706433:${port}/a.png`,
      `http://0x7f.0.0.1:${port}/a.png`,
      `http://0177.0.0.1:${port}/a.png`,
      `http://[::1]:${port}/a.png`,
      `http://[::ffff:127.0.0.1]:${port}/a.png`,
      `http://10.0.0.7:${port}/a.png`,
      `http://192.168.1.20:${port}/a.png`,
      `http://100.64.0.1:${port}/a.png`,
      `http://169.254.169.254/latest/meta-data/`,
      `http://metadata.test:${port}/a.png`,
      `http://intranet.test:${port}/a.png`,
      `http://rebind.test:${port}/a.png`,
      `${hosts.publicBase}/moved.png`,
      `${hosts.publicBase}/to-intranet.png`,
      `${hosts.publicBase}/loop.png`,
      `${hosts.publicBase}/huge.png`,
      `http://user:pass@pictures.test/a.png`,
      `ftp://pictures.test/a.png`,
      `file:///etc/passwd`,
    ];
    for (const url of refused) {
      const { status, body } = await edit(gateway, keys.pro, { prompt: "x", images: [{ url, role: "reference" }] });
      t.is(status, 400, url);
      t.is(body.error?.code, "url_not_allowed", `${url}: ${JSON.stringify(body)}`);
      t.is(body.error?.param, "images[0].url", url);
      t.false(body.error!.message.includes(String(port)), "the message names no internal port");
    }
    t.is(hosts.internal.connections, 0, "the internal server was connected to");
    t.is(hosts.internal.requests.length, 0, "the internal server was sent a request");
    t.is(images.requests.length, 0);
    t.is(usageRows(gateway, "image.edits").length, 0);
  });
});

test("what is not a picture is invalid_image: text, a truncated file, a decompression bomb; an SVG is 415; a dead URL is url_fetch_failed", async (t) => {
  await withSetup(async ({ gateway, images, hosts, keys }) => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>');
    // A valid PNG header declaring 100000 x 100000 pixels, then nothing: refused from the header.
    const bomb = pngFile(8, 8);
    bomb.writeUInt32BE(100_000, 16);
    bomb.writeUInt32BE(100_000, 20);
    const cases: Array<[string, string]> = [
      ["text", dataUrl(Buffer.from("hello, this is not a picture"), "image/png")],
      ["truncated", dataUrl(picture.subarray(0, picture.length - 30))],
      ["bomb", dataUrl(bomb)],
      ["not base64", "data:image/png;base64,@@@@"],
    ];
    for (const [name, source] of cases) {
      const { status, body } = await edit(gateway, keys.pro, { prompt: "x", images: [source] });
      t.is(status, 400, name);
      t.is(body.error?.code, "invalid_image", `${name}: ${JSON.stringify(body)}`);
      t.is(body.error?.param, "images[0]", name);
    }
    // A file of a type gw does not take: 415 (media-engines.test.ts covers every picture input).
    const vector = await edit(gateway, keys.pro, { prompt: "x", images: [dataUrl(svg, "image/svg+xml")] });
    t.is(vector.status, 415);
    t.like(vector.body.error, { code: "unsupported_media_type", param: "images[0]" });
    const dead = await edit(gateway, keys.pro, { prompt: "x", images: [`${hosts.publicBase}/missing.png`] });
    t.is(dead.status, 400);
    t.is(dead.body.error?.code, "url_fetch_failed");
    t.is(images.requests.length, 0);
  });
});

test("plan caps, allowlist and credits apply to edits like generations", async (t) => {
  await withSetup(
    async ({ gateway, images, hosts, keys }) => {
      hosts.serve("/big.png", picture, "image/png");
      const capped = await edit(gateway, keys.free, { prompt: "x", images: [dataUrl(picture)], n: 2 });
      t.is(capped.status, 403);
      t.is(capped.body.error?.code, "plan_limit_exceeded");
      const notAllowed = await edit(gateway, keys.pro, { prompt: "x", model: "stability/core", images: [dataUrl(picture)] });
      t.is(notAllowed.status, 400);
      t.is(notAllowed.body.error?.code, "model_not_allowed");
      const broke = await edit(gateway, keys.free, { prompt: "x", images: [`${hosts.publicBase}/big.png`], quality: "high" });
      t.is(broke.status, 402);
      t.is(broke.body.error?.code, "insufficient_credits");
      t.deepEqual(hosts.publicHits, [], "nothing is downloaded for a caller who cannot pay");
      t.is(images.requests.length, 0);
    },
    (config) => {
      // A free plan whose credits cannot pay for one high-quality picture.
      config.plans = { ...config.plans, free: { monthlyCredits: 1000 } };
    },
  );
});

test("no image model configured: edits answer 503 provider_not_configured", async (t) => {
  await withSetup(
    async ({ gateway, keys }) => {
      const { status, body } = await edit(gateway, keys.pro, { prompt: "x", images: [dataUrl(picture)] });
      t.is(status, 503);
      t.is(body.error?.code, "provider_not_configured");
    },
    (config) => {
      config.tools.image = { default: null, allow: [] };
    },
  );
});

test("an upstream error about an accepted value comes back verbatim, nothing billed; a refusal is a billed 200", async (t) => {
  await withSetup(async ({ gateway, images, keys }) => {
    const vendorError = {
      error: { message: "Invalid image file or mode for image 1", type: "invalid_request_error", param: "image", code: "invalid_image_format" },
    };
    images.set({ status: 400, errorBody: vendorError });
    const failed = await edit(gateway, keys.pro, { prompt: "x", images: [dataUrl(picture)] });
    t.is(failed.status, 400);
    t.deepEqual(failed.body as unknown, vendorError);
    t.deepEqual(usageRows(gateway, "image.edits"), []);

    images.set({ status: 200, refusal: true });
    const refused = await edit(gateway, keys.pro, { prompt: "x", images: [dataUrl(picture)], n: 2 });
    t.is(refused.status, 200);
    t.deepEqual(refused.body.data, []);
    t.truthy((refused.body as { refusal?: string }).refusal);
    const rows = usageRows(gateway, "image.edits");
    t.is(rows.length, 1);
    t.is(rows[0]!.units.images, 2);
  });
});
