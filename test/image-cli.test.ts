// `gw image generate`, `gw catalog image` and `gw projects` as a user runs them: subprocesses of
// the built CLI against a running gw with the OpenAI Images fake. Saved pictures are decoded
// with sharp; --json prints the API body; `-` reads the prompt from stdin; errors exit non-zero
// with the server's message.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "ava";
import sharp from "sharp";
import { type FakeOpenAIImages, startFakeOpenAIImages } from "./fakes/openai-images.js";
import { addKey, gw, gwBin, json, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

let openai: FakeOpenAIImages;
let gateway: TestGateway;
let home: string;
let key: string;
let freeKey: string;
const directories: string[] = [];

test.before(async () => {
  openai = await startFakeOpenAIImages();
  home = await makeHome((config) => {
    config.providers = { openai: { type: "openai", baseUrl: openai.url, apiKey: "test-key", upstream: { retries: 0 } } };
    config.tools.image = { default: "openai/gpt-image-1", allow: ["openai/dall-e-3"] };
  });
  key = await addKey(home, "painter", "pro");
  freeKey = await addKey(home, "sketcher", "free");
  gateway = await startTestGateway(home);
});

test.after.always(async () => {
  await gateway?.shutdown();
  await openai?.close();
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

/** `null`: no key at all. */
const env = (apiKey: string | null = key) => ({ GW_BASE_URL: gateway.url, GW_API_KEY: apiKey ?? undefined, GW_HOME: home });

function workDir(): string {
  const directory = mkdtempSync(path.join(os.tmpdir(), "gw-image-cli-"));
  directories.push(directory);
  return directory;
}

interface ResultBody {
  id: string;
  model: string;
  data: Array<{ b64_json: string; media_type: string; asset_id?: string }>;
}

test.serial("-o FILE with a png extension asks for png and writes a decodable picture", async (t) => {
  const cwd = workDir();
  const result = await gw(["image", "generate", "a red fox", "-o", "fox.png", "--size", "1024x1024"], { env: env(), cwd });
  t.is(result.code, 0, result.stderr);
  t.regex(result.stderr, /saved fox\.png \(image\/png/);
  const meta = await sharp(path.join(cwd, "fox.png")).metadata();
  t.is(meta.format, "png");
  t.is(meta.width, 1024);
  t.is(openai.requests.at(-1)!.json.output_format, "png");
});

test.serial("--n 2 writes FILE-1.ext and FILE-2.ext with the media type's extension; default names in the cwd", async (t) => {
  const cwd = workDir();
  const several = await gw(["image", "generate", "two foxes", "--n", "2", "--format", "jpeg", "-o", "out", "--aspect-ratio", "3:2"], { env: env(), cwd });
  t.is(several.code, 0, several.stderr);
  for (const name of ["out-1.jpg", "out-2.jpg"]) {
    const meta = await sharp(path.join(cwd, name)).metadata();
    t.is(meta.format, "jpeg");
    t.true(meta.width! > meta.height!);
  }

  const plain = await gw(["image", "generate", "a webp fox"], { env: env(), cwd });
  t.is(plain.code, 0, plain.stderr);
  const created = readdirSync(cwd).filter((name) => name.startsWith("image-"));
  t.is(created.length, 1);
  t.regex(created[0]!, /^image-file_[0-9A-Z]{26}\.webp$/);
  t.is((await sharp(path.join(cwd, created[0]!)).metadata()).format, "webp");
});

test.serial("--json prints exactly the API body; - reads the prompt from stdin; flags reach the request", async (t) => {
  const cwd = workDir();
  const created = await gw(["projects", "create", "Foxes", "--json"], { env: env() });
  t.is(created.code, 0, created.stderr);
  const project = json<{ project_id: string; name: string; isDefault: boolean }>(created);
  t.is(project.name, "Foxes");
  t.false(project.isDefault);

  const result = await gw(
    ["image", "generate", "-", "--json", "--format", "png", "--quality", "low", "--background", "transparent", "--project", project.project_id],
    {
      env: env(),
      input: "a fox from stdin\n",
      cwd,
    },
  );
  t.is(result.code, 0, result.stderr);
  const body = json<ResultBody>(result);
  t.is(body.model, "openai/gpt-image-1");
  t.is(body.data.length, 1);
  t.is(body.data[0]!.media_type, "image/png");
  const meta = await sharp(Buffer.from(body.data[0]!.b64_json, "base64")).metadata();
  t.is(meta.format, "png");
  t.true(meta.hasAlpha);
  t.regex(body.data[0]!.asset_id ?? "", /^file_/);
  t.deepEqual(readdirSync(cwd), [], "--json alone writes no file");
  const sent = openai.requests.at(-1)!.json;
  t.is(sent.prompt, "a fox from stdin");
  t.is(sent.quality, "low");
  t.is(sent.background, "transparent");
});

test.serial("-o - writes the picture's bytes to stdout", async (t) => {
  const bytes = await new Promise<Buffer>((resolve, reject) => {
    const environment: NodeJS.ProcessEnv = { ...process.env, ...env() };
    delete environment.NODE_ENV;
    execFile(
      process.execPath,
      [gwBin, "image", "generate", "a fox on stdout", "--format", "webp", "-o", "-"],
      { env: environment, encoding: "buffer", maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr.toString()}`)) : resolve(stdout)),
    );
  });
  const meta = await sharp(bytes).metadata();
  t.is(meta.format, "webp");
});

test.serial("errors exit non-zero with the server's message and write nothing", async (t) => {
  const cwd = workDir();
  const badRatio = await gw(["image", "generate", "x", "--aspect-ratio", "7:3"], { env: env(), cwd });
  t.not(badRatio.code, 0);
  t.regex(badRatio.stderr, /aspect_ratio/);
  t.is(badRatio.stdout, "");

  const capped = await gw(["image", "generate", "x", "--n", "2", "--json"], { env: env(freeKey), cwd });
  t.not(capped.code, 0);
  t.regex(capped.stderr, /plan draws at most 1 image per call/);
  t.is(capped.stdout, "");

  const noKey = await gw(["image", "generate", "x"], { env: env(null), cwd });
  t.not(noKey.code, 0);
  t.regex(noKey.stderr, /no API key/);

  const conflicting = await gw(["image", "generate", "x", "-o", "a.png", "--format", "webp"], { env: env(), cwd });
  t.not(conflicting.code, 0);
  t.regex(conflicting.stderr, /make them agree/);
  t.deepEqual(readdirSync(cwd), []);
  t.false(existsSync(path.join(cwd, "a.png")));
});

test.serial("gw catalog image lists the offered models, without a key", async (t) => {
  const table = await gw(["catalog", "image"], { env: env(null) });
  t.is(table.code, 0, table.stderr);
  const lines = table.stdout.trim().split("\n");
  t.regex(lines[0]!, /^ID\s+OPERATIONS\s+FORMATS\s+ASPECT RATIOS\s+PRICE$/);
  t.true(lines.some((line) => /^openai\/gpt-image-1\s+\S*generate/.test(line)));
  t.true(lines.some((line) => line.startsWith("openai/dall-e-3")));

  const asJson = await gw(["catalog", "image", "--json"], { env: env(null) });
  t.is(asJson.code, 0, asJson.stderr);
  const body = json<{ models: Array<{ id: string }>; planLimits: Record<string, unknown> }>(asJson);
  const direct = (await (await fetch(`${gateway.url}/v1/public/image-models`)).json()) as unknown;
  t.deepEqual(body, direct);
});

test.serial("gw projects list and create", async (t) => {
  const created = await gw(["projects", "create", "Posters"], { env: env() });
  t.is(created.code, 0, created.stderr);
  const id = created.stdout.trim();
  t.regex(id, /^proj_/);

  const listed = await gw(["projects", "list", "--json"], { env: env() });
  t.is(listed.code, 0, listed.stderr);
  const body = json<{ data: Array<{ project_id: string; name: string; isDefault: boolean }> }>(listed);
  t.true(body.data[0]!.isDefault);
  t.true(body.data.some((project) => project.project_id === id && project.name === "Posters"));

  const table = await gw(["projects", "list"], { env: env() });
  t.is(table.code, 0, table.stderr);
  t.regex(table.stdout, /^ID\s+NAME\s+DEFAULT\s+CREATED/);
  t.true(table.stdout.includes(id));

  const empty = await gw(["projects", "create", "   "], { env: env() });
  t.not(empty.code, 0);
  t.regex(empty.stderr, /name/);
});
