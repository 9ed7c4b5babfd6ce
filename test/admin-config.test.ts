// Config changes through the admin API (docs/decisions.md §25): plans, providers, routes and tools
// changed through /admin/v1 end up in config.json exactly as the matching `gw` command leaves a twin
// home, are in force for the very next request, never show or audit a provider's key, and are
// refused as the commands refuse them. The same commands pointed at the gateway with --url run
// through the API; on a Redis state a change through one instance reaches another.
import { readFileSync } from "node:fs";
import test from "ava";
import OpenAI from "openai";
import { homePaths } from "../src/config/paths.js";
import { createAdminToken } from "../src/store/admin-tokens.js";
import { createKey } from "../src/store/provisioning.js";
import type { GwResult } from "./_gw-cli.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { eventually } from "./helpers/eventually.js";
import { addKey, gw, json, makeHome, type RawConfig, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { OpenApiAnswers } from "./helpers/openapi-answers.js";
import { startRedis, type TestRedis } from "./helpers/redis-server.js";
import { tempDir } from "./helpers/temp-dirs.js";

const UPSTREAM_SECRET = "sk-admin-config-literal-secret-4242";
const REMOTE_SECRET = "sk-remote-cli-literal-secret-5353";
/** Interpolated by the gateway when it loads the config; only the reference is ever stored or shown. */
const KEY_VARIABLE = "GW_ADMIN_CONFIG_TEST_KEY";

let fake: FakeOpenAI;
/** The home the gateway runs, changed through the API; its twin is changed by the same commands run locally. */
let home: string;
let twin: string;
let gateway: TestGateway;
let writer: string;
let reader: string;
let apiKey: string;
let openApi: OpenApiAnswers;
/** Every answer body the API gave, to look for secrets in. */
const answered: string[] = [];

/** Both homes start alike: no chat provider, the `local` engines for the tools. */
function baseline(config: RawConfig): void {
  config.upstream = { retries: 0, breakerFailureThreshold: 0 };
  config.providers = { local: { type: "local" } };
}

test.before(async () => {
  process.env[KEY_VARIABLE] = "sk-from-the-gateway-environment";
  fake = await startFakeOpenAI();
  home = await makeHome(baseline);
  twin = await makeHome(baseline);
  gateway = await startTestGateway(home);
  writer = (await createAdminToken(gateway.gateway.store, { name: "ops", readOnly: false })).token;
  reader = (await createAdminToken(gateway.gateway.store, { name: "dashboard", readOnly: true })).token;
  apiKey = await addKey(home, "caller", "pro");
  const document = await fetch(`${gateway.url}/admin/v1/openapi.json`, { headers: { authorization: `Bearer ${writer}` } });
  openApi = new OpenApiAnswers((await document.json()) as ConstructorParameters<typeof OpenApiAnswers>[0]);
});

test.after.always(async () => {
  await gateway?.shutdown();
  await fake?.close();
});

interface Answer<T = Record<string, unknown>> {
  status: number;
  body: T;
}

/** An admin call whose JSON answer is checked against the API's OpenAPI document. */
async function admin<T = Record<string, unknown>>(
  path: string,
  init: { method?: string; body?: unknown; token?: string; base?: string } = {},
): Promise<Answer<T>> {
  const method = init.method ?? "GET";
  const url = new URL(`${init.base ?? gateway.url}/admin/v1${path}`);
  const headers: Record<string, string> = { authorization: `Bearer ${init.token ?? writer}` };
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(url, { method, headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  const text = await response.text();
  answered.push(text);
  const body = JSON.parse(text) as T;
  const problems = openApi.problems(method, url.pathname, response.status, body);
  if (problems.length > 0) throw new Error(`${method} ${url.pathname} ${response.status} does not match the OpenAPI document: ${problems.join("; ")}`);
  return { status: response.status, body };
}

interface ErrorBody {
  error: { message: string; code: string; param?: string };
}

/** The sections config changes touch, as written in a home's config.json. */
function sections(of: string): RawConfig {
  const config = JSON.parse(readFileSync(homePaths(of).config, "utf8")) as RawConfig;
  return { plans: config.plans, planAliases: config.planAliases, providers: config.providers, routes: config.routes, tools: config.tools };
}

/** The command run on the twin home, as the operator would run it on the gateway's machine. */
async function onTwin(args: string[]): Promise<GwResult> {
  const result = await gw(args, { home: twin, env: { [KEY_VARIABLE]: "sk-from-the-gateway-environment" } });
  if (result.code !== 0) throw new Error(`gw ${args.join(" ")}: ${result.stderr}`);
  return result;
}

function chat(model: string) {
  const client = new OpenAI({ baseURL: gateway.v1, apiKey, maxRetries: 0 });
  return client.chat.completions.create({ model, max_tokens: 5, messages: [{ role: "user", content: "hi" }] });
}

test.serial("plans: PUT and DELETE change config.json as gw plans set and remove do, and the gateway runs the change at once", async (t) => {
  const created = await admin("/plans/gold", { method: "PUT", body: { create: true, monthlyCredits: 5 } });
  t.is(created.status, 201);
  t.like(created.body, { name: "gold", created: true, monthlyCredits: 5, requestsPerMinute: 20, aliases: [] });
  await onTwin(["plans", "set", "gold", "--create", "--monthly-credits", "5"]);
  t.like(gateway.gateway.config.resolvedPlans.gold, { monthlyCredits: 5 }, "in force before the answer");

  const viaAlias = await admin("/plans/assistant", { method: "PUT", body: { requestsPerMinute: 99, lowLatencyRouting: true } });
  t.is(viaAlias.status, 200);
  t.like(viaAlias.body, { name: "pro", created: false, requestsPerMinute: 99, lowLatencyRouting: true, aliases: ["assistant"] });
  await onTwin(["plans", "set", "assistant", "--requests-per-minute", "99", "--low-latency-routing"]);
  const listed = await admin<{ data: Array<{ name: string; requestsPerMinute: number }> }>("/plans");
  t.is(listed.body.data.find((plan) => plan.name === "pro")?.requestsPerMinute, 99);

  const refusals: Array<[string, unknown, number, string | undefined, RegExp]> = [
    ["/plans/silvr", { monthlyCredits: 1 }, 404, undefined, /Unknown plan "silvr": known plans are free, pro, max, gold.*"create": true/],
    ["/plans/Big%20Plan", { create: true }, 400, "plan", /lowercase letters, digits/],
    ["/plans/free", { monthlyCredits: -5 }, 400, "monthlyCredits", /plans\.free\.monthlyCredits/],
    ["/plans/free", {}, 400, undefined, /Nothing to set/],
    ["/plans/free", { monthlyCredits: 5, colour: "red" }, 400, "colour", /Unknown parameter/],
  ];
  for (const [path, body, status, param, message] of refusals) {
    const refused = await admin<ErrorBody>(path, { method: "PUT", body });
    t.is(refused.status, status, `${path} ${JSON.stringify(body)}`);
    t.is(refused.body.error.param, param);
    t.regex(refused.body.error.message, message);
  }
  t.not(readFileSync(homePaths(home).config, "utf8").indexOf('"gold"'), -1);

  const builtIn = await admin<ErrorBody>("/plans/free", { method: "DELETE" });
  t.is(builtIn.status, 409);
  t.regex(builtIn.body.error.message, /built in/);
  await createKey(gateway.gateway.store, "gold-member", "gold", "free");
  const inUse = await admin<ErrorBody>("/plans/gold", { method: "DELETE" });
  t.is(inUse.status, 409);
  t.regex(inUse.body.error.message, /used by agent gold-member/);
  t.is((await admin("/agents/gold-member", { method: "PATCH", body: { plan: "pro" } })).status, 200);
  const removed = await admin("/plans/gold", { method: "DELETE" });
  t.is(removed.status, 200);
  t.deepEqual(removed.body, { plan: "gold", removedAliases: [] });
  await onTwin(["plans", "remove", "gold"]);
  t.is((await admin("/plans/gold", { method: "DELETE" })).status, 404);
  t.false("gold" in gateway.gateway.config.resolvedPlans);

  t.deepEqual(sections(home), sections(twin), "the API and the commands leave the same config");
});

test.serial("providers and routes added through the API serve the next chat call; the provider's key is never answered or audited", async (t) => {
  const added = await admin("/providers", { method: "POST", body: { name: "up", type: "openai", baseUrl: fake.url, apiKey: UPSTREAM_SECRET } });
  t.is(added.status, 201);
  t.deepEqual(added.body, { name: "up", type: "openai", baseUrl: fake.url, apiKey: "****", headers: {}, responsesApi: false });
  await onTwin(["providers", "add", "up", "--type", "openai", "--base-url", fake.url, "--api-key", UPSTREAM_SECRET]);
  const route = await admin("/routes", { method: "POST", body: { prefix: "m/", provider: "up", priority: 1 } });
  t.is(route.status, 201);
  t.deepEqual(route.body, { index: 0, replaced: false, route: { prefix: "m/", provider: "up", priority: 1, freeTier: false } });
  await onTwin(["routes", "add", "m/", "--provider", "up", "--priority", "1"]);
  t.deepEqual(sections(home), sections(twin), "a literal key is written as the command writes it");

  // No wait: the gateway runs the new config before the API answers.
  fake.enqueue({ usage: { prompt_tokens: 3, completion_tokens: 2 } });
  await chat("m/gpt-4o-mini");
  t.is(fake.requests.at(-1)?.headers.authorization, `Bearer ${UPSTREAM_SECRET}`);
  t.is(fake.requests.at(-1)?.body.model, "gpt-4o-mini");

  const changed = await admin("/providers/up", { method: "PATCH", body: { apiKey: `\${${KEY_VARIABLE}}`, headers: { "X-Team": "blue" } } });
  t.is(changed.status, 200);
  t.deepEqual(changed.body, {
    name: "up",
    type: "openai",
    baseUrl: fake.url,
    apiKey: `\${${KEY_VARIABLE}}`,
    headers: { "X-Team": "****" },
    responsesApi: false,
    changed: ["apiKey", "header X-Team"],
  });
  await onTwin(["providers", "set", "up", "--api-key", `\${${KEY_VARIABLE}}`, "--header", "X-Team=blue"]);
  const pinned = await admin("/routes/0?prefix=m/", { method: "PATCH", body: { model: "pinned-model", freeTier: true } });
  t.is(pinned.status, 200);
  t.deepEqual(pinned.body, { index: 0, route: { prefix: "m/", provider: "up", model: "pinned-model", priority: 1, freeTier: true } });
  await onTwin(["routes", "set", "m/", "--model", "pinned-model", "--free-tier"]);
  await chat("m/gpt-4o-mini");
  const sent = fake.requests.at(-1);
  t.is(sent?.headers.authorization, "Bearer sk-from-the-gateway-environment", "the reference is resolved in the gateway's environment");
  t.is(sent?.headers["x-team"], "blue");
  t.is(sent?.body.model, "pinned-model");
  t.deepEqual(sections(home), sections(twin));

  const refusals: Array<[string, string, unknown, number, string | undefined, RegExp]> = [
    ["POST", "/providers", { name: "x", type: "no-such-vendor" }, 400, "type", /Unknown provider type "no-such-vendor": gw implements/],
    ["POST", "/providers", { name: "up", type: "openai" }, 409, undefined, /already exists/],
    ["POST", "/providers", { name: "bad name", type: "openai" }, 400, "name", /letters, digits/],
    ["POST", "/providers", { name: "y", type: "openai", baseUrl: "not a url" }, 400, "baseUrl", /providers\.y\.baseUrl/],
    ["PATCH", "/providers/nope", { baseUrl: "https://x.example/v1" }, 404, undefined, /No provider "nope"; the providers are local, up/],
    ["PATCH", "/providers/up", { headers: { "X-Missing": null } }, 400, "headers", /has no header "X-Missing"/],
    ["PATCH", "/providers/up", {}, 400, undefined, /Nothing to change/],
    ["DELETE", "/providers/up", undefined, 409, undefined, /used by routes\[0\] \(prefix "m\/"\)/],
    ["POST", "/routes", { prefix: "g/", provider: "ghost" }, 400, "provider", /unknown provider "ghost"/],
    ["POST", "/routes", { prefix: "m/", provider: "up" }, 409, undefined, /routes\[0\] already sends "m\/" to up/],
    ["POST", "/routes", { prefix: "auto", provider: "up" }, 400, "provider", /weighted upstreams/],
    ["POST", "/routes", { prefix: "n/" }, 400, "provider", /Give a provider, or weighted upstreams/],
    ["PATCH", "/routes/0?prefix=other/", { priority: 3 }, 409, undefined, /now has prefix "m\/", not "other\/"/],
    ["PATCH", "/routes/7", { priority: 3 }, 404, undefined, /No routes\[7\]/],
    ["PATCH", "/routes/first", { priority: 3 }, 400, "index", /route index/],
    ["DELETE", "/routes/5", undefined, 404, undefined, /No routes\[5\]/],
  ];
  const before = readFileSync(homePaths(home).config, "utf8");
  for (const [method, path, body, status, param, message] of refusals) {
    const refused = await admin<ErrorBody>(path, { method, body });
    t.is(refused.status, status, `${method} ${path} ${JSON.stringify(body)}`);
    t.is(refused.body.error.param, param, `${method} ${path}`);
    t.regex(refused.body.error.message, message);
    t.false(refused.body.error.message.includes(homePaths(home).config), "the config file's place on the server is not told");
  }
  t.is(readFileSync(homePaths(home).config, "utf8"), before, "a refused change writes nothing");

  const weighted = await admin("/routes", { method: "POST", body: { prefix: "auto", upstreams: [{ provider: "up", model: "gpt-4o", weight: 3 }] } });
  t.is(weighted.status, 201);
  await onTwin(["routes", "add", "auto", "--upstream", "up:gpt-4o:3"]);
  const replaced = await admin("/routes", { method: "POST", body: { prefix: "auto", upstreams: [{ provider: "up", model: "gpt-4o-mini" }], replace: true } });
  t.is(replaced.status, 200);
  t.like(replaced.body, { index: 1, replaced: true, route: { upstreams: [{ provider: "up", model: "gpt-4o-mini", weight: 1 }] } });
  await onTwin(["routes", "add", "auto", "--upstream", "up:gpt-4o-mini", "--replace"]);
  const removedRoute = await admin("/routes/1?prefix=auto", { method: "DELETE" });
  t.deepEqual(removedRoute.body, {
    index: 1,
    route: { prefix: "auto", upstreams: [{ provider: "up", model: "gpt-4o-mini", weight: 1 }], priority: 0, freeTier: false },
  });
  await onTwin(["routes", "remove", "auto"]);
  t.is((await admin("/routes/0?prefix=m/", { method: "DELETE" })).status, 200);
  await onTwin(["routes", "remove", "m/"]);
  await t.throwsAsync(chat("m/gpt-4o-mini"), { message: /404/ }, "the route is gone at once");
  const removedProvider = await admin("/providers/up", { method: "DELETE" });
  t.like(removedProvider.body, { name: "up", apiKey: `\${${KEY_VARIABLE}}` });
  await onTwin(["providers", "remove", "up"]);
  t.deepEqual(sections(home), sections(twin));

  const audit = await admin<{ data: Array<{ action?: string; target?: string }> }>("/audit?limit=200");
  for (const [action, target] of [
    ["providers.add", "up"],
    ["providers.set", "up"],
    ["providers.remove", "up"],
    ["routes.add", "routes[0] m/"],
    ["routes.set", "routes[0] m/"],
    ["routes.remove", "routes[1] auto"],
  ])
    t.true(
      audit.body.data.some((entry) => entry.action === action && entry.target === target),
      `${action} ${target}`,
    );
  const stored = readFileSync(`${homePaths(home).dataDir}/audit/${new Date().toISOString().slice(0, 7)}.jsonl`, "utf8");
  t.false(stored.includes(UPSTREAM_SECRET), "the audit log has no key");
  t.false(
    answered.some((text) => text.includes(UPSTREAM_SECRET)),
    "no answer has the key",
  );
});

test.serial("tools: listed, enabled and disabled as gw tools list, enable and disable do", async (t) => {
  const listed = await admin<{ data: unknown[] }>("/tools");
  t.deepEqual(listed.body.data, json(await onTwin(["tools", "list", "--json"])));

  const enabled = await admin("/tools/upscale/models", { method: "POST", body: { model: "local/lanczos" } });
  t.is(enabled.status, 201);
  t.deepEqual(enabled.body, { tool: "upscale", default: "local/lanczos", allow: ["local/lanczos"], added: true, missingProvider: null });
  await onTwin(["tools", "enable", "upscale", "local/lanczos"]);
  const unconfigured = await admin("/tools/upscale/models", { method: "POST", body: { model: "stability/fast-upscale" } });
  t.like(unconfigured.body, { default: "local/lanczos", added: true, missingProvider: "stability" });
  await onTwin(["tools", "enable", "upscale", "stability/fast-upscale"]);
  const again = await admin("/tools/upscale/models", { method: "POST", body: { model: "stability/fast-upscale", default: true } });
  t.is(again.status, 200);
  t.like(again.body, { default: "stability/fast-upscale", added: false });
  await onTwin(["tools", "enable", "upscale", "stability/fast-upscale", "--default"]);
  t.is(gateway.gateway.config.tools.upscale?.default, "stability/fast-upscale", "in force before the answer");

  const unfit = await admin<ErrorBody>("/tools/upscale/models", { method: "POST", body: { model: "stability/core" } });
  t.is(unfit.status, 400);
  t.is(unfit.body.error.param, "model");
  t.regex(unfit.body.error.message, /does not upscale/);
  const unknownTool = await admin<ErrorBody>("/tools/frobnicate/models", { method: "POST", body: { model: "local/lanczos" } });
  t.is(unknownTool.status, 404);
  t.regex(unknownTool.body.error.message, /Unknown tool "frobnicate"/);

  const disabled = await admin(`/tools/upscale/models/${encodeURIComponent("stability/fast-upscale")}`, { method: "DELETE" });
  t.is(disabled.status, 200);
  t.deepEqual(disabled.body, { tool: "upscale", default: "local/lanczos", allow: ["local/lanczos"] });
  await onTwin(["tools", "disable", "upscale", "stability/fast-upscale"]);
  t.is((await admin(`/tools/upscale/models/${encodeURIComponent("stability/fast-upscale")}`, { method: "DELETE" })).status, 404);
  t.deepEqual(sections(home), sections(twin));

  const audit = await admin<{ data: Array<{ action?: string; target?: string }> }>("/audit?limit=200");
  t.true(audit.body.data.some((entry) => entry.action === "tools.enable" && entry.target === "upscale local/lanczos"));
  t.true(audit.body.data.some((entry) => entry.action === "tools.disable" && entry.target === "upscale stability/fast-upscale"));
  t.true(audit.body.data.some((entry) => entry.action === "plans.set" && entry.target === "gold"));
  t.true(audit.body.data.some((entry) => entry.action === "plans.remove" && entry.target === "gold"));
});

test.serial("a read-only token reads the config and changes none of it", async (t) => {
  const before = readFileSync(homePaths(home).config, "utf8");
  const changes: Array<[string, string, unknown]> = [
    ["PUT", "/plans/pro", { monthlyCredits: 1 }],
    ["DELETE", "/plans/pro", undefined],
    ["POST", "/providers", { name: "ro", type: "openai" }],
    ["PATCH", "/providers/local", { baseUrl: "https://x.example" }],
    ["DELETE", "/providers/local", undefined],
    ["POST", "/routes", { prefix: "ro/", provider: "local" }],
    ["PATCH", "/routes/0", { priority: 1 }],
    ["DELETE", "/routes/0", undefined],
    ["POST", "/tools/upscale/models", { model: "local/lanczos" }],
    ["DELETE", "/tools/upscale/models/local%2Flanczos", undefined],
  ];
  for (const [method, path, body] of changes) {
    const refused = await admin<ErrorBody>(path, { method, body, token: reader });
    t.is(refused.status, 403, `${method} ${path}`);
    t.is(refused.body.error.code, "admin_read_only");
  }
  t.is((await admin("/tools", { token: reader })).status, 200);
  t.is(readFileSync(homePaths(home).config, "utf8"), before);
});

test.serial("gw plans, providers, routes and tools pointed at the gateway with --url change it through the API, with no home", async (t) => {
  const elsewhere = { home: `${homePaths(home).dataDir}/../../no-home-here`, env: { GW_ADMIN_URL: gateway.url, GW_ADMIN_TOKEN: writer } };
  const remote = (args: string[]) => gw(args, elsewhere);

  const providerArgs = ["providers", "add", "far", "--type", "openai", "--base-url", fake.url, "--api-key", REMOTE_SECRET, "--header", "X-Title=gw", "--json"];
  const [remoteProvider, localProvider] = await Promise.all([remote(providerArgs), onTwin(providerArgs)]);
  t.is(remoteProvider.code, 0, remoteProvider.stderr);
  t.deepEqual(json(remoteProvider), json(localProvider), "the same --json as the local command");
  t.false(`${remoteProvider.stdout}${remoteProvider.stderr}`.includes(REMOTE_SECRET));

  const routeArgs = ["routes", "add", "far/", "--provider", "far", "--priority", "4", "--json"];
  const [remoteRoute, localRoute] = await Promise.all([remote(routeArgs), onTwin(routeArgs)]);
  t.is(remoteRoute.code, 0, remoteRoute.stderr);
  t.deepEqual(json(remoteRoute), json(localRoute));
  fake.enqueue({ usage: { prompt_tokens: 3, completion_tokens: 2 } });
  await chat("far/gpt-4o-mini");
  t.is(fake.requests.at(-1)?.headers.authorization, `Bearer ${REMOTE_SECRET}`);

  const setArgs = ["routes", "set", "far/", "--model", "far-model", "--json"];
  const [remoteSet, localSet] = await Promise.all([remote(setArgs), onTwin(setArgs)]);
  t.is(remoteSet.code, 0, remoteSet.stderr);
  t.deepEqual(json(remoteSet), json(localSet));
  const [remoteRoutes, serverRoutes] = await Promise.all([remote(["routes", "list", "--json"]), gw(["routes", "list", "--json"], { home })]);
  t.deepEqual(json(remoteRoutes), json(serverRoutes), "the gateway's routes, as its home lists them");

  const planArgs = ["plans", "set", "bronze", "--create", "--monthly-credits", "7", "--json"];
  const [remotePlan, localPlan] = await Promise.all([remote(planArgs), onTwin(planArgs)]);
  t.is(remotePlan.code, 0, remotePlan.stderr);
  t.deepEqual(json(remotePlan), json(localPlan));
  t.like(json(remotePlan), { plan: "bronze", created: true, limits: { monthlyCredits: 7 } });
  const moved = await remote(["plans", "set", "bronze", "--agent", "caller", "--json"]);
  t.is(moved.code, 0, moved.stderr);
  t.like(json(moved), { plan: "bronze", created: false, agent: "caller", limits: { monthlyCredits: 7 } });

  const toolArgs = ["tools", "enable", "background", "local/flat-background", "--json"];
  const [remoteTool, localTool] = await Promise.all([remote(toolArgs), onTwin(toolArgs)]);
  t.is(remoteTool.code, 0, remoteTool.stderr);
  t.deepEqual(json(remoteTool), json(localTool));
  const [remoteTools, serverTools] = await Promise.all([remote(["tools", "list", "--json"]), gw(["tools", "list", "--json"], { home })]);
  t.deepEqual(json(remoteTools), json(serverTools));

  const removeArgs = ["routes", "remove", "far/", "--json"];
  const [remoteRemoval, localRemoval] = await Promise.all([remote(removeArgs), onTwin(removeArgs)]);
  t.is(remoteRemoval.code, 0, remoteRemoval.stderr);
  t.deepEqual(json(remoteRemoval), json(localRemoval));
  const [remoteGone, localGone] = await Promise.all([remote(["providers", "remove", "far", "--json"]), onTwin(["providers", "remove", "far", "--json"])]);
  t.is(remoteGone.code, 0, remoteGone.stderr);
  t.deepEqual(json(remoteGone), json(localGone));
  t.deepEqual(
    { ...sections(home), plans: undefined },
    { ...sections(twin), plans: undefined },
    "the same config (but the agent moved on the gateway's side only)",
  );

  const refused = await remote(["providers", "set", "nope", "--base-url", "https://x.example/v1"]);
  t.is(refused.code, 1);
  t.regex(refused.stderr, /the gateway refused: No provider "nope"; the providers are local.*\(HTTP 404\)/);
  const readOnly = await gw(["tools", "enable", "upscale", "local/lanczos", "--admin-token", reader], elsewhere);
  t.is(readOnly.code, 1);
  t.regex(readOnly.stderr, /read-only/);
});

test.serial("on a Redis state, a change through one instance's admin API reaches the other instances", async (t) => {
  let redis: TestRedis | undefined;
  const instances: TestGateway[] = [];
  t.teardown(async () => {
    await Promise.all(instances.map((instance) => instance.shutdown()));
    await redis?.stop();
  });
  redis = await startRedis();
  const socket = redis.socket;
  const blobs = tempDir("gw-admin-config-blobs-");
  const shared = (config: RawConfig) => {
    baseline(config);
    config.state = { driver: "redis", url: socket, prefix: "adminconfig:" };
    // Instances on one machine share a blob folder, as instances on several would share a bucket.
    config.storage = { ...config.storage, signingSecret: "a-signing-secret-shared-by-every-instance-0123456789", options: { base: blobs } };
  };
  const first = await startTestGateway(await makeHome(shared));
  instances.push(first);
  const second = await startTestGateway(await makeHome(shared));
  instances.push(second);
  const token = (await createAdminToken(first.gateway.store, { name: "fleet-ops", readOnly: false })).token;
  const key = (await createKey(first.gateway.store, "fleet-caller", "pro", "free")).key;

  const added = await admin("/providers", {
    method: "POST",
    base: first.url,
    token,
    body: { name: "up", type: "openai", baseUrl: fake.url, apiKey: UPSTREAM_SECRET },
  });
  t.is(added.status, 201);
  t.is((await admin("/routes", { method: "POST", base: first.url, token, body: { prefix: "r/", provider: "up" } })).status, 201);

  const chatOn = async (instance: TestGateway) => {
    const response = await fetch(`${instance.v1}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "r/gpt-4o-mini", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }),
    });
    await response.arrayBuffer();
    return response.status;
  };
  t.is(await chatOn(first), 200, "the instance that made the change runs it at once");
  await eventually(() => chatOn(second), { what: "the second instance serving the new route", until: (status) => status === 200 });
  const routes = await admin<{ data: Array<{ prefix: string }> }>("/routes", { base: second.url, token });
  t.deepEqual(
    routes.body.data.map((route) => route.prefix),
    ["r/"],
  );
  const document = JSON.parse((await redis.client().get("adminconfig:config")) ?? "{}") as RawConfig;
  t.is(document.providers.up.apiKey, UPSTREAM_SECRET, "the change is the shared document's");
});
