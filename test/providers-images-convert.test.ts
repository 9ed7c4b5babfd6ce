// The pure parts of the image providers, with plain equality: the multipart builder, sniffing,
// request converters, error and refusal mapping, and the n-pictures-in-several-calls helper.
import test from "ava";
import { drawInBatches, mergeImageResults } from "../src/providers/image-batches.js";
import { bareMediaType, imageFileName, sniffImageMediaType } from "../src/providers/image-bytes.js";
import type { ImageResult } from "../src/providers/image-types.js";
import { encodeMultipart } from "../src/providers/multipart-body.js";
import { convertToOpenAIGeneration, openaiImageSize, promptWithRoles } from "../src/providers/openai/convert-to-openai-images.js";
import { fromOpenAIHttpError, openaiImageRefusal } from "../src/providers/openai/openai-error.js";
import { openaiImageModelRules } from "../src/providers/openai/openai-image-model-rules.js";
import { UpstreamHttpError } from "../src/providers/provider-errors.js";
import { convertFromStabilityImage } from "../src/providers/stability/convert-from-stability-images.js";
import { convertToStabilityGeneration, stabilityAspectRatio } from "../src/providers/stability/convert-to-stability-images.js";
import { fromStabilityHttpError, stabilityRefusal } from "../src/providers/stability/stability-error.js";
import { imageFile } from "./fakes/image-files.js";
import { parseMultipart } from "./fakes/multipart-form.js";

const httpError = (status: number, body: string, retryAfterMs?: number) =>
  new UpstreamHttpError({ provider: "vendor", status, body, contentType: "application/json", retryAfterMs });

test("encodeMultipart: fields and files survive a real parser byte for byte", async (t) => {
  const binary = Buffer.from([0x0d, 0x0a, 0x2d, 0x2d, 0x00, 0xff, 0x0d, 0x0a]);
  const { body, contentType } = encodeMultipart(
    [
      { name: "prompt", value: 'line one\r\nline "two" ünïcode' },
      { name: "image[]", filename: "a.png", contentType: "image/png", bytes: binary },
      { name: "image[]", filename: "b.webp", contentType: "image/webp", bytes: binary.subarray(2, 6) },
    ],
    "fixed-boundary",
  );
  t.is(contentType, "multipart/form-data; boundary=fixed-boundary");
  const form = await parseMultipart({ "content-type": contentType }, body);
  t.deepEqual(form.fields, { prompt: ['line one\r\nline "two" ünïcode'] });
  t.deepEqual(
    form.files.map((file) => [file.field, file.filename, file.contentType, [...file.bytes]]),
    [
      ["image[]", "a.png", "image/png", [...binary]],
      ["image[]", "b.webp", "image/webp", [0x2d, 0x2d, 0x00, 0xff]],
    ],
  );
});

test("sniffImageMediaType, bareMediaType, imageFileName", (t) => {
  t.is(sniffImageMediaType(imageFile("png", 2, 2)), "image/png");
  t.is(sniffImageMediaType(imageFile("jpeg", 2, 2)), "image/jpeg");
  t.is(sniffImageMediaType(imageFile("webp", 2, 2)), "image/webp");
  t.is(sniffImageMediaType(Buffer.from("GIF89a....")), "image/gif");
  t.is(sniffImageMediaType(Buffer.from("<svg/>")), undefined);
  t.is(bareMediaType("Image/PNG; charset=binary"), "image/png");
  t.is(bareMediaType(undefined), undefined);
  t.is(imageFileName("image-1", "image/jpeg"), "image-1.jpg");
  t.is(imageFileName("image", "application/x-thing"), "image.bin");
});

test("promptWithRoles: one picture to edit needs no words; otherwise each picture's role is listed", (t) => {
  t.is(promptWithRoles("make it night", ["edit"]), "make it night");
  t.is(
    promptWithRoles("combine", ["edit", "reference"]),
    "combine\n\nImage 1: the picture to change; keep everything the prompt does not mention.\nImage 2: a reference; borrow only what the prompt asks for (style, layout or detail).",
  );
  t.is(promptWithRoles("p", ["subject"]), "p\n\nImage 1: a person or object to keep as it is, placed in the new picture.");
});

test("openaiImageSize: the resolved size, else the nearest fixed size for the ratio, else none", (t) => {
  const gpt = openaiImageModelRules("gpt-image-1");
  const dalle = openaiImageModelRules("dall-e-3");
  t.is(openaiImageSize({ width: 1024, height: 1536 }, gpt), "1024x1536");
  t.is(openaiImageSize({ aspectRatio: "16:9" }, gpt), "1536x1024");
  t.is(openaiImageSize({ aspectRatio: "9:16" }, dalle), "1024x1792");
  t.is(openaiImageSize({ aspectRatio: "1:1" }, dalle), "1024x1024");
  t.is(openaiImageSize({}, gpt), undefined);
  t.throws(() => openaiImageSize({ aspectRatio: "wide" }, gpt), { message: /not W:H/ });
});

test("convertToOpenAIGeneration: per family", (t) => {
  t.deepEqual(convertToOpenAIGeneration({ model: "gpt-image-1", prompt: "p", n: 4, quality: "auto" }, 4), {
    model: "gpt-image-1",
    prompt: "p",
    n: 4,
    quality: "auto",
  });
  t.deepEqual(convertToOpenAIGeneration({ model: "dall-e-3", prompt: "p", n: 2, quality: "medium", outputFormat: "png", background: "opaque" }, 1), {
    model: "dall-e-3",
    prompt: "p",
    n: 1,
    quality: "standard",
    response_format: "b64_json",
  });
  t.deepEqual(convertToOpenAIGeneration({ model: "dall-e-3", prompt: "p", n: 1, quality: "auto" }, 1), {
    model: "dall-e-3",
    prompt: "p",
    n: 1,
    response_format: "b64_json",
  });
  t.is(openaiImageModelRules("gpt-image-2").family, "gpt-image");
  t.is(openaiImageModelRules("dall-e-2").maxImagesPerCall, 10);
});

test("openai errors: moderation codes are refusals; an envelope is kept; anything else gets one", (t) => {
  const blocked = JSON.stringify({
    error: { message: "Rejected by the safety system.", type: "image_generation_user_error", param: null, code: "moderation_blocked" },
  });
  t.is(openaiImageRefusal(httpError(400, blocked)), "Rejected by the safety system.");
  t.is(
    openaiImageRefusal(httpError(400, JSON.stringify({ error: { code: "content_policy_violation", message: "" } }))),
    "The request was rejected by OpenAI's safety system.",
  );
  t.is(openaiImageRefusal(httpError(400, JSON.stringify({ error: { code: "invalid_value", message: "bad" } }))), undefined);
  t.is(openaiImageRefusal(httpError(500, blocked)), undefined);
  const kept = fromOpenAIHttpError(
    httpError(401, '{"error":{"message":"Incorrect API key","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}', 5),
  );
  t.is(kept.body, kept.vendorBody!);
  t.is(kept.retryAfterMs, 5);
  const built = fromOpenAIHttpError(httpError(429, "slow down"));
  t.deepEqual(JSON.parse(built.body), { error: { message: "OpenAI answered HTTP 429.", type: "rate_limit_error", param: null, code: "http_429" } });
  t.is(built.vendorBody, "slow down");
});

test("convertToStabilityGeneration: fields per model, seeds offset per picture", (t) => {
  const request = { model: "sd3.5-large", prompt: "p", n: 2, seed: 4_294_967_294, aspectRatio: "9:16", cfgScale: 3, outputFormat: "jpeg" as const };
  t.deepEqual(convertToStabilityGeneration(request, 1), {
    path: "/v2beta/stable-image/generate/sd3",
    parts: [
      { name: "prompt", value: "p" },
      { name: "model", value: "sd3.5-large" },
      { name: "aspect_ratio", value: "9:16" },
      { name: "cfg_scale", value: "3" },
      { name: "seed", value: "0" },
      { name: "output_format", value: "jpeg" },
    ],
  });
  t.throws(() => convertToStabilityGeneration({ model: "ultra", prompt: "p", n: 1, quality: "high" }, 0), { message: /quality/ });
  t.throws(() => convertToStabilityGeneration({ model: "core", prompt: "p", n: 1, outputCompression: 50 }, 0), { message: /output_compression/ });
});

test("stabilityAspectRatio: asked for, else nearest to the size, else Stability's default", (t) => {
  t.is(stabilityAspectRatio({ aspectRatio: "21:9" }), "21:9");
  t.is(stabilityAspectRatio({ width: 1344, height: 768 }), "16:9");
  t.is(stabilityAspectRatio({ width: 1024, height: 1536 }), "2:3");
  t.is(stabilityAspectRatio({}), undefined);
});

test("convertFromStabilityImage: bytes with headers, JSON answers, filtered answers", (t) => {
  const png = imageFile("png", 4, 4);
  t.deepEqual(convertFromStabilityImage("stability", png, { "content-type": "image/png", "finish-reason": "SUCCESS", seed: "99", "x-request-id": "r1" }), {
    images: [{ bytes: png, mediaType: "image/png", seed: 99 }],
    upstreamRequestId: "r1",
  });
  const json = Buffer.from(JSON.stringify({ image: png.toString("base64"), finish_reason: "SUCCESS", seed: 5 }));
  t.deepEqual(convertFromStabilityImage("stability", json, { "content-type": "application/json; type=image/png" }), {
    images: [{ bytes: png, mediaType: "image/png", seed: 5 }],
  });
  const filtered = convertFromStabilityImage("stability", png, { "content-type": "image/png", "finish-reason": "CONTENT_FILTERED" });
  t.deepEqual(filtered.images, []);
  t.truthy(filtered.refusal);
  t.throws(() => convertFromStabilityImage("stability", Buffer.from("not a picture"), { "content-type": "text/plain" }), { message: /not a picture/ });
  t.throws(() => convertFromStabilityImage("stability", Buffer.alloc(0), { "content-type": "image/png" }), { message: /no picture/ });
});

test("stability errors: content_moderation is a refusal; others an envelope naming the field", (t) => {
  const moderation = JSON.stringify({ id: "abc", name: "content_moderation", errors: ["Flagged."] });
  t.deepEqual(stabilityRefusal(httpError(403, moderation)), { refusal: "Flagged.", id: "abc" });
  t.is(stabilityRefusal(httpError(403, JSON.stringify({ id: "abc", name: "forbidden", errors: ["no"] }))), undefined);
  const invalid = fromStabilityHttpError(
    httpError(400, JSON.stringify({ id: "x", name: "bad_request", errors: ["aspect_ratio: must be one of 1:1", "seed: too big"] })),
  );
  t.deepEqual(JSON.parse(invalid.body), {
    error: { message: "aspect_ratio: must be one of 1:1; seed: too big", type: "invalid_request_error", param: "aspect_ratio", code: "bad_request" },
  });
  const language = fromStabilityHttpError(
    httpError(422, JSON.stringify({ id: "x", name: "invalid_language", errors: ["English is the only supported language for this service."] })),
  );
  t.deepEqual(JSON.parse(language.body).error, {
    message: "English is the only supported language for this service.",
    type: "invalid_request_error",
    param: null,
    code: "invalid_language",
  });
  const html = fromStabilityHttpError(httpError(502, "<html>"));
  t.deepEqual(JSON.parse(html.body).error, { message: "Stability answered HTTP 502.", type: "server_error", param: null, code: "http_502" });
  t.is(html.vendorBody, "<html>");
  t.is(html.retryAfterMs, undefined);
});

test("drawInBatches: n split into calls of at most perCall, at most 4 at once, merged in order", async (t) => {
  let running = 0;
  let peak = 0;
  const counts: number[] = [];
  const result = await drawInBatches(10, 1, new AbortController().signal, async ({ count, index }) => {
    running++;
    peak = Math.max(peak, running);
    counts.push(count);
    await new Promise((resolve) => setTimeout(resolve, 20 - index));
    running--;
    return { images: [{ bytes: Buffer.from([index]), mediaType: "image/png" }], usage: { outputTokens: 1 } };
  });
  t.is(peak, 4);
  t.deepEqual(counts, Array(10).fill(1));
  t.deepEqual(
    result.images.map((image) => image.bytes[0]),
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  );
  t.deepEqual(result.usage, { inputTokens: 0, outputTokens: 10 });
  const split: number[] = [];
  await drawInBatches(7, 3, new AbortController().signal, async ({ count }) => {
    split.push(count);
    return { images: [] };
  });
  t.deepEqual(split, [3, 3, 1]);
});

test("drawInBatches: the first failure aborts the calls still running and is what the caller gets", async (t) => {
  const aborted: number[] = [];
  const failure = new Error("boom");
  const error = await t.throwsAsync(
    drawInBatches(
      6,
      1,
      new AbortController().signal,
      ({ index, signal }) =>
        new Promise<ImageResult>((_resolve, reject) => {
          if (index === 1) return setTimeout(() => reject(failure), 10);
          signal.addEventListener("abort", () => {
            aborted.push(index);
            reject(new Error("aborted"));
          });
        }),
    ),
  );
  t.is(error, failure);
  t.deepEqual(aborted.sort(), [0, 2, 3]);
});

test("mergeImageResults: keeps the first refusal and request id next to the pictures drawn", (t) => {
  const picture = { bytes: Buffer.from([1]), mediaType: "image/png" };
  t.deepEqual(
    mergeImageResults([
      { images: [picture], upstreamRequestId: "a", quality: "high" },
      { images: [], refusal: "no", upstreamRequestId: "b" },
    ]),
    { images: [picture], refusal: "no", upstreamRequestId: "a", quality: "high" },
  );
});
