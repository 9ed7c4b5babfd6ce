// `gw tools list|enable|disable` and `gw image upscale|remove-background` as a user runs them:
// subprocesses of the built CLI. The tools commands edit config.json (refusing unknown tools and
// catalog models that do not do the tool's work); the image commands talk to a running gw with
// the local engines enabled, and their pictures are decoded with sharp.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "ava";
import sharp from "sharp";
import { homePaths } from "../src/config/paths.js";
import { addKey, gw, json, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { type PictureHosts, startPictureHosts } from "./helpers/picture-hosts.js";

interface ToolRow {
  tool: string;
  default: string | null;
  allow: string[];
  available?: Array<{ id: string; provider: string; providerConfigured: boolean }>;
}

const directories: string[] = [];
let gateway: TestGateway;
let hosts: PictureHosts;
let key: string;

function tempDir(prefix: string): string {
  const directory = mkdtempSync(path.join(os.tmpdir(), prefix));
  directories.push(directory);
  return directory;
}

/** A fresh home as `gw init` writes it (the `local` provider is in the default config). */
async function freshHome(): Promise<string> {
  const home = tempDir("gw-tools-");
  const result = await gw(["init", "--home", home]);
  if (result.code !== 0) throw new Error(result.stderr);
  return home;
}

function toolsOf(home: string): Record<string, { default: string | null; allow: string[] }> {
  return (JSON.parse(readFileSync(homePaths(home).config, "utf8")) as { tools: Record<string, { default: string | null; allow: string[] }> }).tools;
}

test.before(async () => {
  hosts = await startPictureHosts();
  const home = await makeHome((config) => {
    config.providers = { local: { type: "local" } };
    config.tools.upscale = { default: "local/lanczos", allow: [] };
    config.tools.background = { default: "local/flat-background", allow: [] };
  });
  key = await addKey(home, "retoucher", "pro");
  gateway = await startTestGateway(home, { fetchUrl: hosts.fetchUrl });
});

test.after.always(async () => {
  await gateway?.shutdown();
  await hosts?.close();
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

const env = () => ({ GW_BASE_URL: gateway.url, GW_API_KEY: key });

async function pictureFile(directory: string, name: string, width: number, height: number): Promise<string> {
  const file = path.join(directory, name);
  await sharp({ create: { width, height, channels: 3, background: "#cc6633" } })
    .png()
    .toFile(file);
  return file;
}

async function discFile(directory: string): Promise<string> {
  const file = path.join(directory, "disc.png");
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="120" height="90"><rect width="100%" height="100%" fill="#f4f4f4"/><circle cx="60" cy="45" r="30" fill="#208040"/></svg>`;
  await sharp(Buffer.from(svg)).png().toFile(file);
  return file;
}

test("gw tools list shows each tool's default, allowlist and the catalog models it could take", async (t) => {
  const home = await freshHome();
  const result = await gw(["tools", "list", "--json", "--home", home]);
  t.is(result.code, 0, result.stderr);
  const tools = json<ToolRow[]>(result);
  const upscale = tools.find((tool) => tool.tool === "upscale")!;
  t.is(upscale.default, null);
  t.deepEqual(upscale.allow, []);
  t.deepEqual(
    upscale.available?.find((model) => model.id === "local/lanczos"),
    { id: "local/lanczos", name: "Lanczos resampling (local)", provider: "local", providerConfigured: true },
  );
  t.false(upscale.available?.find((model) => model.id === "stability/fast-upscale")?.providerConfigured);
  t.deepEqual(
    tools
      .find((tool) => tool.tool === "background")!
      .available?.map((model) => model.id)
      .sort(),
    ["local/flat-background", "stability/remove-background"],
  );
  t.is(tools.find((tool) => tool.tool === "describe")!.available, undefined);

  const table = await gw(["tools", "list", "--home", home]);
  t.is(table.code, 0, table.stderr);
  t.regex(table.stdout, /^upscale\s+-\s+-\s+.*local\/lanczos/m);
  t.regex(table.stdout, /stability\/fast-upscale \(no provider\)/);
});

test("gw tools enable and disable edit config.json; unknown tools and unfit models are refused", async (t) => {
  const home = await freshHome();
  const enabled = await gw(["tools", "enable", "upscale", "local/lanczos", "--home", home]);
  t.is(enabled.code, 0, enabled.stderr);
  t.regex(enabled.stdout, /enabled local\/lanczos for upscale \(the default\)/);
  t.deepEqual(toolsOf(home).upscale, { default: "local/lanczos", allow: ["local/lanczos"] });

  const second = await gw(["tools", "enable", "upscale", "stability/fast-upscale", "--json", "--home", home]);
  t.is(second.code, 0, second.stderr);
  t.deepEqual(json(second), { tool: "upscale", default: "local/lanczos", allow: ["local/lanczos", "stability/fast-upscale"] });
  t.regex(second.stderr, /provider "stability" is not configured/);
  const switched = await gw(["tools", "enable", "upscale", "stability/fast-upscale", "--default", "--home", home]);
  t.is(switched.code, 0, switched.stderr);
  t.regex(switched.stdout, /already enabled/);
  t.is(toolsOf(home).upscale!.default, "stability/fast-upscale");

  const refusals: Array<[string[], RegExp]> = [
    [["upscale", "stability/core"], /does not upscale \(it offers generate\).*local\/lanczos/],
    [["background", "local/lanczos"], /does not remove backgrounds/],
    [["upscale", "acme/magic"], /not in the image catalog/],
    [["frobnicate", "local/lanczos"], /unknown tool "frobnicate"/],
  ];
  for (const [args, message] of refusals) {
    const refused = await gw(["tools", "enable", ...args, "--home", home]);
    t.is(refused.code, 1, args.join(" "));
    t.regex(refused.stderr, message);
  }
  // Chat-model tools take any model id.
  const describe = await gw(["tools", "enable", "describe", "openai/gpt-4o", "--home", home]);
  t.is(describe.code, 0, describe.stderr);
  t.deepEqual(toolsOf(home).describe, { default: "openai/gpt-4o", allow: ["openai/gpt-4o"] });

  const disabled = await gw(["tools", "disable", "upscale", "stability/fast-upscale", "--home", home]);
  t.is(disabled.code, 0, disabled.stderr);
  t.regex(disabled.stdout, /default: local\/lanczos/);
  t.deepEqual(toolsOf(home).upscale, { default: "local/lanczos", allow: ["local/lanczos"] });
  const last = await gw(["tools", "disable", "upscale", "local/lanczos", "--json", "--home", home]);
  t.deepEqual(json(last), { tool: "upscale", default: null, allow: [] });
  const again = await gw(["tools", "disable", "upscale", "local/lanczos", "--home", home]);
  t.is(again.code, 1);
  t.regex(again.stderr, /not enabled for upscale/);
});

test("gw tools enable refuses model ids nothing configured here serves, naming what would", async (t) => {
  const home = await freshHome();
  // A provider of a type gw does not implement, as an older `gw providers add` let through.
  const file = homePaths(home).config;
  const raw = JSON.parse(readFileSync(file, "utf8")) as { providers: Record<string, unknown> };
  raw.providers.lm = { type: "luma", apiKey: "${LUMA_API_KEY}" };
  // A tool the config adds itself takes PROVIDER/MODEL of a configured provider of a type gw implements.
  (raw as { tools?: Record<string, unknown> }).tools = {
    ...((raw as { tools?: Record<string, unknown> }).tools ?? {}),
    translate: { default: null, allow: [] },
  };
  writeFileSync(file, `${JSON.stringify(raw, null, 2)}\n`);
  const before = readFileSync(file, "utf8");

  const refusals: Array<[string[], RegExp]> = [
    [
      ["speech", "anything"],
      /"anything" is not in the speech catalog \(catalog.speech\) and names no configured provider of a catalog model's type; models that speak: local\/espeak, openai\/tts-1, /,
    ],
    [["speech", "elevenlabs/rachel"], /"elevenlabs\/rachel" is not in the speech catalog.*elevenlabs\/eleven_multilingual_v2/],
    [
      ["transcription", "dg/nova-2"],
      /"dg\/nova-2" is not in the transcription catalog \(catalog.transcription\) and names no configured provider of a catalog model's type; models that transcribe: openai\/whisper-1, .*deepgram\/nova-3/,
    ],
    [["search", "anything"], /"anything" is not in the search catalog \(catalog.search\); models that search the web: brave\/web, tavily\/basic/],
    [["video", "local/"], /"local\/" is not in the video catalog \(catalog.video\); models that make videos: local\/kenburns, runway\/gen4_turbo/],
    [
      ["translate", "anything"],
      /"anything" is not PROVIDER\/MODEL; translate takes PROVIDER\/MODEL with one of the configured providers gw implements: openai, anthropic, local$/m,
    ],
    [["translate", "elevenlabs/web"], /no provider "elevenlabs" is configured;.*openai, anthropic, local/],
    [["translate", "lm/x"], /provider "lm" is of type luma, which gw does not implement \(it implements [^)]*runway[^)]*\)/],
    [["describe", "gpt-4o"], /"gpt-4o" is not a chat model this gateway routes.*openai\/MODEL, anthropic\/MODEL, auto/],
    [["enhance", "local/llama3"], /not a chat model this gateway routes/],
    [["ocr", "local/easyocr"], /not an OCR engine gw runs: ocr takes local\/tesseract/],
  ];
  const refused = await Promise.all(refusals.map(([args]) => gw(["tools", "enable", ...args, "--home", home])));
  refusals.forEach(([args, message], index) => {
    t.is(refused[index]!.code, 1, args.join(" "));
    t.regex(refused[index]!.stderr, message, args.join(" "));
    t.is(refused[index]!.stdout, "");
  });
  t.is(readFileSync(file, "utf8"), before, "a refused model is not written");

  const accepted: Array<[string, string]> = [
    ["speech", "local/espeak"],
    ["transcription", "openai/whisper-1"],
    ["video", "openai/sora-2"],
    ["search", "searxng/web"],
    ["describe", "anthropic/claude-sonnet-4-5"],
    ["enhance", "auto"],
    ["ocr", "local/tesseract"],
  ];
  const results = await Promise.all(accepted.map(([tool, model]) => gw(["tools", "enable", tool, model, "--home", home])));
  accepted.forEach(([tool, model], index) => {
    t.is(results[index]!.code, 0, `${tool} ${model}: ${results[index]!.stderr}`);
  });
  t.deepEqual(toolsOf(home).enhance, { default: "auto", allow: ["auto"] });

  // A self-hosted Whisper server added as another provider of type openai serves the catalog's whisper-1.
  const withWhisper = JSON.parse(readFileSync(file, "utf8")) as { providers: Record<string, unknown> };
  withWhisper.providers.whisper = { type: "openai", baseUrl: "http://127.0.0.1:9000/v1" };
  writeFileSync(file, `${JSON.stringify(withWhisper, null, 2)}\n`);
  const whisper = await gw(["tools", "enable", "transcription", "whisper/whisper-1", "--home", home]);
  t.is(whisper.code, 0, whisper.stderr);
  const notWhisper = await gw(["tools", "enable", "transcription", "whisper/nova-3", "--home", home]);
  t.is(notWhisper.code, 1);
  t.regex(notWhisper.stderr, /"whisper\/nova-3" is not in the transcription catalog/);
});

test("concurrent gw tools enable commands both land", async (t) => {
  const home = await freshHome();
  const results = await Promise.all([
    gw(["tools", "enable", "upscale", "local/lanczos", "--home", home]),
    gw(["tools", "enable", "background", "local/flat-background", "--home", home]),
  ]);
  for (const result of results) t.is(result.code, 0, result.stderr);
  const tools = toolsOf(home);
  t.deepEqual(tools.upscale, { default: "local/lanczos", allow: ["local/lanczos"] });
  t.deepEqual(tools.background, { default: "local/flat-background", allow: ["local/flat-background"] });
});

test("gw image upscale FILE --scale 4 -o FILE writes the picture at exactly 4x; -o - writes the bytes", async (t) => {
  const cwd = tempDir("gw-upscale-");
  const input = await pictureFile(cwd, "small.png", 24, 16);
  const result = await gw(["image", "upscale", input, "--scale", "4", "-o", "big.png"], { env: env(), cwd });
  t.is(result.code, 0, result.stderr);
  t.regex(result.stderr, /saved big\.png \(image\/png/);
  const meta = await sharp(path.join(cwd, "big.png")).metadata();
  t.deepEqual([meta.format, meta.width, meta.height], ["png", 96, 64]);

  const piped = await gw(["image", "upscale", input, "--format", "webp", "-o", "-"], { env: env(), cwd });
  t.is(piped.code, 0, piped.stderr);
  t.true(piped.stdout.startsWith("RIFF"));

  const refused = await gw(["image", "upscale", input, "--scale", "3"], { env: env(), cwd });
  t.not(refused.code, 0);
  t.regex(refused.stderr, /2 or 4/);
});

test("gw image upscale asset:ID --json reads the library picture and prints the API body", async (t) => {
  const cwd = tempDir("gw-upscale-asset-");
  const input = await pictureFile(cwd, "small.png", 10, 8);
  const first = await gw(["image", "upscale", input, "--json"], { env: env(), cwd });
  t.is(first.code, 0, first.stderr);
  const assetId = json<{ data: Array<{ asset_id: string }> }>(first).data[0]!.asset_id;

  const second = await gw(["image", "upscale", `asset:${assetId}`, "--scale", "2", "--format", "png", "--json"], { env: env(), cwd });
  t.is(second.code, 0, second.stderr);
  const body = json<{ model: string; data: Array<{ b64_json: string; media_type: string; asset_id: string }> }>(second);
  t.is(body.model, "local/lanczos");
  t.is(body.data[0]!.media_type, "image/png");
  const meta = await sharp(Buffer.from(body.data[0]!.b64_json, "base64")).metadata();
  // 10x8 upscaled twice by 2.
  t.deepEqual([meta.width, meta.height], [40, 32]);
});

test("gw image remove-background FILE -o cut.webp asks for webp and writes a picture with alpha; URLs are sent as they are", async (t) => {
  const cwd = tempDir("gw-background-");
  const input = await discFile(cwd);
  const result = await gw(["image", "remove-background", input, "-o", "cut.webp"], { env: env(), cwd });
  t.is(result.code, 0, result.stderr);
  const { data, info } = await sharp(path.join(cwd, "cut.webp")).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  t.is((await sharp(path.join(cwd, "cut.webp")).metadata()).format, "webp");
  t.is(data[3], 0);
  t.is(data[(45 * info.width + 60) * 4 + 3], 255);

  hosts.serve("/disc.png", readFileSync(input), "image/png");
  const fromUrl = await gw(["image", "remove-background", `${hosts.publicBase}/disc.png`, "--format", "png", "-o", "url.png"], { env: env(), cwd });
  t.is(fromUrl.code, 0, fromUrl.stderr);
  t.true((await sharp(path.join(cwd, "url.png")).metadata()).hasAlpha);

  const jpeg = await gw(["image", "remove-background", input, "-o", "cut.jpg"], { env: env(), cwd });
  t.not(jpeg.code, 0);
  t.regex(jpeg.stderr, /png or webp/);
});
