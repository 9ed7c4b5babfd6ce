/**
 * Fake OpenAI Images upstream (reference images.md §1), on 127.0.0.1 port 0.
 *  - POST /v1/images/generations (JSON) and POST /v1/images/edits (multipart: `image` or repeated
 *    `image[]` parts, scalars as strings); everything else 404.
 *  - Answers ImagesResponse with real pictures of the asked size and format: GPT image models
 *    always base64 (plus output_format, size, quality, usage); DALL·E a URL unless
 *    response_format is b64_json, and dall-e-3 a revised_prompt.
 *  - Validates like the real API where it matters: Bearer key, prompt, n (dall-e-3 only 1),
 *    sizes and qualities per model, GPT-only fields refused for DALL·E and response_format refused
 *    for GPT image, transparency only with png or webp, output_compression only for jpeg / webp.
 *  - Errors {error:{message,type,param,code}}; moderation blocks as observed (moderation_blocked
 *    for GPT image, content_policy_violation for DALL·E); `x-request-id` on every response.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { type FakeImageFormat, imageFile, type Rgba } from "./image-files.js";
import { type ParsedForm, parseMultipart } from "./multipart-form.js";
import { type AnswerPacing, PAD_MARKER, sendPaced } from "./paced-answers.js";

export interface OpenAIImagesBehaviour {
  status?: number; // non-200: answer an OpenAI error with this status
  errorBody?: unknown; // override the error body (a string is sent as it is)
  retryAfter?: string; // Retry-After on error answers
  firstByteDelayMs?: number; // wait before writing response headers
  dropConnection?: boolean; // destroy the socket without answering
  refusal?: boolean; // answer the model's moderation block (400)
  revisedPrompt?: string; // dall-e-3's rewritten prompt (default: derived from the prompt)
  quality?: string; // the quality reported for `auto` (default "medium"; for DALL·E with reportQuality, "standard")
  reportQuality?: boolean; // DALL·E answers carry `quality` too, as an OpenAI-compatible server that says what it drew does
  pacing?: AnswerPacing; // the 200 written paced (paced-answers.ts), padded in the first picture's b64_json
}

export interface RecordedImagesRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** Generations: the parsed JSON body. */
  json?: any;
  /** Edits: the parsed form. */
  form?: ParsedForm;
}

export interface FakeOpenAIImages {
  url: string; // base URL including /v1
  requests: RecordedImagesRequest[];
  set(behaviour: OpenAIImagesBehaviour): void;
  enqueue(...behaviours: OpenAIImagesBehaviour[]): void;
  reset(): void;
  close(): Promise<void>;
}

const GPT_SIZES = ["1024x1024", "1536x1024", "1024x1536", "auto"];
const EDIT_SIZES = ["256x256", "512x512", "1024x1024", "1536x1024", "1024x1536", "auto"];
const DALL_E_3_SIZES = ["1024x1024", "1792x1024", "1024x1792"];
const DALL_E_2_SIZES = ["256x256", "512x512", "1024x1024"];
const GPT_ONLY = ["background", "output_format", "output_compression", "moderation", "stream", "partial_images", "input_fidelity"];

class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string,
    readonly code: string | null,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

const invalid = (message: string, param: string | null = null, code: string | null = "invalid_value") =>
  new ApiError(400, message, "invalid_request_error", code, param);

export function startFakeOpenAIImages(initial: OpenAIImagesBehaviour = {}): Promise<FakeOpenAIImages> {
  const requests: RecordedImagesRequest[] = [];
  const queue: OpenAIImagesBehaviour[] = [];
  let persistent: OpenAIImagesBehaviour = { ...initial };
  let counter = 0;

  const server = http.createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent)
        sendJson(response, 500, { error: { message: `fake crashed: ${String(error)}`, type: "server_error", param: null, code: "server_error" } });
      else response.destroy();
    });
  });

  async function handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    counter += 1;
    response.setHeader("x-request-id", `req_img_${counter}`);
    const raw = await readBody(request);
    const path = new URL(request.url ?? "/", "http://127.0.0.1").pathname.replace(/\/+$/, "");
    const recorded: RecordedImagesRequest = { method: request.method ?? "GET", path, headers: { ...request.headers } };
    requests.push(recorded);
    const behaviour = queue.shift() ?? persistent;
    if (behaviour.firstByteDelayMs) await sleep(behaviour.firstByteDelayMs);
    if (behaviour.dropConnection) {
      request.socket.destroy();
      return;
    }
    try {
      if (request.method !== "POST" || (path !== "/v1/images/generations" && path !== "/v1/images/edits")) {
        throw new ApiError(404, `Invalid URL (${request.method} ${path})`, "invalid_request_error", null);
      }
      if (!/^Bearer \S+/.test(request.headers.authorization ?? "")) {
        throw new ApiError(401, "You didn't provide an API key.", "invalid_request_error", "invalid_api_key");
      }
      const fields = path.endsWith("/edits") ? await editFields(request, raw, recorded) : generationFields(raw, recorded);
      if (behaviour.status !== undefined && behaviour.status !== 200) {
        const headers: Record<string, string> = behaviour.retryAfter === undefined ? {} : { "retry-after": behaviour.retryAfter };
        const body = behaviour.errorBody ?? errorForStatus(behaviour.status);
        sendJson(response, behaviour.status, body, headers);
        return;
      }
      const body = answer(fields, path.endsWith("/edits"), behaviour);
      if (!behaviour.pacing) return sendJson(response, 200, body);
      if (behaviour.pacing.padTo !== undefined) (body.data as Array<Record<string, unknown>>)[0]!.b64_json = PAD_MARKER;
      await sendPaced(response, "application/json", JSON.stringify(body), behaviour.pacing, "A");
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      sendJson(response, error.status, { error: { message: error.message, type: error.type, param: error.param, code: error.code } });
    }
  }

  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}/v1`,
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

/** The request's parameters, strings as the edits form sends them or values as JSON has them. */
type Fields = Record<string, unknown>;

function generationFields(raw: Buffer, recorded: RecordedImagesRequest): Fields {
  let json: unknown;
  try {
    json = JSON.parse(raw.toString("utf8"));
  } catch {
    throw invalid("We could not parse the JSON body of your request.", null, null);
  }
  recorded.json = json;
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw invalid("The body must be a JSON object.", null, null);
  return json as Fields;
}

async function editFields(request: http.IncomingMessage, raw: Buffer, recorded: RecordedImagesRequest): Promise<Fields> {
  if (!(request.headers["content-type"] ?? "").startsWith("multipart/form-data")) {
    throw invalid("Invalid Content-Type header, expected multipart/form-data.", null, null);
  }
  const form = await parseMultipart(request.headers, raw);
  recorded.form = form;
  const fields: Fields = {};
  for (const [name, values] of Object.entries(form.fields)) fields[name] = values[0];
  const images = form.files.filter((file) => file.field === "image" || file.field === "image[]");
  if (images.length === 0) throw invalid("Missing required parameter: 'image'.", "image", "missing_required_parameter");
  for (const image of images) {
    if (!["image/png", "image/jpeg", "image/webp"].includes(image.contentType)) {
      throw invalid(
        `Invalid file '${image.filename}': unsupported mimetype ('${image.contentType}'). Supported file formats are 'image/jpeg', 'image/png', and 'image/webp'.`,
        "image",
        "invalid_image_file",
      );
    }
  }
  fields.__images = images.length;
  return fields;
}

function answer(fields: Fields, isEdit: boolean, behaviour: OpenAIImagesBehaviour): Record<string, unknown> {
  const model = typeof fields.model === "string" ? fields.model : isEdit ? "gpt-image-1.5" : "dall-e-2";
  const family = model.startsWith("dall-e-3") ? "dall-e-3" : model.startsWith("dall-e-2") ? "dall-e-2" : "gpt-image";
  const prompt = fields.prompt;
  if (typeof prompt !== "string" || prompt.length === 0) throw invalid("Missing required parameter: 'prompt'.", "prompt", "missing_required_parameter");
  const n = fields.n === undefined ? 1 : Number(fields.n);
  if (!Number.isInteger(n) || n < 1 || n > 10) throw invalid(`Invalid 'n': integer below minimum value or above maximum value.`, "n", "integer_out_of_range");
  if (family === "dall-e-3" && n !== 1) throw invalid("You must provide n=1 for this model.", "n");
  if (isEdit && family === "dall-e-3") throw invalid("Invalid value for 'model': 'dall-e-3'. Image edits support dall-e-2 and GPT image models.", "model");
  if (isEdit && family === "dall-e-2" && Number(fields.__images) > 1) throw invalid("dall-e-2 edits one image.", "image");
  if (family !== "gpt-image") {
    const gptOnly = GPT_ONLY.find((name) => fields[name] !== undefined);
    if (gptOnly) throw invalid(`Unknown parameter: '${gptOnly}'.`, gptOnly, "unknown_parameter");
  } else if (fields.response_format !== undefined) {
    throw invalid("Unknown parameter: 'response_format'.", "response_format", "unknown_parameter");
  }
  const sizes = family === "dall-e-3" ? DALL_E_3_SIZES : family === "dall-e-2" ? DALL_E_2_SIZES : isEdit ? EDIT_SIZES : GPT_SIZES;
  const size = typeof fields.size === "string" ? fields.size : family === "gpt-image" ? "auto" : "1024x1024";
  if (!sizes.includes(size)) throw invalid(`Invalid value: '${size}'. Supported values are: ${sizes.map((s) => `'${s}'`).join(", ")}.`, "size");
  const qualities = family === "gpt-image" ? ["low", "medium", "high", "auto"] : family === "dall-e-3" ? ["standard", "hd"] : ["standard"];
  if (fields.quality !== undefined && !qualities.includes(String(fields.quality))) throw invalid(`Invalid value: '${String(fields.quality)}'.`, "quality");
  const format = (fields.output_format ?? "png") as string;
  if (!["png", "jpeg", "webp"].includes(format)) throw invalid(`Invalid value: '${format}'.`, "output_format");
  const background = (fields.background ?? "auto") as string;
  if (background === "transparent" && format === "jpeg") throw invalid("Transparent background requires output_format png or webp.", "background");
  if (fields.output_compression !== undefined) {
    const compression = Number(fields.output_compression);
    if (!Number.isInteger(compression) || compression < 0 || compression > 100) throw invalid("Invalid 'output_compression'.", "output_compression");
    if (format === "png") throw invalid("output_compression is only supported for jpeg and webp.", "output_compression");
  }
  if (behaviour.refusal) {
    throw family === "gpt-image"
      ? new ApiError(
          400,
          "Your request was rejected by the safety system. If you believe this is an error, contact us at help.openai.com and include the request ID req_fake. safety_violations=[violence].",
          "image_generation_user_error",
          "moderation_blocked",
        )
      : new ApiError(
          400,
          "Your request was rejected as a result of our safety system. Your prompt may contain text that is not allowed by our safety system.",
          "invalid_request_error",
          "content_policy_violation",
        );
  }
  const [width, height] = (size === "auto" ? "1024x1024" : size).split("x").map(Number) as [number, number];
  const colour: Rgba = background === "transparent" ? [30, 60, 90, 0] : [30, 60, 90, 255];
  const base64 =
    family !== "gpt-image" && fields.response_format !== "b64_json"
      ? undefined
      : imageFile(family === "gpt-image" ? (format as FakeImageFormat) : "png", width, height, colour).toString("base64");
  const data = Array.from({ length: n }, (_, index) => {
    const item: Record<string, unknown> =
      base64 === undefined ? { url: `https://oaidalleapiprodscus.fake.test/img-${index}.png?se=fake` } : { b64_json: base64 };
    if (family === "dall-e-3") item.revised_prompt = behaviour.revisedPrompt ?? `A detailed picture of ${prompt}`;
    return item;
  });
  const body: Record<string, unknown> = { created: Math.floor(Date.now() / 1000), data };
  if (family !== "gpt-image" && behaviour.reportQuality) body.quality = fields.quality ?? behaviour.quality ?? "standard";
  if (family === "gpt-image") {
    const quality = fields.quality === undefined || fields.quality === "auto" ? (behaviour.quality ?? "medium") : fields.quality;
    Object.assign(body, {
      background: background === "transparent" ? "transparent" : "opaque",
      output_format: format,
      size: `${width}x${height}`,
      quality,
      usage: { input_tokens: 12, output_tokens: 1056 * n, total_tokens: 12 + 1056 * n, input_tokens_details: { text_tokens: 12, image_tokens: 0 } },
    });
  }
  return body;
}

function errorForStatus(status: number): unknown {
  if (status === 401)
    return { error: { message: "Incorrect API key provided: sk-****fake.", type: "invalid_request_error", param: null, code: "invalid_api_key" } };
  if (status === 429)
    return { error: { message: "Rate limit reached for images per minute (fake upstream).", type: "requests", param: null, code: "rate_limit_exceeded" } };
  if (status >= 500) return { error: { message: "The server had an error while processing your request.", type: "server_error", param: null, code: null } };
  return { error: { message: `Request failed with status ${status} (fake upstream).`, type: "invalid_request_error", param: null, code: null } };
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
