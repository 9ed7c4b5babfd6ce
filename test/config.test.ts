// Config: validation with the JSON path of the bad field, ${ENV} interpolation, defaults, and
// live reload in a running server (an invalid change is refused, the old config stays).

import { readFileSync, writeFileSync } from "node:fs";
import test from "ava";
import OpenAI from "openai";
import { ConfigError } from "../src/config/config-error.js";
import { editConfig, maskSecret } from "../src/config/config-file.js";
import { parseConfigText } from "../src/config/load-config.js";
import { homePaths } from "../src/config/paths.js";
import { startFakeOpenAI } from "./fakes/openai.js";
import { eventually } from "./helpers/eventually.js";
import { addKey, makeHome, quietLogger, startTestGateway } from "./helpers/gateway-harness.js";

const parse = (value: unknown, env: NodeJS.ProcessEnv = {}) => parseConfigText(JSON.stringify(value), "config.json", env);

test("the shipped default config is valid and fills every plan", (t) => {
  const config = parse(JSON.parse(readFileSync(new URL("../config/default.json", import.meta.url), "utf8")));
  t.is(config.server.port, 8787);
  t.deepEqual(Object.keys(config.resolvedPlans).sort(), ["free", "max", "pro"]);
  t.is(config.resolvedPlans.free!.imageMaxN, 1);
  t.is(config.resolvedPlans.max!.storageBytes, 10 * 1024 * 1024 * 1024);
  t.true(config.routes.some((route) => route.prefix === "auto"));
});

test("a bad field is reported with its JSON path", (t) => {
  const cases: Array<[unknown, string]> = [
    [{ server: { port: "eighty" } }, "server.port"],
    [{ routes: [{ prefix: "x/", provider: "missing" }] }, "routes[0].provider"],
    [{ providers: { p: { type: "openai", baseUrl: "not a url" } } }, "providers.p.baseUrl"],
    [{ models: [{ id: "m", name: "M", context_length: -1 }] }, "models[0].context_length"],
    [{ plans: { free: { monthlyCredits: 1.5 } } }, "plans.free.monthlyCredits"],
    [{ surprise: true }, ""],
  ];
  for (const [value, path] of cases) {
    const error = t.throws(() => parse(value), { instanceOf: ConfigError });
    t.is(error!.path, path, JSON.stringify(value));
    if (path) t.true(error!.message.includes(path));
  }
});

test("invalid JSON is a ConfigError, not a crash", (t) => {
  const error = t.throws(() => parseConfigText("{ nope", "config.json"), { instanceOf: ConfigError });
  t.regex(error!.message, /not valid JSON/);
});

test("${ENV} references are interpolated; unset ones become empty", (t) => {
  const config = parse(
    { providers: { p: { type: "openai", baseUrl: "${BASE}/v1", apiKey: "${KEY}", headers: { "x-unset": "a${UNSET}b" } } } },
    { BASE: "http://127.0.0.1:9", KEY: "sk-secret" },
  );
  t.is(config.providers.p!.baseUrl, "http://127.0.0.1:9/v1");
  t.is(config.providers.p!.apiKey, "sk-secret");
  t.is(config.providers.p!.headers!["x-unset"], "ab");
});

test("a provider's upstream override changes only the settings it names; the rest stay the global ones", (t) => {
  const config = parseConfigText(
    JSON.stringify({ upstream: { retries: 0, totalTimeoutMs: 5000 }, providers: { slow: { type: "openai", upstream: { firstByteTimeoutMs: 400 } } } }),
    "config.json",
  );
  t.deepEqual(config.providers.slow!.upstream, { firstByteTimeoutMs: 400 });
  const effective = { ...config.upstream, ...config.providers.slow!.upstream };
  t.is(effective.retries, 0);
  t.is(effective.totalTimeoutMs, 5000);
  t.is(effective.firstByteTimeoutMs, 400);
});

test("secrets are masked for display, env references shown as written", (t) => {
  t.is(maskSecret("sk-live-123"), "****");
  t.is(maskSecret("${OPENAI_API_KEY}"), "${OPENAI_API_KEY}");
  t.is(maskSecret(undefined), undefined);
});

test("editConfig refuses an invalid change and leaves the file untouched", async (t) => {
  const home = await makeHome();
  const file = homePaths(home).config;
  const before = readFileSync(file, "utf8");
  await t.throwsAsync(
    editConfig(file, (raw) => {
      (raw.routes as unknown[]).push({ prefix: "x/", provider: "ghost" });
    }),
    { instanceOf: ConfigError, message: /routes\[0\]\.provider/ },
  );
  t.is(readFileSync(file, "utf8"), before);
});

test.serial("a running server picks up a config change without restart, and keeps the old config on a bad one", async (t) => {
  const fake = await startFakeOpenAI();
  const home = await makeHome((config) => {
    config.providers = { fake: { type: "openai", baseUrl: fake.url, apiKey: "x" } };
    config.routes = [{ prefix: "old/", provider: "fake" }];
  });
  const gateway = await startTestGateway(home);
  try {
    const key = await addKey(home, "reload", "pro");
    const client = new OpenAI({ baseURL: gateway.v1, apiKey: key, maxRetries: 0 });
    const ask = (model: string) => client.chat.completions.create({ model, messages: [{ role: "user", content: "x" }] });
    await t.throwsAsync(ask("new/x"), { instanceOf: OpenAI.NotFoundError });

    await editConfig(homePaths(home).config, (raw) => {
      (raw.routes as unknown[]).push({ prefix: "new/", provider: "fake" });
    });
    await eventually(async () => (await ask("new/x")).model === "new/x");
    t.is((await ask("new/x")).model, "new/x");

    // A hand edit that breaks the file: refused, logged with the path, old config in force.
    const file = homePaths(home).config;
    const raw = JSON.parse(readFileSync(file, "utf8"));
    raw.routes.push({ prefix: "bad/", provider: "nobody" });
    raw.routes = raw.routes.filter((route: { prefix: string }) => route.prefix !== "old/");
    writeFileSync(file, JSON.stringify(raw));
    await eventually(async () => quietLogger.lines.some((line) => line.includes("routes[1].provider")));
    t.true(quietLogger.lines.some((line) => line.includes("config change refused") && line.includes("routes[1].provider")));
    t.is((await ask("old/x")).model, "old/x", "the previous config is still in force");
  } finally {
    await gateway.shutdown();
    await fake.close();
  }
});
