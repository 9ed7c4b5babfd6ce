// One access line per request: request id, method, path, status, duration, agent, key prefix,
// model, provider, attempts, units and credits; never a body, a full key or an upstream key. A
// real `gw serve` writes them as JSON lines on stderr (stdout keeps only the listening line).

import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import test from "ava";
import OpenAI from "openai";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { accessOf, addKey, gwBin, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

const UPSTREAM_KEY = "sk-upstream-never-logged-1234";
const PROMPT = "a prompt that must never reach the log";

let fake: FakeOpenAI;
let home: string;
let gateway: TestGateway;
let key: string;

test.before(async () => {
  fake = await startFakeOpenAI();
  home = await makeHome((config) => {
    config.upstream = { retries: 1, retryBaseDelayMs: 1, breakerFailureThreshold: 0 };
    config.providers = { up: { type: "openai", baseUrl: fake.url, apiKey: UPSTREAM_KEY }, local: { type: "local" } };
    config.routes = [{ prefix: "m/", provider: "up", priority: 1 }];
    config.models = [{ id: "m/x", name: "X", context_length: 8000, pricing: { input_per_mtok: 1, output_per_mtok: 1 } }];
  });
  gateway = await startTestGateway(home);
  key = await addKey(home, "logged-agent", "pro");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await fake?.close();
});

test.serial("a billed chat request: status, duration, agent, key prefix, model, provider, attempts, tokens, credits", async (t) => {
  fake.enqueue({ status: 500 }, { usage: { prompt_tokens: 7, completion_tokens: 3 } });
  const client = new OpenAI({ baseURL: gateway.v1, apiKey: key, maxRetries: 0 });
  const { response } = await client.chat.completions.create({ model: "m/x", max_tokens: 10, messages: [{ role: "user", content: PROMPT }] }).withResponse();
  const record = await accessOf(response.headers.get("x-request-id")!);
  t.like(record, {
    method: "POST",
    path: "/v1/chat/completions",
    status: 200,
    agent: "logged-agent",
    keyPrefix: key.slice(0, 11),
    model: "m/x",
    provider: "up",
    attempts: 2,
    units: { prompt_tokens: 7, completion_tokens: 3 },
    credits: 10,
  });
  t.true(record.durationMs >= 0);
  const text = JSON.stringify(record);
  t.false(text.includes(key), "never the full key");
  t.false(text.includes(PROMPT), "never a body");
});

test.serial("a speech request: the audio model, the provider, its attempt, characters and credits", async (t) => {
  const response = await fetch(`${gateway.url}/v1/audio/speech`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ input: "Logged speech.", format: "wav" }),
  });
  t.is(response.status, 200);
  await response.arrayBuffer();
  const record = await accessOf(response.headers.get("x-request-id")!);
  t.like(record, { method: "POST", path: "/v1/audio/speech", status: 200, model: "local/espeak", provider: "local", attempts: 1, credits: 0 });
  t.is(record.units?.characters, 14);
});

test.serial("a stream's line is written after its last frame, with its usage; a refused request has its status", async (t) => {
  const client = new OpenAI({ baseURL: gateway.v1, apiKey: key, maxRetries: 0 });
  const { data: stream, response } = await client.chat.completions
    .create({ model: "m/x", stream: true, max_tokens: 10, messages: [{ role: "user", content: "hi" }] })
    .withResponse();
  for await (const _chunk of stream) void _chunk;
  const streamed = await accessOf(response.headers.get("x-request-id")!);
  t.is(streamed.status, 200);
  t.is(streamed.attempts, 1);
  t.true((streamed.credits ?? 0) > 0 && (streamed.units?.completion_tokens ?? 0) > 0);

  const refused = await fetch(`${gateway.v1}/chat/completions`, {
    method: "POST",
    headers: { authorization: "Bearer gw_wrong", "content-type": "application/json" },
    body: "{}",
  });
  const record = await accessOf(refused.headers.get("x-request-id")!);
  t.like(record, { status: 401, path: "/v1/chat/completions" });
  t.is(record.agent, undefined);
  t.is(record.credits, undefined);
});

test("gw serve writes JSON access lines on stderr, none with a key or a body; --log-level warn silences them", async (t) => {
  const serve = (...flags: string[]) => {
    const child = spawn(process.execPath, [gwBin, "serve", "--home", home, "--port", "0", ...flags], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const url = new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once("line", (line) => resolve(line.replace("listening on ", "")));
      child.once("exit", (code) => reject(new Error(`exited ${code}: ${stderr}`)));
    });
    const stop = () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      });
    return { url, stderr: () => stderr, stop };
  };
  const ask = (url: string) =>
    fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "m/x", max_tokens: 5, messages: [{ role: "user", content: PROMPT }] }),
    });

  const verbose = serve("--log-format", "json");
  const answer = await ask(await verbose.url);
  t.is(answer.status, 200);
  const requestId = answer.headers.get("x-request-id");
  await verbose.stop();
  const lines = verbose
    .stderr()
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const access = lines.find((line) => line.requestId === requestId);
  t.like(access, { level: 30, method: "POST", path: "/v1/chat/completions", status: 200, agent: "logged-agent", model: "m/x", provider: "up", attempts: 1 });
  t.is(typeof access?.time, "string");
  t.false(verbose.stderr().includes(key));
  t.false(verbose.stderr().includes(UPSTREAM_KEY));
  t.false(verbose.stderr().includes(PROMPT));

  const readable = serve("--log-format", "pretty");
  t.is((await ask(await readable.url)).status, 200);
  await readable.stop();
  t.regex(readable.stderr(), /INFO: POST \/v1\/chat\/completions 200 [\d.]+ms \{"requestId":"req_\w+","agent":"logged-agent"/);

  const quiet = serve("--log-level", "warn");
  t.is((await ask(await quiet.url)).status, 200);
  await quiet.stop();
  t.false(quiet.stderr().includes('"path"'), quiet.stderr());
});
