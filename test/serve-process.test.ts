// `gw serve` as a process: its first line, graceful drain on SIGTERM, refusal to start on
// missing or corrupt data, and no lost acknowledged usage when killed with SIGKILL under load.

import { appendFileSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import test from "ava";
import sharp from "sharp";
import { homePaths } from "../src/config/paths.js";
import { periodOf, UsageLog } from "../src/store/usage-log.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { eventually } from "./helpers/eventually.js";
import { addKey, makeHome, spawnServe } from "./helpers/gateway-harness.js";

let fake: FakeOpenAI;
test.before(async () => {
  fake = await startFakeOpenAI();
});
test.after.always(async () => {
  await fake?.close();
});

const homeWithFake = () =>
  makeHome((config) => {
    config.providers = { fake: { type: "openai", baseUrl: fake.url, apiKey: "x" } };
    config.routes = [{ prefix: "fake/", provider: "fake" }];
  });

const chat = (url: string, key: string, extra: Record<string, unknown> = {}) =>
  fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "fake/x", messages: [{ role: "user", content: "one two three four five" }], ...extra }),
  });

test("first stdout line is `listening on http://HOST:PORT`; SIGTERM drains an open stream and exits 0", async (t) => {
  const home = await homeWithFake();
  const key = await addKey(home, "drain", "pro");
  const serve = await spawnServe(home);
  t.regex(serve.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  fake.enqueue({ chunkDelayMs: 150 });
  const response = await chat(serve.url, key, { stream: true });
  t.is(response.status, 200);
  serve.child.kill("SIGTERM");
  const text = await response.text();
  t.true(text.trimEnd().endsWith("data: [DONE]"), "the in-flight stream finished");
  t.is(await serve.exited, 0);
  await t.throwsAsync(fetch(`${serve.url}/health`), undefined, "no longer accepting");
});

test("the built server removes a large picture's flat background on its worker thread", async (t) => {
  // bin/run.js runs the bundled server (scripts/bundle-cli.mjs); over one megapixel the pass runs
  // on a worker thread, whose file the bundle must ship next to the chunk that starts it.
  const home = await makeHome((config) => {
    config.providers = { local: { type: "local" } };
    config.tools.background = { default: "local/flat-background", allow: [] };
  });
  const key = await addKey(home, "pictures", "pro");
  const serve = await spawnServe(home);
  t.teardown(() => serve.child.kill("SIGTERM"));
  const [width, height] = [1600, 1000];
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="#ffffff"/><circle cx="800" cy="500" r="300" fill="#c03030"/></svg>`;
  const picture = await sharp(Buffer.from(svg)).png().toBuffer();
  const response = await fetch(`${serve.url}/v1/image/background-removal`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ image: `data:image/png;base64,${picture.toString("base64")}`, output_format: "png" }),
  });
  const body = (await response.json()) as { data?: { b64_json: string }[] };
  t.is(response.status, 200, JSON.stringify(body));
  const { data, info } = await sharp(Buffer.from(body.data![0]!.b64_json, "base64")).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  t.deepEqual([info.width, info.height], [width, height]);
  const alpha = (x: number, y: number) => data[(y * info.width + x) * 4 + 3];
  t.is(alpha(0, 0), 0, "the white corner is transparent");
  t.is(alpha(800, 500), 255, "the disc stays opaque");
});

test("an initialised home with a missing metadata file refuses to start", async (t) => {
  const home = await homeWithFake();
  rmSync(homePaths(home).metadata);
  const error = await t.throwsAsync(spawnServe(home));
  t.regex(error!.message, /metadata file .* is missing; refusing to start/);
});

test("a corrupt metadata file refuses to start with a clear message", async (t) => {
  const home = await homeWithFake();
  writeFileSync(homePaths(home).metadata, '{"version":1,"agents":[');
  const error = await t.throwsAsync(spawnServe(home));
  t.regex(error!.message, /metadata file .* is corrupt/);
});

test("a usage log corrupt in the middle refuses to start; a torn last line is dropped", async (t) => {
  const home = await homeWithFake();
  const file = path.join(homePaths(home).usageDir, `${periodOf(new Date())}.jsonl`);
  const row = {
    id: "1",
    time: new Date().toISOString(),
    agent: "a",
    keyPrefix: "gw_x",
    endpoint: "e",
    model: "m",
    provider: "p",
    units: {},
    credits: 5,
    requestId: "r",
  };
  writeFileSync(file, `${JSON.stringify(row)}\n{broken\n${JSON.stringify(row)}\n`);
  const error = await t.throwsAsync(spawnServe(home));
  t.regex(error!.message, /usage log .* is corrupt at line 2/);

  writeFileSync(file, `${JSON.stringify(row)}\n${JSON.stringify(row).slice(0, 20)}`);
  const serve = await spawnServe(home);
  serve.child.kill("SIGTERM");
  t.is(await serve.exited, 0);
  t.is(readFileSync(file, "utf8"), `${JSON.stringify(row)}\n`);
});

test("SIGKILL under load loses no acknowledged usage row and leaves every file parseable", async (t) => {
  const home = await homeWithFake();
  const key = await addKey(home, "kill", "max");
  const serve = await spawnServe(home);
  let acknowledged = 0;
  let stop = false;
  const worker = async () => {
    while (!stop) {
      try {
        const response = await chat(serve.url, key);
        if (response.status === 200) {
          await response.json();
          acknowledged += 1;
        }
      } catch {
        return;
      }
    }
  };
  const workers = Array.from({ length: 16 }, worker);
  // Kill it mid-load: once a good number of responses were acknowledged.
  await eventually(() => acknowledged >= 60, "60 acknowledged responses");
  serve.child.kill("SIGKILL");
  stop = true;
  await Promise.all(workers);
  await serve.exited;
  t.true(acknowledged > 0, `${acknowledged} acknowledged`);

  const paths = homePaths(home);
  JSON.parse(readFileSync(paths.metadata, "utf8"));
  const rows = UsageLog.readRows(paths.usageDir, periodOf(new Date()));
  t.true(rows.length >= acknowledged, `${rows.length} rows for ${acknowledged} acknowledged responses`);

  // It starts again on the same data, with the balance carried over.
  appendFileSync(path.join(paths.usageDir, `${periodOf(new Date())}.jsonl`), "");
  const again = await spawnServe(home);
  const response = await chat(again.url, key);
  t.is(response.status, 200);
  again.child.kill("SIGTERM");
  t.is(await again.exited, 0);
  t.is(UsageLog.readRows(paths.usageDir, periodOf(new Date())).length, rows.length + 1);
});
