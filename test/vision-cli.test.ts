// `gw image describe` as a user runs it: the built CLI in a subprocess against a running gw whose
// describe model is the OpenAI fake. A FILE and `-` (bytes on stdin) go inline as mediaBase64, a
// URL as mediaUrl (downloaded by the gateway); --json prints exactly the API body; errors exit
// non-zero with the server's message.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "ava";
import sharp from "sharp";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { addKey, gw, gwBin, json, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { type PictureHosts, startPictureHosts } from "./helpers/picture-hosts.js";

let openai: FakeOpenAI;
let hosts: PictureHosts;
let gateway: TestGateway;
let home: string;
let key: string;
let png: Buffer;
let directory: string;
let pictureFile: string;

test.before(async () => {
  openai = await startFakeOpenAI();
  hosts = await startPictureHosts();
  png = await sharp({ create: { width: 32, height: 32, channels: 3, background: "#8844cc" } })
    .png()
    .toBuffer();
  hosts.serve("/purple.png", png, "image/png");
  directory = mkdtempSync(path.join(os.tmpdir(), "gw-describe-cli-"));
  pictureFile = path.join(directory, "purple.png");
  writeFileSync(pictureFile, png);
  home = await makeHome((config) => {
    config.providers = { oai: { type: "openai", baseUrl: openai.url, apiKey: "sk-upstream", upstream: { retries: 0 } } };
    config.routes = [{ prefix: "oai/", provider: "oai", priority: 10 }];
    config.tools.describe = { default: "oai/gpt-4o-mini", allow: ["oai/gpt-4o"] };
  });
  key = await addKey(home, "viewer", "pro");
  gateway = await startTestGateway(home, { fetchUrl: hosts.fetchUrl });
});

test.after.always(async () => {
  await gateway?.shutdown();
  await hosts?.close();
  await openai?.close();
  rmSync(directory, { recursive: true, force: true });
});

const env = () => ({ GW_BASE_URL: gateway.url, GW_API_KEY: key, GW_HOME: home });
const lastSent = () => openai.requests.at(-1)!.body;
const inlinePng = () => `data:image/png;base64,${png.toString("base64")}`;

test.serial("FILE: the picture goes inline, the answer is printed as text", async (t) => {
  openai.enqueue({ content: "A purple square." });
  const result = await gw(["image", "describe", pictureFile], { env: env() });
  t.is(result.code, 0, result.stderr);
  t.is(result.stdout, "A purple square.\n");
  t.deepEqual(lastSent().messages[0].content[1], { type: "image_url", image_url: { url: inlinePng() } });
  t.is(lastSent().model, "gpt-4o-mini");
});

test.serial("--json prints exactly the API body; --prompt and --model reach the request", async (t) => {
  const result = await gw(["image", "describe", pictureFile, "--prompt", "Which colour?", "--model", "oai/gpt-4o", "--json"], { env: env() });
  t.is(result.code, 0, result.stderr);
  t.deepEqual(json(result), { model: "oai/gpt-4o", text: "echo: Which colour?" });
  t.is(lastSent().model, "gpt-4o");
  t.deepEqual(lastSent().messages[0].content[0], { type: "text", text: "Which colour?" });
});

test.serial("a URL is sent as mediaUrl and downloaded by the gateway", async (t) => {
  const result = await gw(["image", "describe", `${hosts.publicBase}/purple.png`, "--prompt", "What is it?"], { env: env() });
  t.is(result.code, 0, result.stderr);
  t.is(result.stdout, "echo: What is it?\n");
  t.true(hosts.publicHits.includes("/purple.png"));
  t.deepEqual(lastSent().messages[0].content[1], { type: "image_url", image_url: { url: inlinePng() } });
});

test.serial("- reads the picture's bytes from stdin", async (t) => {
  const stdout = await new Promise<string>((resolve, reject) => {
    const environment: NodeJS.ProcessEnv = { ...process.env, ...env() };
    delete environment.NODE_ENV;
    const child = execFile(
      process.execPath,
      [gwBin, "image", "describe", "-", "--prompt", "From stdin?"],
      { env: environment, encoding: "utf8" },
      (error, out, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(out)),
    );
    child.stdin!.end(png);
  });
  t.is(stdout, "echo: From stdin?\n");
  t.deepEqual(lastSent().messages[0].content[1], { type: "image_url", image_url: { url: inlinePng() } });
});

test.serial("errors exit non-zero with the server's message and print nothing on stdout", async (t) => {
  const notAllowed = await gw(["image", "describe", pictureFile, "--model", "oai/o4-mini"], { env: env() });
  t.not(notAllowed.code, 0);
  t.regex(notAllowed.stderr, /not allowed/);
  t.is(notAllowed.stdout, "");

  const textFile = path.join(directory, "notes.txt");
  writeFileSync(textFile, "no pixels here");
  const notPicture = await gw(["image", "describe", textFile, "--json"], { env: env() });
  t.not(notPicture.code, 0);
  t.regex(notPicture.stderr, /mediaBase64/);
  t.is(notPicture.stdout, "");

  const missing = await gw(["image", "describe", path.join(directory, "nope.png")], { env: env() });
  t.not(missing.code, 0);
  t.regex(missing.stderr, /no such file/);
});
