// `gw image edit` as a user runs it: the built CLI against a running gw with the OpenAI Images
// fake, which records the multipart form the gateway sends upstream (OpenAI edits take no roles,
// so the gateway tells each picture's role in the prompt: the roles are read back from there).
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "ava";
import sharp from "sharp";
import { type FakeOpenAIImages, type RecordedImagesRequest, startFakeOpenAIImages } from "./fakes/openai-images.js";
import { addKey, gw, json, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

let openai: FakeOpenAIImages;
let gateway: TestGateway;
let home: string;
let key: string;
const directories: string[] = [];

test.before(async () => {
  openai = await startFakeOpenAIImages();
  home = await makeHome((config) => {
    config.providers = { openai: { type: "openai", baseUrl: openai.url, apiKey: "test-key", upstream: { retries: 0 } } };
    config.tools.image = { default: "openai/gpt-image-1", allow: ["openai/gpt-image-1"] };
  });
  key = await addKey(home, "editor", "pro");
  gateway = await startTestGateway(home);
});

test.after.always(async () => {
  await gateway?.shutdown();
  await openai?.close();
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

const env = () => ({ GW_BASE_URL: gateway.url, GW_API_KEY: key, GW_HOME: home });

interface ResultBody {
  id: string;
  model: string;
  data: Array<{ b64_json: string; media_type: string; asset_id?: string }>;
}

/** A work directory holding small real pictures: photo.png (red), style.jpg (green), not-a-picture.txt. */
async function workDir(): Promise<string> {
  const directory = mkdtempSync(path.join(os.tmpdir(), "gw-image-edit-"));
  directories.push(directory);
  await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 200, g: 20, b: 20 } } })
    .png()
    .toFile(path.join(directory, "photo.png"));
  await sharp({ create: { width: 32, height: 32, channels: 3, background: { r: 20, g: 200, b: 20 } } })
    .jpeg()
    .toFile(path.join(directory, "style.jpg"));
  writeFileSync(path.join(directory, "not-a-picture.txt"), "hello");
  return directory;
}

const edits = (): RecordedImagesRequest[] => openai.requests.filter((request) => request.path === "/v1/images/edits");
const promptSent = (request: RecordedImagesRequest | undefined): string => request?.form?.fields.prompt?.[0] ?? "";
const picturesSent = (request: RecordedImagesRequest | undefined) =>
  request?.form?.files.filter((file) => file.field === "image" || file.field === "image[]") ?? [];

test.serial("a local file is sent as a picture; - reads the prompt from stdin; -o FILE gets the result", async (t) => {
  const cwd = await workDir();
  const before = edits().length;
  const result = await gw(["image", "edit", "-", "--image", "photo.png:edit", "-o", "night.png"], { env: env(), cwd, input: "make it night\n" });
  t.is(result.code, 0, result.stderr);
  t.regex(result.stderr, /saved night\.png \(image\/png/);
  t.is((await sharp(path.join(cwd, "night.png")).metadata()).format, "png");

  t.is(edits().length, before + 1);
  const sent = edits().at(-1);
  t.is(promptSent(sent), "make it night", "one picture to edit needs no role words");
  const pictures = picturesSent(sent);
  t.is(pictures.length, 1);
  const meta = await sharp(pictures[0]!.bytes).metadata();
  t.deepEqual([meta.width, meta.height], [64, 48], "the file's picture reached the upstream");
  t.is(sent?.form?.fields.output_format?.[0], "png");
});

test.serial("asset:ID:edit edits a library picture; roles of every entry reach the upstream", async (t) => {
  const cwd = await workDir();
  const generated = await gw(["image", "generate", "a plain cat", "--json"], { env: env(), cwd });
  t.is(generated.code, 0, generated.stderr);
  const assetId = json<ResultBody>(generated).data[0]!.asset_id!;
  t.regex(assetId, /^file_/);

  const result = await gw(
    ["image", "edit", "give the cat a hat", "--image", `asset:${assetId}:edit`, "-i", "style.jpg:reference", "--image", "photo.png:subject", "--json"],
    { env: env(), cwd },
  );
  t.is(result.code, 0, result.stderr);
  const body = json<ResultBody>(result);
  t.is(body.model, "openai/gpt-image-1");
  t.is(body.data.length, 1);
  t.regex(body.data[0]!.asset_id ?? "", /^file_/);
  t.not(body.data[0]!.asset_id, assetId, "the edit is a new picture");
  t.deepEqual(readdirSync(cwd).sort(), ["not-a-picture.txt", "photo.png", "style.jpg"], "--json alone writes no file");

  const sent = edits().at(-1);
  t.is(picturesSent(sent).length, 3);
  const prompt = promptSent(sent);
  t.true(prompt.startsWith("give the cat a hat"));
  t.regex(prompt, /Image 1: the picture to change/);
  t.regex(prompt, /Image 2: a reference/);
  t.regex(prompt, /Image 3: a person or object to keep/);
  // The library picture was sent first, as generated (1024x1024), then the files.
  const sizes = await Promise.all(picturesSent(sent).map(async (file) => (await sharp(file.bytes).metadata()).width));
  t.deepEqual(sizes, [1024, 32, 64]);
});

test.serial("an entry without a role takes the model's default (reference for gpt-image-1)", async (t) => {
  const cwd = await workDir();
  const result = await gw(["image", "edit", "mix these", "--image", "photo.png", "--image", "style.jpg", "--format", "jpeg"], { env: env(), cwd });
  t.is(result.code, 0, result.stderr);
  const created = readdirSync(cwd).filter((name) => name.startsWith("image-"));
  t.is(created.length, 1);
  t.regex(created[0]!, /^image-file_[0-9A-Z]{26}\.jpg$/);
  const prompt = promptSent(edits().at(-1));
  t.regex(prompt, /Image 1: a reference/);
  t.regex(prompt, /Image 2: a reference/);
});

test.serial("a missing or unreadable picture, or too many, fails before any request with a clear message", async (t) => {
  const cwd = await workDir();
  const before = openai.requests.length;
  const missing = await gw(["image", "edit", "x", "--image", "photo.png:edit", "--image", "nope.png:reference"], { env: env(), cwd });
  t.not(missing.code, 0);
  t.regex(missing.stderr, /--image nope\.png: no such file/);
  t.is(missing.stdout, "");

  const notPicture = await gw(["image", "edit", "x", "--image", "not-a-picture.txt"], { env: env(), cwd });
  t.not(notPicture.code, 0);
  t.regex(notPicture.stderr, /not-a-picture\.txt: not a picture/);

  const directory = await gw(["image", "edit", "x", "--image", "."], { env: env(), cwd });
  t.not(directory.code, 0);
  t.regex(directory.stderr, /--image \.: is a directory/);

  const five = await gw(["image", "edit", "x", ...["a", "b", "c", "d", "e"].flatMap((name) => ["--image", `${name}.png`])], { env: env(), cwd });
  t.not(five.code, 0);
  t.regex(five.stderr, /at most 4 pictures/);

  const none = await gw(["image", "edit", "x"], { env: env(), cwd });
  t.not(none.code, 0);
  t.regex(none.stderr, /needs a picture/);

  const badRole = await gw(["image", "edit", "x", "--image", "asset:file_1:background"], { env: env(), cwd });
  t.not(badRole.code, 0);
  t.regex(badRole.stderr, /edit, subject or reference/);

  t.is(openai.requests.length, before, "no request reached the upstream");
  t.deepEqual(readdirSync(cwd).sort(), ["not-a-picture.txt", "photo.png", "style.jpg"]);
});

test.serial("the server's error exits non-zero with its message", async (t) => {
  const cwd = await workDir();
  const missingAsset = "file_00000000000000000000000000";
  const result = await gw(["image", "edit", "x", "--image", `asset:${missingAsset}:edit`], { env: env(), cwd });
  t.not(result.code, 0);
  t.is(result.stdout, "");
  const direct = await fetch(`${gateway.url}/v1/image/edits`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ prompt: "x", images: [{ asset_id: missingAsset, role: "edit" }] }),
  });
  t.is(direct.status, 404);
  const message = ((await direct.json()) as { error: { message: string } }).error.message;
  t.is(result.stderr.trim(), message);
});

test.serial("--batch: a line's images take the --image syntax; --image gives the pictures of lines without", async (t) => {
  const cwd = await workDir();
  const before = edits().length;
  const input = [
    JSON.stringify({ prompt: "batch edit one", images: ["photo.png:edit"] }),
    JSON.stringify({ prompt: "batch edit two" }),
    JSON.stringify({ prompt: "batch edit three", images: ["missing.png"] }),
  ].join("\n");
  const result = await gw(["image", "edit", "--batch", "-", "--image", "style.jpg:subject", "-o", "edited"], { env: env(), cwd, input });
  t.is(result.code, 1, result.stderr);
  const lines = result.stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as { line: number; status: string; files?: string[]; error?: string });
  t.deepEqual(
    lines.map((line) => [line.line, line.status]),
    [
      [1, "ok"],
      [2, "ok"],
      [3, "error"],
    ],
  );
  t.regex(lines[2]!.error ?? "", /missing\.png: no such file/);
  t.deepEqual(readdirSync(path.join(cwd, "edited")).sort(), ["1-1.webp", "2-1.webp"]);

  const sent = edits().slice(before);
  t.is(sent.length, 2, "the line with a missing file sent nothing");
  const one = sent.find((request) => promptSent(request).startsWith("batch edit one"));
  const two = sent.find((request) => promptSent(request).startsWith("batch edit two"));
  t.is(promptSent(one), "batch edit one");
  t.is((await sharp(picturesSent(one)[0]!.bytes).metadata()).width, 64);
  t.regex(promptSent(two), /Image 1: a person or object to keep/);
  t.is((await sharp(picturesSent(two)[0]!.bytes).metadata()).width, 32);
});
