// The client's API types are the server's: request bodies are the zod schemas' input, answers the
// server's own answer types (src/client/*-types.ts). Checked twice: at compile time (the
// assignments below compile only while they agree), and at run time against a real gw, whose
// answers must carry every field the types require and no field they do not name. The client
// imports the gateway for types only (docs/decisions.md §1), so it never loads it at run time.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import test, { type ExecutionContext } from "ava";
import sharp from "sharp";
import type { z } from "zod";
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, ChatMessage, Modality, ModelEntry, Usage } from "../src/client/api-types.js";
import type { SpeechRequest, TranscriptionJsonRequest, TranscriptionParams } from "../src/client/audio-types.js";
import { GwApiError } from "../src/client/gw-api-error.js";
import { GwClient } from "../src/client/gw-client.js";
import type {
  ImageCatalogBody,
  ImageCatalogModel,
  ImageEditRequest,
  ImageGenerationRequest,
  ImageResultBody,
  ImageResultItem,
  ImageRole,
  ProjectBody,
} from "../src/client/image-types.js";
import type { SearchRequest } from "../src/client/search-types.js";
import type { FileListBody, FileUrlBody, PresignedUploadBody, StorageQuotaBody, StoredFile, UploadSource } from "../src/client/storage-types.js";
import { type ImageUpscaleRequest, TransformClient } from "../src/client/transform-client.js";
import type { VideoGenerationRequest } from "../src/client/video-types.js";
import { type DescribeImageBody, type DescribeImageRequest, VisionClient } from "../src/client/vision-client.js";
import type { speechRequestSchema } from "../src/gateway/audio/speech-request.js";
import type { transcriptionFieldsSchema, transcriptionJsonSchema } from "../src/gateway/audio/transcription-request.js";
import type { chatRequestSchema } from "../src/gateway/chat/chat-request.js";
import type { imageGenerationSchema } from "../src/gateway/images/image-request.js";
import type { ImageResultBody as ServerImageResultBody } from "../src/gateway/images/image-results.js";
import type { searchRequestSchema } from "../src/gateway/search/search-service.js";
import type { StoredFile as ServerStoredFile } from "../src/gateway/storage/stored-file.js";
import type { videoGenerationSchema } from "../src/gateway/video/video-request.js";
import { fakeAudio } from "./fakes/audio-files.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { type FakeOpenAIAudio, startFakeOpenAIAudio } from "./fakes/openai-audio.js";
import { addKey, makeHome, projectRoot, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

// ---- compile time ------------------------------------------------------------------------

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type RequiredKeys<T> = { [K in keyof T]-?: object extends Pick<T, K> ? never : K }[keyof T];
/** A list of T's keys that compiles only when it names every one of them. */
type AllKeys<T, List extends readonly PropertyKey[]> = [Exclude<keyof T, List[number]>] extends [never] ? List : { missing: Exclude<keyof T, List[number]> };
const keysOf =
  <T>() =>
  <const List extends ReadonlyArray<keyof T>>(list: List & AllKeys<T, List>): readonly (keyof T & string)[] =>
    list as readonly (keyof T & string)[];

// Derived, not copied: the client's names are the server's types.
export const derived: Array<true> = [
  true satisfies Equal<ChatCompletionRequest, z.input<typeof chatRequestSchema>>,
  true satisfies Equal<ImageGenerationRequest, z.input<typeof imageGenerationSchema>>,
  true satisfies Equal<SearchRequest, z.input<typeof searchRequestSchema>>,
  true satisfies Equal<VideoGenerationRequest, z.input<typeof videoGenerationSchema>>,
  // The audio schemas take any value for speed and temperature (to refuse a non-number naming the
  // range, or to read a multipart field's text); the client sends a number there, the rest as is.
  true satisfies Equal<Omit<SpeechRequest, "speed">, Omit<z.input<typeof speechRequestSchema>, "speed">>,
  true satisfies Equal<SpeechRequest["speed"], number | undefined>,
  true satisfies Equal<Omit<TranscriptionJsonRequest, "temperature">, Omit<z.input<typeof transcriptionJsonSchema>, "temperature">>,
  true satisfies Equal<Omit<TranscriptionParams, "temperature">, Omit<z.input<typeof transcriptionFieldsSchema>, "temperature">>,
  true satisfies Equal<TranscriptionParams["temperature"], number | undefined>,
  true satisfies Equal<ImageResultBody, ServerImageResultBody>,
  true satisfies Equal<StoredFile, ServerStoredFile>,
  true satisfies Equal<ImageRole, "edit" | "subject" | "reference">,
  true satisfies Equal<Modality, "text" | "image" | "file" | "audio" | "video">,
  // The server always sends timing; the old hand copy had it optional.
  true satisfies Equal<RequiredKeys<ImageResultBody>, "id" | "created" | "model" | "data" | "timing">,
];

// What a client may send is what the server's schema takes.
export const accepted: Array<ChatMessage | ImageGenerationRequest | ImageEditRequest | ImageUpscaleRequest | DescribeImageRequest> = [
  { role: "developer", content: "be brief" },
  { role: "assistant", content: null, tool_calls: [{ id: "call_1" }] },
  { role: "tool", content: "42", tool_call_id: "call_1" },
  { prompt: "a fox", aspect_ratio: "16:9", output_format: "webp", response_format: "b64_json" },
  { prompt: "at night", images: ["https://example.com/a.png", { asset_id: "file_1", role: "subject" }] },
  { image: "data:image/png;base64,AAAA", scale: 2, output_format: "png" },
  { mediaUrl: "https://example.com/a.png", prompt: null },
];
// @ts-expect-error the server refuses an aspect ratio it does not list
export const badRatio: ImageGenerationRequest = { prompt: "x", aspect_ratio: "7:1" };
export const acceptedAudio: Array<SpeechRequest | TranscriptionJsonRequest | TranscriptionParams> = [
  { input: "hello", voice: "alloy", response_format: "wav", speed: 1.5, instructions: "calmly", stream_format: "audio", project_id: "proj_1" },
  { mediaUrl: "https://example.com/a.mp3", prompt: "Names: Ada", temperature: 0.2, timestamp_granularities: ["segment", "word"] },
  { language: "pt-BR", response_format: "verbose_json", "timestamp_granularities[]": "word" },
];
export const acceptedSearchAndVideo: Array<SearchRequest | VideoGenerationRequest> = [
  { query: "red foxes" },
  { query: "red foxes", max_results: 5 },
  { prompt: "a slow pan", image_url: "https://example.com/a.png", duration_seconds: 5, resolution: "720p", ratio: "16:9", project_id: "proj_1" },
];
// @ts-expect-error speech takes mp3, wav, opus, flac or pcm
export const badSpeechFormat: SpeechRequest = { input: "x", format: "ogg" };
// @ts-expect-error timestamps come per segment or per word
export const badGranularity: TranscriptionParams = { timestamp_granularities: ["sentence"] };
// @ts-expect-error the server's schema is strict: no field it does not name
export const badSearchField: SearchRequest = { query: "x", safe_search: true };
// @ts-expect-error a clip's length is a number of seconds
export const badDuration: VideoGenerationRequest = { prompt: "x", duration_seconds: "5" };
// @ts-expect-error a tool message needs its tool_call_id
export const badTool: ChatMessage = { role: "tool", content: "42" };
// @ts-expect-error upscaled pictures are png or webp
export const badFormat: ImageUpscaleRequest = { output_format: "jpeg" };
// @ts-expect-error a picture's role is edit, subject or reference
export const badRole: ImageEditRequest = { prompt: "x", images: [{ url: "https://example.com/a.png", role: "style" }] };

const STORED_FILE = keysOf<StoredFile>()(["id", "filename", "contentType", "sizeBytes", "createdAt"]);
const PRESIGNED = keysOf<PresignedUploadBody["data"]>()(["id", "filename", "contentType", "sizeBytes", "createdAt", "uploadUrl", "expiresIn"]);
const DOWNLOAD_LINK = keysOf<FileUrlBody["data"]>()(["url", "filename", "contentType", "expiresIn"]);
const QUOTA = keysOf<StorageQuotaBody["data"]>()(["usedBytes", "limitBytes", "usedFormatted", "limitFormatted"]);
const FILE_LIST = keysOf<FileListBody>()(["data", "pagination"]);
const MODEL_ENTRY = keysOf<ModelEntry>()(["id", "name", "architecture", "context_length", "created", "pricing"]);
const PROJECT = keysOf<ProjectBody>()(["project_id", "name", "isDefault", "createdAt"]);
const DESCRIBED = keysOf<DescribeImageBody>()(["model", "text"]);
const IMAGE_RESULT = keysOf<ImageResultBody>()(["id", "created", "model", "data", "refusal", "enhanced_prompt", "timing"]);
const IMAGE_ITEM = keysOf<ImageResultItem>()(["b64_json", "media_type", "revised_prompt", "asset_id"]);
const CATALOG = keysOf<ImageCatalogBody>()(["models", "planLimits"]);
const CATALOG_MODEL = keysOf<ImageCatalogModel>()(["id", "name", "description", "operations", "freeTier", "constraints", "pricing"]);
const MODALITIES = keysOf<Record<Modality, true>>()(["text", "image", "file", "audio", "video"]);
const USAGE_REQUIRED: ReadonlyArray<RequiredKeys<Usage>> = ["prompt_tokens", "completion_tokens", "total_tokens"];

// ---- run time ----------------------------------------------------------------------------

/** The answer names no field the type leaves out, and every field the type requires. */
function sameFields<T extends object>(
  t: ExecutionContext,
  what: string,
  value: T,
  keys: readonly (keyof T & string)[],
  optional: readonly string[] = [],
): void {
  const sent = Object.keys(value);
  t.deepEqual(
    sent.filter((key) => !keys.includes(key as keyof T & string)),
    [],
    `${what}: fields the type does not name`,
  );
  t.deepEqual(
    keys.filter((key) => !optional.includes(key) && !sent.includes(key)),
    [],
    `${what}: fields the type requires that were not sent`,
  );
}

let openai: FakeOpenAI;
let audio: FakeOpenAIAudio;
let gateway: TestGateway;
let client: GwClient;

test.before(async () => {
  openai = await startFakeOpenAI();
  audio = await startFakeOpenAIAudio();
  const home = await makeHome((config) => {
    config.providers = {
      oai: { type: "openai", baseUrl: openai.url, apiKey: "sk-upstream", upstream: { retries: 0 } },
      openai: { type: "openai", baseUrl: audio.url, apiKey: "sk-upstream-audio", upstream: { retries: 0 } },
      local: { type: "local" },
    };
    config.routes = [{ prefix: "oai/", provider: "oai", priority: 10 }];
    config.models = [{ id: "oai/gpt-4o-mini", name: "GPT-4o mini", context_length: 128000, created: 1721172741, input_modalities: ["text", "image"] }];
    config.tools.describe = { default: "oai/gpt-4o-mini", allow: [] };
    config.tools.upscale = { default: "local/lanczos", allow: [] };
    config.tools.transcription = { default: "openai/whisper-1", allow: [] };
  });
  const key = await addKey(home, "typist", "pro");
  gateway = await startTestGateway(home);
  client = new GwClient({ baseUrl: gateway.url, apiKey: key });
});

test.after.always(async () => {
  await gateway?.shutdown();
  await openai?.close();
  await audio?.close();
});

test("src/client imports the gateway for types only, so the client never loads it", (t) => {
  const directory = path.join(projectRoot, "src/client");
  const imports = readdirSync(directory)
    .filter((file) => file.endsWith(".ts"))
    .flatMap((file) =>
      [...readFileSync(path.join(directory, file), "utf8").matchAll(/^import\s[^;]*?from\s+"([^"]+)";/gms)].map((match) => ({
        file,
        statement: match[0],
        from: match[1]!,
      })),
    );
  const fromGateway = imports.filter((entry) => entry.from.includes("/gateway/"));
  t.true(fromGateway.length > 0);
  t.deepEqual(
    fromGateway.filter((entry) => !entry.statement.startsWith("import type ")).map((entry) => `${entry.file}: ${entry.statement}`),
    [],
  );
});

test("models and chat: the answers have the fields the client's types name", async (t) => {
  const models = await client.listModels();
  t.is(models.object, "list");
  for (const entry of models.data) {
    sameFields(t, "model entry", entry, MODEL_ENTRY);
    t.deepEqual(
      entry.architecture.input_modalities.filter((modality) => !(MODALITIES as readonly string[]).includes(modality)),
      [],
    );
  }
  t.deepEqual(models.data[0]?.architecture.input_modalities, ["text", "image"]);

  const request: ChatCompletionRequest = { model: "oai/gpt-4o-mini", messages: [{ role: "user", content: "hello" }], max_tokens: 50 };
  const completion: ChatCompletion = await client.chatCompletion(request);
  t.is(completion.object, "chat.completion");
  t.is(typeof completion.choices[0]?.message.content, "string");
  t.deepEqual(
    USAGE_REQUIRED.filter((key) => typeof completion.usage?.[key] !== "number"),
    [],
  );

  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of client.chatCompletionStream(request)) chunks.push(chunk);
  t.true(chunks.length > 1);
  for (const chunk of chunks) t.is(chunk.object, "chat.completion.chunk");
  t.is(typeof chunks.at(-1)?.usage?.total_tokens, "number");
});

test("storage and projects: each answer's fields are exactly the server's types'", async (t) => {
  const bytes = new TextEncoder().encode("typed bytes");
  const source: UploadSource = {
    filename: "typed.txt",
    contentType: "text/plain",
    sizeBytes: bytes.length,
    open: async function* () {
      yield bytes;
    },
  };
  const stored = await client.uploadFile(source);
  sameFields(t, "stored file", stored.data, STORED_FILE);
  const list = await client.listFiles({ limit: 10 });
  sameFields(t, "file list", list, FILE_LIST);
  sameFields(t, "listed file", list.data[0]!, STORED_FILE);
  t.deepEqual(list.pagination, { page: 1, limit: 10, total: 1 });
  sameFields(t, "file url", (await client.fileUrl(stored.data.id)).data, DOWNLOAD_LINK);
  sameFields(t, "quota", (await client.storageQuota()).data, QUOTA);
  const presigned = await client.presignUpload({ filename: "later.bin", contentType: "application/octet-stream", sizeBytes: 3 });
  sameFields(t, "presigned upload", presigned.data, PRESIGNED);
  t.is((await client.deleteFile(stored.data.id)).message, "File deleted.");

  const project = await client.createProject("Typed");
  sameFields(t, "project", project, PROJECT);
  const projects = await client.listProjects();
  t.deepEqual(
    projects.data.map((entry) => entry.isDefault),
    [true, false],
  );
  for (const entry of projects.data) sameFields(t, "listed project", entry, PROJECT);
});

test("images and vision: catalog, image result and description", async (t) => {
  const catalog = await client.imageCatalog();
  sameFields(t, "image catalog", catalog, CATALOG);
  t.true(catalog.models.length > 0);
  for (const model of catalog.models) sameFields(t, `catalog model ${model.id}`, model, CATALOG_MODEL, ["description"]);

  const png = await sharp({ create: { width: 16, height: 12, channels: 3, background: "#3366cc" } })
    .png()
    .toBuffer();
  const picture = `data:image/png;base64,${png.toString("base64")}`;
  const upscaled = await new TransformClient(client.transport).upscaleImage({ image: picture, scale: 2, output_format: "png" });
  sameFields(t, "image result", upscaled, IMAGE_RESULT, ["refusal", "enhanced_prompt"]);
  t.is(typeof upscaled.timing.total_ms, "number");
  for (const item of upscaled.data) sameFields(t, "image item", item, IMAGE_ITEM, ["revised_prompt"]);
  t.is(upscaled.data[0]?.media_type, "image/png");

  const described = await new VisionClient(client.transport).describeImage({ mediaBase64: picture, prompt: "what colour?" });
  sameFields(t, "description", described, DESCRIBED);
  t.is(described.model, "oai/gpt-4o-mini");
});

test("audio: the transcription fields the client's types name reach the server, as JSON and as multipart", async (t) => {
  const wav = await fakeAudio({ codec: "wav", durationSeconds: 1 });
  const sources = [{ mediaBase64: wav.toString("base64") }, { bytes: new Uint8Array(wav), filename: "clip.wav", contentType: "audio/wav" }];
  for (const source of sources) {
    const form = "bytes" in source ? "multipart" : "JSON";
    const params: TranscriptionParams = { prompt: "Names: Ada", temperature: 0.2, timestamp_granularities: ["segment"], response_format: "verbose_json" };
    const result = await client.audio.transcribe(source, params);
    t.is(typeof result.json?.text, "string", form);
    // The server checks what it is sent: a temperature it refuses comes back naming it.
    const refused = await t.throwsAsync(client.audio.transcribe(source, { temperature: 2 }), { instanceOf: GwApiError }, form);
    t.is(refused?.status, 400, form);
    t.regex(refused?.message ?? "", /temperature/, form);
  }
});
