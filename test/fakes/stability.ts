/**
 * Fake Stability AI REST v2beta upstream (reference images.md §2), on 127.0.0.1 port 0.
 *  - POST /v2beta/stable-image/generate/{ultra,core,sd3}, /upscale/{fast,conservative},
 *    /edit/remove-background; always multipart/form-data; everything else 404.
 *  - `accept: image/*` (default) answers the picture's bytes with content-type, `finish-reason`,
 *    `seed` and `x-request-id` headers; `accept: application/json` answers
 *    {image, finish_reason, seed}. Real pictures: generate at the nominal size of the aspect ratio,
 *    fast upscale exactly 4x the input, conservative to about 4 megapixels, remove-background the
 *    input's size with a transparent border.
 *  - Validates like the real API where it matters: Bearer key, required fields, aspect_ratio,
 *    output_format, seed and cfg_scale ranges, style_preset vocabulary, fields an endpoint does
 *    not have (cfg_scale on core / ultra), input sizes for fast upscale, image-to-image on ultra
 *    and sd3 (`image` + `strength`, sd3's `mode`, no aspect_ratio there; the input's shape kept).
 *  - Errors {id, name, errors:[...]}; refusals as 403 content_moderation or a 200 with
 *    finish-reason CONTENT_FILTERED.
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { type FakeImageFormat, imageFile, imageSize, MEDIA_TYPES } from "./image-files.js";
import { field, type ParsedForm, parseMultipart } from "./multipart-form.js";

export interface StabilityBehaviour {
  status?: number; // non-200: answer a Stability error with this status
  errorBody?: unknown; // override the error body (a string is sent as it is)
  retryAfter?: string; // Retry-After on error answers
  firstByteDelayMs?: number; // wait before writing response headers
  dropConnection?: boolean; // destroy the socket without answering
  moderation?: boolean; // 403 content_moderation
  contentFiltered?: boolean; // 200 with finish-reason CONTENT_FILTERED (a blurred picture)
}

export interface RecordedStabilityRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  form: ParsedForm;
}

export interface FakeStability {
  url: string; // the API origin, e.g. http://127.0.0.1:PORT
  requests: RecordedStabilityRequest[];
  set(behaviour: StabilityBehaviour): void;
  enqueue(...behaviours: StabilityBehaviour[]): void;
  reset(): void;
  close(): Promise<void>;
}

export const STABILITY_SIZES: Record<string, [number, number]> = {
  "21:9": [1536, 640],
  "16:9": [1344, 768],
  "3:2": [1216, 832],
  "5:4": [1152, 896],
  "1:1": [1024, 1024],
  "4:5": [896, 1152],
  "2:3": [832, 1216],
  "9:16": [768, 1344],
  "9:21": [640, 1536],
};

const STYLE_PRESETS = [
  "enhance",
  "anime",
  "photographic",
  "digital-art",
  "comic-book",
  "fantasy-art",
  "line-art",
  "analog-film",
  "neon-punk",
  "isometric",
  "low-poly",
  "origami",
  "modeling-compound",
  "cinematic",
  "3d-model",
  "pixel-art",
  "tile-texture",
];
const SD3_MODELS = ["sd3.5-large", "sd3.5-large-turbo", "sd3.5-medium", "sd3.5-flash", "sd3-large", "sd3-large-turbo", "sd3-medium"];

const GENERATE_FIELDS: Record<string, string[]> = {
  ultra: ["prompt", "negative_prompt", "aspect_ratio", "seed", "output_format", "image", "strength", "style_preset"],
  core: ["prompt", "negative_prompt", "aspect_ratio", "seed", "output_format", "style_preset"],
  sd3: ["prompt", "mode", "image", "strength", "aspect_ratio", "model", "seed", "output_format", "style_preset", "negative_prompt", "cfg_scale"],
};

class StabilityError extends Error {
  constructor(
    readonly status: number,
    readonly errorName: string,
    readonly errors: string[],
  ) {
    super(errors.join("; "));
  }
}

const badRequest = (...errors: string[]) => new StabilityError(400, "bad_request", errors);

interface Picture {
  bytes: Buffer;
  format: FakeImageFormat;
  seed: number;
}

export function startFakeStability(initial: StabilityBehaviour = {}): Promise<FakeStability> {
  const requests: RecordedStabilityRequest[] = [];
  const queue: StabilityBehaviour[] = [];
  let persistent: StabilityBehaviour = { ...initial };
  let counter = 0;

  const server = http.createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) sendError(response, new StabilityError(500, "internal_error", [`fake crashed: ${String(error)}`]));
      else response.destroy();
    });
  });

  async function handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    counter += 1;
    response.setHeader("x-request-id", `stab_req_${counter}`);
    const raw = await readBody(request);
    const path = new URL(request.url ?? "/", "http://127.0.0.1").pathname.replace(/\/+$/, "");
    const multipart = (request.headers["content-type"] ?? "").startsWith("multipart/form-data");
    const form: ParsedForm = multipart ? await parseMultipart(request.headers, raw) : { fields: {}, files: [] };
    requests.push({ path, headers: { ...request.headers }, form });
    const behaviour = queue.shift() ?? persistent;
    if (behaviour.firstByteDelayMs) await sleep(behaviour.firstByteDelayMs);
    if (behaviour.dropConnection) {
      request.socket.destroy();
      return;
    }
    try {
      if (!/^Bearer \S+/.test(request.headers.authorization ?? "")) {
        throw new StabilityError(401, "unauthorized", ["authorization: missing or invalid API key"]);
      }
      if (!multipart) throw badRequest("content-type: must be multipart/form-data");
      const accept = request.headers.accept ?? "image/*";
      if (!["image/*", "application/json", "*/*"].includes(accept)) throw badRequest(`accept: must be image/* or application/json; got ${accept}`);
      const picture = draw(request.method ?? "GET", path, form);
      if (behaviour.status !== undefined && behaviour.status !== 200) {
        const headers: Record<string, string> = behaviour.retryAfter === undefined ? {} : { "retry-after": behaviour.retryAfter };
        if (behaviour.errorBody !== undefined) sendJson(response, behaviour.status, behaviour.errorBody, headers);
        else sendError(response, errorForStatus(behaviour.status), headers);
        return;
      }
      if (behaviour.moderation) {
        throw new StabilityError(403, "content_moderation", [
          "Your request was flagged by our content moderation system, as a result your request was denied and you were not charged.",
        ]);
      }
      const finishReason = behaviour.contentFiltered ? "CONTENT_FILTERED" : "SUCCESS";
      if (accept === "application/json") {
        sendJson(
          response,
          200,
          { image: picture.bytes.toString("base64"), finish_reason: finishReason, seed: picture.seed },
          { "content-type": `application/json; type=${MEDIA_TYPES[picture.format]}` },
        );
        return;
      }
      response.writeHead(200, {
        "content-type": MEDIA_TYPES[picture.format],
        "content-length": String(picture.bytes.length),
        "finish-reason": finishReason,
        seed: String(picture.seed),
      });
      response.end(picture.bytes);
    } catch (error) {
      if (!(error instanceof StabilityError)) throw error;
      sendError(response, error);
    }
  }

  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        requests,
        set: (behaviour) => (persistent = { ...behaviour }),
        enqueue: (...behaviours) => queue.push(...behaviours),
        reset: () => {
          requests.length = 0;
          queue.length = 0;
          persistent = {};
        },
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

function draw(method: string, path: string, form: ParsedForm): Picture {
  const generate = /^\/v2beta\/stable-image\/generate\/(ultra|core|sd3)$/.exec(path);
  if (method === "POST" && generate) return generatePicture(generate[1]!, form);
  if (method === "POST" && path === "/v2beta/stable-image/upscale/fast")
    return transformPicture(form, ["image", "output_format"], ["png", "jpeg", "webp"], "fast");
  if (method === "POST" && path === "/v2beta/stable-image/upscale/conservative") {
    return transformPicture(form, ["image", "prompt", "negative_prompt", "seed", "output_format", "creativity"], ["png", "jpeg", "webp"], "conservative");
  }
  if (method === "POST" && path === "/v2beta/stable-image/edit/remove-background")
    return transformPicture(form, ["image", "output_format"], ["png", "webp"], "remove-background");
  throw new StabilityError(404, "not_found", [`${method} ${path}: no such endpoint`]);
}

function generatePicture(endpoint: string, form: ParsedForm): Picture {
  refuseUnknownFields(form, GENERATE_FIELDS[endpoint]!);
  const prompt = field(form, "prompt");
  if (!prompt) throw badRequest("prompt: is required");
  if (prompt.length > 10_000) throw badRequest("prompt: must be at most 10000 characters");
  const negative = field(form, "negative_prompt");
  if (negative !== undefined && negative.length > 10_000) throw badRequest("negative_prompt: must be at most 10000 characters");
  const source = imageToImage(endpoint, form);
  const aspectRatio = field(form, "aspect_ratio") ?? source?.aspectRatio ?? "1:1";
  const size = STABILITY_SIZES[aspectRatio];
  if (!size) throw badRequest(`aspect_ratio: must be one of ${Object.keys(STABILITY_SIZES).join(", ")}`);
  const style = field(form, "style_preset");
  if (style !== undefined && !STYLE_PRESETS.includes(style)) throw badRequest(`style_preset: must be one of ${STYLE_PRESETS.join(", ")}`);
  const model = field(form, "model");
  if (model !== undefined && !SD3_MODELS.includes(model)) throw badRequest(`model: must be one of ${SD3_MODELS.join(", ")}`);
  const cfgScale = field(form, "cfg_scale");
  if (cfgScale !== undefined && !(Number(cfgScale) >= 1 && Number(cfgScale) <= 10)) throw badRequest("cfg_scale: must be a number from 1 to 10");
  const format = outputFormat(form, ["png", "jpeg", "webp"]);
  return { bytes: imageFile(format, size[0], size[1], [90, 120, 200, 255]), format, seed: seedOf(form) };
}

/**
 * Image-to-image (ultra: `image` + `strength`; sd3: also `mode: image-to-image`, and no
 * aspect_ratio): checked like the real API; the picture drawn has the input's nearest ratio.
 */
function imageToImage(endpoint: string, form: ParsedForm): { aspectRatio: string } | undefined {
  const image = form.files.find((file) => file.field === "image");
  const mode = field(form, "mode");
  if (endpoint === "sd3") {
    if (mode !== undefined && mode !== "text-to-image" && mode !== "image-to-image") throw badRequest("mode: must be text-to-image or image-to-image");
    if (mode === "image-to-image" && !image) throw badRequest("image: is required when mode is image-to-image");
    if (image && mode !== "image-to-image") throw badRequest("image: is only accepted when mode is image-to-image");
    if (image && field(form, "aspect_ratio") !== undefined) throw badRequest("aspect_ratio: is only accepted for text-to-image");
  }
  if (!image) {
    if (field(form, "strength") !== undefined) throw badRequest("strength: is only accepted with an image");
    return undefined;
  }
  const strength = Number(field(form, "strength"));
  if (field(form, "strength") === undefined || !(strength >= 0 && strength <= 1)) throw badRequest("strength: is required with an image, a number from 0 to 1");
  const input = imageSize(image.bytes);
  if (!input) throw badRequest("image: could not be decoded as png, jpeg or webp");
  const wanted = Math.log(input.width / input.height);
  const nearest = Object.keys(STABILITY_SIZES).sort((left, right) => Math.abs(ratioLog(left) - wanted) - Math.abs(ratioLog(right) - wanted))[0]!;
  return { aspectRatio: nearest };
}

function ratioLog(ratio: string): number {
  const [width, height] = ratio.split(":").map(Number) as [number, number];
  return Math.log(width / height);
}

function transformPicture(form: ParsedForm, fields: string[], formats: FakeImageFormat[], kind: "fast" | "conservative" | "remove-background"): Picture {
  refuseUnknownFields(form, fields);
  const image = form.files.find((file) => file.field === "image");
  if (!image) throw badRequest("image: is required");
  const input = imageSize(image.bytes);
  if (!input) throw badRequest("image: could not be decoded as png, jpeg or webp");
  if (kind === "conservative" && !field(form, "prompt")) throw badRequest("prompt: is required");
  const format = outputFormat(form, formats);
  const seed = seedOf(form);
  if (kind === "fast") {
    const pixels = input.width * input.height;
    if (input.width < 32 || input.height < 32 || input.width > 1536 || input.height > 1536 || pixels < 1024 || pixels > 1_048_576) {
      throw badRequest("image: must be between 32 and 1536 pixels on each side, 1,024 to 1,048,576 pixels in total");
    }
    return { bytes: imageFile(format, input.width * 4, input.height * 4), format, seed };
  }
  if (kind === "conservative") {
    const factor = Math.sqrt(4_194_304 / (input.width * input.height));
    return { bytes: imageFile(format, Math.round(input.width * factor), Math.round(input.height * factor)), format, seed };
  }
  return { bytes: imageFile(format, input.width, input.height, [40, 160, 90, 255], { cutout: true }), format, seed };
}

function refuseUnknownFields(form: ParsedForm, allowed: string[]): void {
  const names = [...Object.keys(form.fields), ...form.files.map((file) => file.field)];
  const unknown = names.find((name) => !allowed.includes(name));
  if (unknown) throw badRequest(`${unknown}: is not a field of this endpoint`);
}

function outputFormat(form: ParsedForm, formats: FakeImageFormat[]): FakeImageFormat {
  const format = field(form, "output_format") ?? "png";
  if (!(formats as string[]).includes(format)) throw badRequest(`output_format: must be one of ${formats.join(", ")}`);
  return format as FakeImageFormat;
}

function seedOf(form: ParsedForm): number {
  const text = field(form, "seed");
  if (text === undefined || text === "0") return randomBytes(4).readUInt32BE() % 4_294_967_295;
  const seed = Number(text);
  if (!Number.isInteger(seed) || seed < 0 || seed > 4_294_967_294) throw badRequest("seed: must be an integer from 0 to 4294967294");
  return seed;
}

function errorForStatus(status: number): StabilityError {
  if (status === 401) return new StabilityError(401, "unauthorized", ["authorization: missing or invalid API key"]);
  if (status === 413) return new StabilityError(413, "payload_too_large", ["body: payloads cannot be larger than 10MiB in size"]);
  if (status === 422) return new StabilityError(422, "invalid_language", ["English is the only supported language for this service."]);
  if (status === 429) return new StabilityError(429, "rate_limit_exceeded", ["You have exceeded the rate limit of 150 requests within a 10 second period."]);
  if (status >= 500) return new StabilityError(status, "internal_error", ["An unexpected server error has occurred, please try again later."]);
  return new StabilityError(status, "bad_request", [`request failed with status ${status} (fake upstream)`]);
}

function sendError(response: http.ServerResponse, error: StabilityError, headers: Record<string, string> = {}): void {
  sendJson(response, error.status, { id: randomBytes(16).toString("hex"), name: error.errorName, errors: error.errors }, headers);
}

function sendJson(response: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  response.writeHead(status, { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)), ...headers });
  response.end(text);
}

function readBody(request: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks)));
    request.on("error", reject);
  });
}

function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}
