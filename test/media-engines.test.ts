// The media engines and media types at the edge of the gateway:
// - a picture input of a type gw does not take (SVG, TIFF, a PDF ...) is 415 unsupported_media_type
//   naming the type and what is taken, on every picture input (edits, describe, upscale, a video's
//   reference photo); bytes that are no recognisable file stay 400 invalid_image;
// - ffprobe that is slow to answer its version check is waited for (once), and one that does not
//   answer at all is "busy" (503 engine_busy), asked again next time, never "not installed".
// Fake engines are shell scripts in front of the real ffmpeg/ffprobe, found through
// GW_FFMPEG_PATH / GW_FFPROBE_PATH / PATH as engines.ts resolves them.
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import test from "ava";
import sharp from "sharp";
import { audioEngineFailure } from "../src/gateway/audio/audio-engine-errors.js";
import { AudioEngineError, locateEngine } from "../src/media/audio-process.js";
import { lookupFfprobe } from "../src/media/engines.js";
import { fakeAudio } from "./fakes/audio-files.js";
import { startFakeOpenAIAudio } from "./fakes/openai-audio.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { tempDir } from "./helpers/temp-dirs.js";

const which = (name: string) => execFileSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).trim();
const REAL_FFPROBE = which("ffprobe");
const REAL_FFMPEG = which("ffmpeg");
const SLEEP = which("sleep");

/**
 * A folder with `ffmpeg` and `ffprobe` scripts that run the real ones; ffprobe's `-version` first
 * notes the call in `version-calls`, then waits as `versionWait` says (shell code).
 */
function fakeEngines(versionWait: (dir: string) => string): string {
  const dir = tempDir("gw-fake-engines-");
  writeFileSync(path.join(dir, "ffmpeg"), `#!/bin/sh\nexec "${REAL_FFMPEG}" "$@"\n`);
  writeFileSync(
    path.join(dir, "ffprobe"),
    `#!/bin/sh\nif [ "$1" = "-version" ]; then\n  echo called >> "${dir}/version-calls"\n  ${versionWait(dir)}\nfi\nexec "${REAL_FFPROBE}" "$@"\n`,
  );
  chmodSync(path.join(dir, "ffmpeg"), 0o755);
  chmodSync(path.join(dir, "ffprobe"), 0o755);
  return dir;
}

/** Point every way engines.ts looks (GW_FFPROBE_PATH, beside GW_FFMPEG_PATH, PATH) at `dir`; returns the undo. */
function engineEnvironment(dir: string): () => void {
  const saved = { PATH: process.env.PATH, GW_FFMPEG_PATH: process.env.GW_FFMPEG_PATH, GW_FFPROBE_PATH: process.env.GW_FFPROBE_PATH };
  process.env.PATH = dir;
  process.env.GW_FFMPEG_PATH = path.join(dir, "ffmpeg");
  process.env.GW_FFPROBE_PATH = path.join(dir, "ffprobe");
  return () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}

// Serial tests run before the concurrent ones below, so the environment is put back before those start.
test.serial("an ffprobe that takes longer than the old 5-s version check is waited for: the transcription succeeds", async (t) => {
  // 6 s: longer than the version check used to wait. Nothing here bounds how long it may take.
  const dir = fakeEngines(() => `"${SLEEP}" 6`);
  const openai = await startFakeOpenAIAudio({ apiKey: "sk-audio-engines", segments: [{ start: 0, end: 1, text: "Slow but there." }] });
  const home = await makeHome((config) => {
    config.providers = { openai: { type: "openai", baseUrl: openai.url, apiKey: "sk-audio-engines" } };
    config.tools.transcription = { default: "openai/whisper-1", allow: [] };
  });
  const gateway = await startTestGateway(home);
  const key = await addKey(home, "listener", "pro");
  const restore = engineEnvironment(dir);
  try {
    const form = new FormData();
    form.append("file", new Blob([new Uint8Array(await fakeAudio({ codec: "wav", durationSeconds: 1, sampleRate: 16_000 }))], { type: "audio/wav" }), "a.wav");
    form.append("model", "openai/whisper-1");
    const response = await fetch(`${gateway.url}/v1/audio/transcriptions`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
    const body = await response.json();
    t.is(response.status, 200, JSON.stringify(body));
    t.is(body.text, "Slow but there.");
    t.true(existsSync(path.join(dir, "version-calls")), "the fake ffprobe was the one asked");
  } finally {
    restore();
    await gateway.shutdown();
    await openai.close();
  }
});

test.serial("a version check that does not answer in time is 'slow', not missing; it is not remembered, and a missing one is missing", async (t) => {
  const dir = fakeEngines((folder) => `while [ ! -e "${folder}/release" ]; do "${SLEEP}" 0.05; done`);
  const restore = engineEnvironment(dir);
  try {
    const slow = await lookupFfprobe(process.env, { versionTimeoutMs: 200 });
    t.like(slow, { status: "slow", path: path.join(dir, "ffprobe") });

    const busy = await t.throwsAsync(locateEngine("ffprobe", undefined, { versionTimeoutMs: 200 }), { instanceOf: AudioEngineError });
    t.is(busy?.reason, "busy");
    t.regex(busy?.message ?? "", /ffprobe did not answer .* in time/);
    t.notRegex(busy?.message ?? "", /not installed/);
    // What a client gets for it: 503 saying the engine is busy, with a time to come back.
    const answer = audioEngineFailure(busy, "local") as { status: number; code: string; message: string; headers: Record<string, string> };
    t.like(answer, { status: 503, code: "engine_busy" });
    t.regex(answer.message, /busy/);
    t.truthy(answer.headers["retry-after"]);

    // Released: the next lookup asks again (the slow answer was not kept as "absent") and finds it.
    writeFileSync(path.join(dir, "release"), "");
    t.is(await locateEngine("ffprobe"), path.join(dir, "ffprobe"));
    t.true(readFileSync(path.join(dir, "version-calls"), "utf8").trim().split("\n").length >= 3);
  } finally {
    restore();
  }

  const empty = tempDir("gw-no-engines-");
  const broken = path.join(empty, "ffprobe-broken");
  writeFileSync(broken, "#!/bin/sh\nexit 3\n");
  chmodSync(broken, 0o755);
  t.like(await lookupFfprobe({ PATH: empty, GW_FFPROBE_PATH: path.join(empty, "nothing-here") }), { status: "missing" });
  t.like(await lookupFfprobe({ PATH: empty, GW_FFPROBE_PATH: broken }), { status: "missing" });
});

// --- Picture inputs of a type gw does not take: 415 --------------------------------------------

let gateway: TestGateway;
let key: string;
const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64"><rect width="64" height="64" fill="red"/></svg>');
const svgWithDeclaration = Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>\n${svg.toString()}`);
const pdf = Buffer.from("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n", "latin1");
let tiff: Buffer;
let png: Buffer;

const dataUrl = (bytes: Buffer, type: string) => `data:${type};base64,${bytes.toString("base64")}`;

test.before(async () => {
  tiff = await sharp({ create: { width: 32, height: 32, channels: 3, background: "#3060a0" } })
    .tiff()
    .toBuffer();
  png = await sharp({ create: { width: 640, height: 360, channels: 3, background: "#3060a0" } })
    .png()
    .toBuffer();
  const home = await makeHome((config) => {
    // Never called: every picture here is refused before anything goes upstream.
    config.providers = { local: { type: "local" }, openai: { type: "openai", baseUrl: "http://127.0.0.1:9/v1", apiKey: "sk-never-used" } };
    config.routes = [{ prefix: "oai/", provider: "openai", priority: 10, freeTier: true }];
    config.tools.describe = { default: "oai/gpt-4o-mini", allow: [] };
    config.tools.image = { default: "openai/gpt-image-1", allow: [] };
    config.tools.upscale = { default: "local/lanczos", allow: [] };
    config.video = { tickSeconds: 60, pollIntervalSeconds: 60 };
  });
  gateway = await startTestGateway(home);
  key = await addKey(home, "looker", "pro");
});

test.after.always(async () => {
  await gateway?.shutdown();
});

async function post(route: string, body: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${gateway.url}${route}`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

const inputs: Array<[string, (picture: string) => { route: string; body: Record<string, unknown> }, string | RegExp]> = [
  ["video reference photo", (picture) => ({ route: "/v1/video/generations", body: { prompt: "a slow pan", image_url: picture } }), "image_url"],
  ["describe", (picture) => ({ route: "/v1/image/describe", body: { mediaBase64: picture } }), "mediaBase64"],
  ["legacy describe", (picture) => ({ route: "/v1/vision/describe", body: { mediaBase64: picture } }), "mediaBase64"],
  ["upscale", (picture) => ({ route: "/v1/image/upscale", body: { image: picture } }), "image"],
  ["edit", (picture) => ({ route: "/v1/image/edits", body: { prompt: "make it blue", images: [picture] } }), /^images\[0\]/],
];

/** What gw does not take, as data: URLs (the TIFF is made in test.before). */
const unsupported = (): Array<[string, string, string]> => [
  ["an SVG", dataUrl(svg, "image/svg+xml"), "image/svg+xml"],
  ["an SVG with an XML declaration, declared as PNG", dataUrl(svgWithDeclaration, "image/png"), "image/svg+xml"],
  ["a TIFF", dataUrl(tiff, "image/tiff"), "image/tiff"],
  ["a PDF", dataUrl(pdf, "application/pdf"), "application/pdf"],
];

for (const [input, request, param] of inputs) {
  test(`${input}: a picture of a type gw does not take is 415 unsupported_media_type naming the type and what is taken`, async (t) => {
    for (const [what, picture, mediaType] of unsupported()) {
      const { route, body } = request(picture);
      const answer = await post(route, body);
      t.is(answer.status, 415, `${what}: ${JSON.stringify(answer.body)}`);
      t.like(answer.body.error, { type: "invalid_request_error", code: "unsupported_media_type" }, what);
      if (typeof param === "string") t.is(answer.body.error.param, param, what);
      else t.regex(answer.body.error.param, param, what);
      t.true(answer.body.error.message.includes(mediaType), `${what}: ${answer.body.error.message}`);
      t.regex(answer.body.error.message, /PNG, JPEG, WebP or GIF/, what);
    }
    // Bytes that are no file type at all are still a bad picture, 400.
    const { route, body } = request(dataUrl(Buffer.from("just some text, not pixels"), "image/png"));
    const text = await post(route, body);
    t.is(text.status, 400, JSON.stringify(text.body));
    t.is(text.body.error.code, "invalid_image");
  });
}

test("a picture gw takes passes the same check (the video job is queued)", async (t) => {
  const answer = await post("/v1/video/generations", { prompt: "a slow pan", image_url: dataUrl(png, "image/png") });
  t.is(answer.status, 202, JSON.stringify(answer.body));
});
