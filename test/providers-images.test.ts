// The image capability of each provider type, through the registry and the real UpstreamHttp,
// against fakes speaking OpenAI Images and Stability v2beta: what went upstream and what came back.

import test from "ava";
import { type UpstreamSettings, upstreamSchema } from "../src/config/config-schema.js";
import { UpstreamHttp } from "../src/net/upstream-http.js";
import type { ImageCapability } from "../src/providers/image-types.js";
import { UnsupportedContentError, UpstreamHttpError, UpstreamNetworkError } from "../src/providers/provider-errors.js";
import { providerTypes } from "../src/providers/registry.js";
import { CONTENT_FILTERED_REFUSAL } from "../src/providers/stability/convert-from-stability-images.js";
import { DEFAULT_UPSCALE_PROMPT } from "../src/providers/stability/convert-to-stability-images.js";
import { imageFile, imageSize } from "./fakes/image-files.js";
import { type FakeOpenAIImages, startFakeOpenAIImages } from "./fakes/openai-images.js";
import { type FakeStability, startFakeStability } from "./fakes/stability.js";
import { providerHooks } from "./helpers/provider-hooks.js";

const http = new UpstreamHttp();
const settings: UpstreamSettings = { ...upstreamSchema.parse({}), retries: 0 };
const options = () => ({ signal: new AbortController().signal });

test.after.always(() => http.close());

function imagesOf(type: string, baseUrl: string, upstream: UpstreamSettings = settings): ImageCapability {
  const provider = providerTypes.get(type)!.create({ name: type, config: { type, baseUrl, apiKey: "test-key" }, upstream, http, ...providerHooks });
  return provider.images!;
}

async function withOpenAI(run: (images: ImageCapability, fake: FakeOpenAIImages) => Promise<void>): Promise<void> {
  const fake = await startFakeOpenAIImages();
  try {
    await run(imagesOf("openai", fake.url), fake);
  } finally {
    await fake.close();
  }
}

async function withStability(run: (images: ImageCapability, fake: FakeStability) => Promise<void>): Promise<void> {
  const fake = await startFakeStability();
  try {
    await run(imagesOf("stability", fake.url), fake);
  } finally {
    await fake.close();
  }
}

/** PNG colour type 6 (RGBA) or 4 (grey + alpha). */
function pngHasAlpha(bytes: Buffer): boolean {
  return bytes[25] === 6 || bytes[25] === 4;
}

test("registry: openai offers chat, images and audio, stability images only", (t) => {
  t.deepEqual(providerTypes.get("openai")!.capabilities, ["chat", "embeddings", "image", "transcription", "speech", "video"]);
  t.deepEqual(providerTypes.get("stability")!.capabilities, ["image"]);
  const stability = providerTypes.get("stability")!.create({ name: "stability", config: { type: "stability" }, upstream: settings, http, ...providerHooks });
  t.is(stability.chat, undefined);
  t.is(typeof stability.images!.generate, "function");
  t.is(typeof stability.images!.edit, "function");
  t.is(
    providerTypes.get("openai")!.create({ name: "openai", config: { type: "openai" }, upstream: settings, http, ...providerHooks }).images!.upscale,
    undefined,
  );
});

// ---- OpenAI ----

test("openai gpt-image-1: generations JSON with size and output options, base64 pictures back", async (t) => {
  await withOpenAI(async (images, fake) => {
    const result = await images.generate!(
      {
        model: "gpt-image-1",
        prompt: "a red fox",
        n: 2,
        width: 1536,
        height: 1024,
        quality: "high",
        background: "opaque",
        outputFormat: "webp",
        outputCompression: 80,
      },
      options(),
    );
    const sent = fake.requests[0]!;
    t.is(sent.path, "/v1/images/generations");
    t.is(sent.headers.authorization, "Bearer test-key");
    t.is(sent.headers["content-type"], "application/json");
    t.deepEqual(sent.json, {
      model: "gpt-image-1",
      prompt: "a red fox",
      n: 2,
      size: "1536x1024",
      quality: "high",
      background: "opaque",
      output_format: "webp",
      output_compression: 80,
    });
    t.is(result.images.length, 2);
    for (const image of result.images) {
      t.is(image.mediaType, "image/webp");
      t.deepEqual(imageSize(image.bytes), { width: 1536, height: 1024 });
      t.is(image.revisedPrompt, undefined);
    }
    t.is(result.refusal, undefined);
    t.is(result.upstreamRequestId, "req_img_1");
    t.is(result.quality, "high");
    t.deepEqual(result.usage, { inputTokens: 12, outputTokens: 2112 });
  });
});

test("openai gpt-image-1: a transparent PNG keeps its alpha; auto quality reports the quality drawn", async (t) => {
  await withOpenAI(async (images, fake) => {
    fake.enqueue({ quality: "low" });
    const result = await images.generate!(
      { model: "gpt-image-1", prompt: "a sticker", n: 1, aspectRatio: "2:3", background: "transparent", outputFormat: "png", quality: "auto" },
      options(),
    );
    t.is(fake.requests[0]!.json.size, "1024x1536");
    t.is(result.images[0]!.mediaType, "image/png");
    t.true(pngHasAlpha(result.images[0]!.bytes));
    t.deepEqual(imageSize(result.images[0]!.bytes), { width: 1024, height: 1536 });
    t.is(result.quality, "low");
  });
});

test("openai dall-e-3: one call per picture, base64 asked for, quality mapped, revised prompt kept", async (t) => {
  await withOpenAI(async (images, fake) => {
    fake.set({ revisedPrompt: "A watercolour lighthouse at dusk" });
    const result = await images.generate!(
      { model: "dall-e-3", prompt: "lighthouse", n: 3, aspectRatio: "16:9", quality: "high", outputFormat: "png" },
      options(),
    );
    t.is(fake.requests.length, 3);
    for (const sent of fake.requests) {
      t.deepEqual(sent.json, { model: "dall-e-3", prompt: "lighthouse", n: 1, size: "1792x1024", quality: "hd", response_format: "b64_json" });
    }
    t.is(result.images.length, 3);
    for (const image of result.images) {
      t.is(image.mediaType, "image/png");
      t.is(image.revisedPrompt, "A watercolour lighthouse at dusk");
      t.deepEqual(imageSize(image.bytes), { width: 1792, height: 1024 });
    }
    t.regex(result.upstreamRequestId!, /^req_img_\d$/);
  });
});

test("openai: values the model cannot take are refused before any call", async (t) => {
  await withOpenAI(async (images, fake) => {
    const webp = await t.throwsAsync(images.generate!({ model: "dall-e-3", prompt: "x", n: 1, outputFormat: "webp" }, options()), {
      instanceOf: UnsupportedContentError,
    });
    t.is(webp.param, "output_format");
    const transparent = await t.throwsAsync(images.generate!({ model: "dall-e-3", prompt: "x", n: 1, background: "transparent" }, options()), {
      instanceOf: UnsupportedContentError,
    });
    t.is(transparent.param, "background");
    const negative = await t.throwsAsync(images.generate!({ model: "gpt-image-1", prompt: "x", n: 1, negativePrompt: "blur" }, options()), {
      instanceOf: UnsupportedContentError,
    });
    t.is(negative.param, "negative_prompt");
    const seed = await t.throwsAsync(images.generate!({ model: "gpt-image-1", prompt: "x", n: 1, seed: 3 }, options()), {
      instanceOf: UnsupportedContentError,
    });
    t.is(seed.param, "seed");
    const edit = await t.throwsAsync(
      images.edit!({ model: "dall-e-3", prompt: "x", n: 1, images: [{ bytes: imageFile("png", 8, 8), mediaType: "image/png", role: "edit" }] }, options()),
      { instanceOf: UnsupportedContentError },
    );
    t.is(edit.param, "model");
    t.is(fake.requests.length, 0);
  });
});

test("openai gpt-image-1: edits go as multipart with repeated image[] parts, bytes intact, roles told in the prompt", async (t) => {
  await withOpenAI(async (images, fake) => {
    const photo = imageFile("png", 64, 48, [1, 2, 3, 255]);
    const style = imageFile("jpeg", 16, 16);
    const result = await images.edit!(
      {
        model: "gpt-image-1",
        prompt: "put the cat in this style",
        n: 2,
        width: 1024,
        height: 1024,
        outputFormat: "jpeg",
        outputCompression: 70,
        images: [
          { bytes: photo, mediaType: "image/png", role: "subject" },
          { bytes: style, mediaType: "image/jpeg", role: "reference" },
        ],
      },
      options(),
    );
    const sent = fake.requests[0]!;
    t.is(sent.path, "/v1/images/edits");
    t.regex(String(sent.headers["content-type"]), /^multipart\/form-data; boundary=/);
    const form = sent.form!;
    t.deepEqual(form.fields, {
      model: ["gpt-image-1"],
      prompt: [
        "put the cat in this style\n\nImage 1: a person or object to keep as it is, placed in the new picture.\nImage 2: a reference; borrow only what the prompt asks for (style, layout or detail).",
      ],
      n: ["2"],
      size: ["1024x1024"],
      output_format: ["jpeg"],
      output_compression: ["70"],
    });
    t.deepEqual(
      form.files.map((file) => ({ field: file.field, filename: file.filename, contentType: file.contentType })),
      [
        { field: "image[]", filename: "image-1.png", contentType: "image/png" },
        { field: "image[]", filename: "image-2.jpg", contentType: "image/jpeg" },
      ],
    );
    t.true(form.files[0]!.bytes.equals(photo));
    t.true(form.files[1]!.bytes.equals(style));
    t.is(result.images.length, 2);
    t.is(result.images[0]!.mediaType, "image/jpeg");
    t.deepEqual(imageSize(result.images[0]!.bytes), { width: 1024, height: 1024 });
  });
});

test("openai: one picture to edit goes with the prompt untouched", async (t) => {
  await withOpenAI(async (images, fake) => {
    await images.edit!(
      { model: "gpt-image-1", prompt: "make the sky red", n: 1, images: [{ bytes: imageFile("webp", 8, 8), mediaType: "image/webp", role: "edit" }] },
      options(),
    );
    t.deepEqual(fake.requests[0]!.form!.fields.prompt, ["make the sky red"]);
    t.is(fake.requests[0]!.form!.files[0]!.filename, "image-1.webp");
  });
});

test("openai: a moderation block is a refusal with the vendor's message, not an error", async (t) => {
  await withOpenAI(async (images, fake) => {
    fake.enqueue({ refusal: true }, { refusal: true });
    const gpt = await images.generate!({ model: "gpt-image-1", prompt: "x", n: 1 }, options());
    t.deepEqual(gpt.images, []);
    t.regex(gpt.refusal!, /rejected by the safety system/);
    const dalle = await images.generate!({ model: "dall-e-3", prompt: "x", n: 1 }, options());
    t.deepEqual(dalle.images, []);
    t.regex(dalle.refusal!, /safety system/);
  });
});

test("openai: a 4xx keeps OpenAI's envelope as body and vendorBody; a non-JSON body gets an envelope", async (t) => {
  await withOpenAI(async (images, fake) => {
    const vendor = { error: { message: "Invalid size for this model.", type: "invalid_request_error", param: "size", code: "invalid_value" } };
    fake.enqueue({ status: 400, errorBody: vendor }, { status: 502, errorBody: "<html>bad gateway</html>" });
    const bad = await t.throwsAsync(images.generate!({ model: "gpt-image-1", prompt: "x", n: 1 }, options()), { instanceOf: UpstreamHttpError });
    t.is(bad.status, 400);
    t.deepEqual(JSON.parse(bad.body), vendor);
    t.deepEqual(JSON.parse(bad.vendorBody!), vendor);
    const proxy = await t.throwsAsync(images.generate!({ model: "gpt-image-1", prompt: "x", n: 1 }, options()), { instanceOf: UpstreamHttpError });
    t.is(proxy.status, 502);
    t.deepEqual(JSON.parse(proxy.body), { error: { message: "OpenAI answered HTTP 502.", type: "server_error", param: null, code: "http_502" } });
    t.is(proxy.vendorBody, "<html>bad gateway</html>");
  });
});

test("openai: a validation error of the real API comes back verbatim", async (t) => {
  await withOpenAI(async (images) => {
    const error = await t.throwsAsync(images.generate!({ model: "gpt-image-1", prompt: "x", n: 1, width: 640, height: 480 }, options()), {
      instanceOf: UpstreamHttpError,
    });
    t.is(error.status, 400);
    t.is(JSON.parse(error.body).error.param, "size");
  });
});

test("openai: 429 keeps Retry-After; one failed call of several fails the request", async (t) => {
  await withOpenAI(async (images, fake) => {
    fake.enqueue({ status: 429, retryAfter: "2" });
    const limited = await t.throwsAsync(images.generate!({ model: "gpt-image-1", prompt: "x", n: 1 }, options()), { instanceOf: UpstreamHttpError });
    t.is(limited.status, 429);
    t.is(limited.retryAfterMs, 2000);
    fake.enqueue({ status: 500 });
    const failed = await t.throwsAsync(images.generate!({ model: "dall-e-3", prompt: "x", n: 2 }, options()), { instanceOf: UpstreamHttpError });
    t.is(failed.status, 500);
  });
});

test("openai: a slow first byte is a first_byte_timeout", async (t) => {
  const fake = await startFakeOpenAIImages({ firstByteDelayMs: 4000 });
  try {
    const images = imagesOf("openai", fake.url, { ...settings, firstByteTimeoutMs: 300 });
    const error = await t.throwsAsync(images.generate!({ model: "gpt-image-1", prompt: "x", n: 1 }, options()), { instanceOf: UpstreamNetworkError });
    t.is(error.failure, "first_byte_timeout");
  } finally {
    await fake.close();
  }
});

// ---- Stability ----

test("stability core: multipart form with the diffusion knobs, picture bytes with seed back", async (t) => {
  await withStability(async (images, fake) => {
    const result = await images.generate!(
      { model: "core", prompt: "a castle", n: 1, aspectRatio: "16:9", negativePrompt: "fog", stylePreset: "anime", seed: 42, outputFormat: "webp" },
      options(),
    );
    const sent = fake.requests[0]!;
    t.is(sent.path, "/v2beta/stable-image/generate/core");
    t.is(sent.headers.authorization, "Bearer test-key");
    t.is(sent.headers.accept, "image/*");
    t.deepEqual(sent.form.fields, {
      prompt: ["a castle"],
      aspect_ratio: ["16:9"],
      negative_prompt: ["fog"],
      style_preset: ["anime"],
      seed: ["42"],
      output_format: ["webp"],
    });
    t.deepEqual(sent.form.files, []);
    t.is(result.images.length, 1);
    t.is(result.images[0]!.mediaType, "image/webp");
    t.is(result.images[0]!.seed, 42);
    t.deepEqual(imageSize(result.images[0]!.bytes), { width: 1344, height: 768 });
    t.is(result.upstreamRequestId, "stab_req_1");
  });
});

test("stability sd3: cfg_scale reaches the form; an SD 3.5 model id goes as the model field", async (t) => {
  await withStability(async (images, fake) => {
    await images.generate!({ model: "sd3", prompt: "a castle", n: 1, cfgScale: 5.5 }, options());
    t.is(fake.requests[0]!.path, "/v2beta/stable-image/generate/sd3");
    t.deepEqual(fake.requests[0]!.form.fields, { prompt: ["a castle"], cfg_scale: ["5.5"] });
    await images.generate!({ model: "sd3.5-flash", prompt: "a castle", n: 1, width: 1216, height: 832 }, options());
    t.deepEqual(fake.requests[1]!.form.fields, { prompt: ["a castle"], model: ["sd3.5-flash"], aspect_ratio: ["3:2"] });
  });
});

test("stability: n pictures are n calls with seeds seed, seed + 1 ...", async (t) => {
  await withStability(async (images, fake) => {
    const result = await images.generate!({ model: "ultra", prompt: "a castle", n: 3, seed: 7, outputFormat: "png" }, options());
    t.deepEqual(fake.requests.map((request) => request.form.fields.seed![0]).sort(), ["7", "8", "9"]);
    t.deepEqual(
      result.images.map((image) => image.seed),
      [7, 8, 9],
    );
    t.true(result.images.every((image) => image.mediaType === "image/png"));
  });
});

test("stability: values the model cannot take are refused before any call", async (t) => {
  await withStability(async (images, fake) => {
    const cfg = await t.throwsAsync(images.generate!({ model: "core", prompt: "x", n: 1, cfgScale: 4 }, options()), { instanceOf: UnsupportedContentError });
    t.is(cfg.param, "cfg_scale");
    const ratio = await t.throwsAsync(images.generate!({ model: "core", prompt: "x", n: 1, aspectRatio: "4:3" }, options()), {
      instanceOf: UnsupportedContentError,
    });
    t.is(ratio.param, "aspect_ratio");
    const transparent = await t.throwsAsync(images.generate!({ model: "ultra", prompt: "x", n: 1, background: "transparent" }, options()), {
      instanceOf: UnsupportedContentError,
    });
    t.is(transparent.param, "background");
    const unknown = await t.throwsAsync(images.generate!({ model: "dall-e-3", prompt: "x", n: 1 }, options()), { instanceOf: UnsupportedContentError });
    t.is(unknown.param, "model");
    t.is(fake.requests.length, 0);
  });
});

test("stability: 403 content_moderation is a refusal with the vendor's message and id", async (t) => {
  await withStability(async (images, fake) => {
    fake.enqueue({ moderation: true });
    const result = await images.generate!({ model: "core", prompt: "x", n: 1 }, options());
    t.deepEqual(result.images, []);
    t.regex(result.refusal!, /flagged by our content moderation system/);
    t.regex(result.upstreamRequestId!, /^[0-9a-f]{32}$/);
  });
});

test("stability: finish-reason CONTENT_FILTERED is a refusal; the blurred picture is not handed out", async (t) => {
  await withStability(async (images, fake) => {
    fake.enqueue({ contentFiltered: true });
    const result = await images.generate!({ model: "core", prompt: "x", n: 1 }, options());
    t.deepEqual(result.images, []);
    t.is(result.refusal, CONTENT_FILTERED_REFUSAL);
    t.is(result.upstreamRequestId, "stab_req_1");
  });
});

test("stability: a 4xx becomes the OpenAI envelope naming the field, with Stability's body as vendorBody", async (t) => {
  await withStability(async (images) => {
    const error = await t.throwsAsync(images.generate!({ model: "core", prompt: "x", n: 1, stylePreset: "watercolour" }, options()), {
      instanceOf: UpstreamHttpError,
    });
    t.is(error.status, 400);
    const body = JSON.parse(error.body);
    t.deepEqual(body.error.type, "invalid_request_error");
    t.deepEqual(body.error.param, "style_preset");
    t.deepEqual(body.error.code, "bad_request");
    t.regex(body.error.message, /^style_preset: must be one of/);
    const vendor = JSON.parse(error.vendorBody!);
    t.is(vendor.name, "bad_request");
    t.deepEqual(vendor.errors, [body.error.message]);
  });
});

test("stability: 429 keeps Retry-After, or Stability's 60 s pause without one; 5xx is a server_error", async (t) => {
  await withStability(async (images, fake) => {
    fake.enqueue({ status: 429, retryAfter: "3" }, { status: 429 }, { status: 500 });
    const withHeader = await t.throwsAsync(images.generate!({ model: "core", prompt: "x", n: 1 }, options()), { instanceOf: UpstreamHttpError });
    t.is(withHeader.retryAfterMs, 3000);
    t.is(JSON.parse(withHeader.body).error.code, "rate_limit_exceeded");
    const without = await t.throwsAsync(images.generate!({ model: "core", prompt: "x", n: 1 }, options()), { instanceOf: UpstreamHttpError });
    t.is(without.retryAfterMs, 60_000);
    const server = await t.throwsAsync(images.generate!({ model: "core", prompt: "x", n: 1 }, options()), { instanceOf: UpstreamHttpError });
    t.is(server.status, 500);
    t.is(JSON.parse(server.body).error.type, "server_error");
  });
});

test("stability fast upscale: the picture goes as a file part, 4x its size comes back", async (t) => {
  await withStability(async (images, fake) => {
    const input = imageFile("png", 100, 80);
    const result = await images.upscale!({ model: "fast-upscale", image: { bytes: input, mediaType: "image/png" }, scale: 4, outputFormat: "webp" }, options());
    const sent = fake.requests[0]!;
    t.is(sent.path, "/v2beta/stable-image/upscale/fast");
    t.deepEqual(sent.form.fields, { output_format: ["webp"] });
    t.is(sent.form.files.length, 1);
    t.is(sent.form.files[0]!.field, "image");
    t.true(sent.form.files[0]!.bytes.equals(input));
    t.is(result.images[0]!.mediaType, "image/webp");
    t.deepEqual(imageSize(result.images[0]!.bytes), { width: 400, height: 320 });
    const factor = await t.throwsAsync(images.upscale!({ model: "fast-upscale", image: { bytes: input, mediaType: "image/png" }, scale: 2 }, options()), {
      instanceOf: UnsupportedContentError,
    });
    t.is(factor.param, "scale");
  });
});

test("stability conservative upscale: a neutral prompt is supplied; about 4 megapixels come back", async (t) => {
  await withStability(async (images, fake) => {
    const result = await images.upscale!({ model: "conservative-upscale", image: { bytes: imageFile("jpeg", 256, 256), mediaType: "image/jpeg" } }, options());
    t.deepEqual(fake.requests[0]!.form.fields, { prompt: [DEFAULT_UPSCALE_PROMPT] });
    t.deepEqual(imageSize(result.images[0]!.bytes), { width: 2048, height: 2048 });
    t.is(result.images[0]!.mediaType, "image/png");
  });
});

test("stability remove-background: same size with transparency; jpeg refused", async (t) => {
  await withStability(async (images, fake) => {
    const input = imageFile("jpeg", 120, 90);
    const png = await images.removeBackground!({ model: "remove-background", image: { bytes: input, mediaType: "image/jpeg" } }, options());
    t.is(fake.requests[0]!.path, "/v2beta/stable-image/edit/remove-background");
    t.is(png.images[0]!.mediaType, "image/png");
    t.true(pngHasAlpha(png.images[0]!.bytes));
    t.deepEqual(imageSize(png.images[0]!.bytes), { width: 120, height: 90 });
    const webp = await images.removeBackground!(
      { model: "remove-background", image: { bytes: input, mediaType: "image/jpeg" }, outputFormat: "webp" },
      options(),
    );
    t.is(webp.images[0]!.mediaType, "image/webp");
    const jpeg = await t.throwsAsync(
      images.removeBackground!({ model: "remove-background", image: { bytes: input, mediaType: "image/jpeg" }, outputFormat: "jpeg" }, options()),
      {
        instanceOf: UnsupportedContentError,
      },
    );
    t.is(jpeg.param, "output_format");
  });
});

test("stability: an aborted call rejects and leaves no request hanging", async (t) => {
  const fake = await startFakeStability({ firstByteDelayMs: 5000 });
  try {
    const images = imagesOf("stability", fake.url);
    const controller = new AbortController();
    const pending = images.generate!({ model: "core", prompt: "x", n: 2 }, { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("client went away")), 100);
    // Rejecting at all is the proof: the fake would answer (and the call succeed) after 5 s.
    await t.throwsAsync(pending);
  } finally {
    await fake.close();
  }
});
