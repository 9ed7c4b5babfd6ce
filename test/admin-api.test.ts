// The admin API (docs/decisions.md §25): off until `gw admin token create` makes a token; admin
// tokens only (an API key is refused there, an admin token is refused by the model endpoints);
// read-only tokens change nothing; loopback and admin.allowFrom only; keys made, changed and
// revoked through it are the ones `gw keys list` shows; every call in the audit log, never a secret.
import { readdirSync, readFileSync } from "node:fs";
import test from "ava";
import OpenAI from "openai";
import { homePaths } from "../src/config/paths.js";
import { startServer } from "../src/server/start-server.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { addKey, gw, json, makeHome, quietLogger, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { OpenApiAnswers } from "./helpers/openapi-answers.js";

const UPSTREAM_KEY = "sk-upstream-secret-never-shown-9876";

let fake: FakeOpenAI;
let home: string;
let gateway: TestGateway;
let apiKey: string;

test.before(async () => {
  fake = await startFakeOpenAI();
  home = await makeHome((config) => {
    config.upstream = { retries: 0, breakerFailureThreshold: 0 };
    config.providers = { up: { type: "openai", baseUrl: fake.url, apiKey: UPSTREAM_KEY, headers: { "x-attribution": "secret-header-value" } } };
    config.routes = [{ prefix: "m/", provider: "up", priority: 1 }];
    config.models = [{ id: "m/x", name: "X", context_length: 8000, pricing: { input_per_mtok: 1, output_per_mtok: 1 } }];
  });
  gateway = await startTestGateway(home);
  apiKey = await addKey(home, "existing-agent", "pro");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await fake?.close();
});

let openApi: OpenApiAnswers | undefined;
/** Answers checked against the OpenAPI document once the API is on (answers while it is off are plain 404s). */
const answersChecked: string[] = [];

/** An admin call; every JSON answer is validated against the API's own OpenAPI document. */
async function admin(path: string, token: string | undefined, init: { method?: string; body?: unknown } = {}, base = gateway.url): Promise<Response> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (init.body !== undefined) headers["content-type"] = "application/json";
  const method = init.method ?? "GET";
  const url = new URL(`${base}/admin/v1${path}`);
  const response = await fetch(url, { method, headers, body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  if (openApi && response.headers.get("content-type")?.startsWith("application/json")) {
    const problems = openApi.problems(method, url.pathname, response.status, await response.clone().json());
    if (problems.length > 0) throw new Error(`${method} ${url.pathname} ${response.status} does not match the OpenAPI document: ${problems.join("; ")}`);
    answersChecked.push(`${method} ${url.pathname} ${response.status}`);
  }
  return response;
}

async function createToken(name: string, extra: string[] = []): Promise<string> {
  const created = await gw(["admin", "token", "create", "--name", name, "--json", ...extra], { home });
  if (created.code !== 0) throw new Error(created.stderr);
  return json<{ token: string }>(created).token;
}

let writer: string;
let reader: string;

test.serial("off until an admin token exists: /admin answers 404 as an unknown path", async (t) => {
  const response = await admin("/agents", undefined);
  t.is(response.status, 404);
  t.is(((await response.json()) as { error: { code: string } }).error.code, "not_found");
});

test.serial("gw admin token create shows the token once; list shows name and prefix, never the token or its hash", async (t) => {
  writer = await createToken("ops");
  t.regex(writer, /^gwa_[0-9A-Za-z]{43}$/);
  reader = await createToken("dashboard", ["--read-only", "--expires", "30d"]);
  const listed = await gw(["admin", "token", "list", "--json"], { home });
  t.is(listed.code, 0, listed.stderr);
  const tokens = json<Array<{ name: string; prefix: string; readOnly: boolean; expiresAt: string | null }>>(listed);
  t.deepEqual(
    tokens.map((token) => [token.name, token.readOnly, token.expiresAt !== null]),
    [
      ["ops", false, false],
      ["dashboard", true, true],
    ],
  );
  t.is(tokens[0]!.prefix, writer.slice(0, 12));
  t.false(listed.stdout.includes(writer) || listed.stdout.includes(reader));
  const table = await gw(["admin", "token", "list"], { home });
  t.regex(table.stdout, /dashboard\s+gwa_\S+\s+read-only/);
  const duplicate = await gw(["admin", "token", "create", "--name", "ops"], { home });
  t.is(duplicate.code, 1);
  t.regex(duplicate.stderr, /already exists/);
});

test.serial("GET /admin/v1/openapi.json serves the OpenAPI document every later answer is validated against", async (t) => {
  const response = await admin("/openapi.json", writer);
  t.is(response.status, 200);
  const document = (await response.json()) as ConstructorParameters<typeof OpenApiAnswers>[0] & { openapi: string };
  t.is(document.openapi, "3.1.0");
  openApi = new OpenApiAnswers(document);
  // The document in docs/ is the one served.
  t.deepEqual(JSON.parse(readFileSync(new URL("../docs/admin-openapi.json", import.meta.url), "utf8")), document);
});

test.serial("on once a token exists: the token reads who it is; no token, a wrong one or an API key is a 401", async (t) => {
  const me = await admin("/me", writer);
  t.is(me.status, 200);
  t.like(await me.json(), { object: "admin_token", name: "ops", readOnly: false, prefix: writer.slice(0, 12) });
  const none = await admin("/agents", undefined);
  t.is(none.status, 401);
  t.is(none.headers.get("www-authenticate"), "Bearer");
  t.like(await none.json(), { error: { type: "authentication_error", code: "invalid_admin_token" } });
  const wrong = await admin("/agents", `gwa_${"x".repeat(43)}`);
  t.is(wrong.status, 401);
  const withKey = await admin("/agents", apiKey);
  t.is(withKey.status, 401);
  t.regex(((await withKey.json()) as { error: { message: string } }).error.message, /An API key cannot open the admin API/);
});

test.serial("an admin token never reaches the model endpoints", async (t) => {
  const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: writer, maxRetries: 0 });
  const error = await t.throwsAsync(client.chat.completions.create({ model: "m/x", messages: [{ role: "user", content: "hi" }] }));
  t.is((error as { status?: number }).status, 401);
  t.is(fake.requests.length, 0);
});

test.serial("keys made, changed and revoked through the API are the ones gw keys list shows, and work at once", async (t) => {
  const created = await admin("/keys", writer, { method: "POST", body: { agent: "api-made", plan: "pro", name: "from the api", rpm: 30, models: ["m/*"] } });
  t.is(created.status, 201);
  t.is(created.headers.get("cache-control"), "no-store");
  const key = (await created.json()) as { key: string; id: string; prefix: string; agent: string; plan: string; rpm: number; models: string[] };
  t.like(key, { agent: "api-made", plan: "pro", rpm: 30, models: ["m/*"], name: "from the api" });
  t.regex(key.key, /^gw_/);
  const works = await fetch(`${gateway.url}/v1/key`, { headers: { authorization: `Bearer ${key.key}` } });
  t.is(works.status, 200);

  const cli = json<Array<{ id: string; prefix: string; rpm: number; name: string }>>(await gw(["keys", "list", "--json"], { home }));
  t.like(
    cli.find((listed) => listed.id === key.id),
    { prefix: key.prefix, rpm: 30, name: "from the api" },
  );
  const listed = (await (await admin("/keys?agent=api-made", writer)).json()) as { data: Array<Record<string, unknown>> };
  t.is(listed.data.length, 1);
  t.false(JSON.stringify(listed).includes(key.key), "a key is shown once, at its creation");
  t.false("hash" in listed.data[0]!);

  const changed = await admin(`/keys/${key.prefix}`, writer, { method: "PATCH", body: { rpm: null, budget: { credits: 5000 } } });
  t.is(changed.status, 200);
  t.like(await changed.json(), { rpm: null, budget: { credits: 5000, period: "month" } });

  const revoked = await admin(`/keys/${key.id}`, writer, { method: "DELETE" });
  t.is(revoked.status, 200);
  t.truthy(((await revoked.json()) as { revokedAt: string | null }).revokedAt);
  const refused = await fetch(`${gateway.url}/v1/key`, { headers: { authorization: `Bearer ${key.key}` } });
  t.is(refused.status, 401);
  t.is((await admin(`/keys/${key.id}`, writer, { method: "DELETE" })).status, 404);
});

test.serial("bad bodies are 400s naming the field; an unknown plan or agent says which", async (t) => {
  const cases: Array<[string, string, unknown, number, string]> = [
    ["POST", "/keys", { agent: "a", rpm: 0 }, 400, "rpm"],
    ["POST", "/keys", { agent: "a", expiresAt: "2001-01-01T00:00:00Z" }, 400, "expiresAt"],
    ["POST", "/keys", { agent: "a", plan: "platinum" }, 400, "plan"],
    ["POST", "/keys", { agent: "a", apiKey: "x" }, 400, "apiKey"],
    ["POST", "/keys", { agent: "a", cacheTtlSeconds: 10 ** 9 }, 400, "cacheTtlSeconds"],
    ["POST", "/agents", { plan: "pro" }, 400, "name"],
  ];
  for (const [method, path, body, status, param] of cases) {
    const response = await admin(path, writer, { method, body });
    t.is(response.status, status, `${method} ${path} ${JSON.stringify(body)}`);
    t.is(((await response.json()) as { error: { param?: string } }).error.param, param);
  }
  const missing = await admin("/agents/nobody", writer, { method: "PATCH", body: { plan: "pro" } });
  t.is(missing.status, 404);
  const taken = await admin("/agents", writer, { method: "POST", body: { name: "existing-agent" } });
  t.is(taken.status, 409);
  t.is((await admin("/keys?agent=nobody", writer)).status, 404);
});

test.serial("agents: create, list with live key counts, move to another plan", async (t) => {
  const created = await admin("/agents", writer, { method: "POST", body: { name: "team-b", plan: "free" } });
  t.is(created.status, 201);
  t.like(await created.json(), { name: "team-b", plan: "free", activeKeys: 0 });
  const moved = await admin("/agents/team-b", writer, { method: "PATCH", body: { plan: "pro" } });
  t.like(await moved.json(), { name: "team-b", plan: "pro" });
  const list = (await (await admin("/agents", writer)).json()) as { data: Array<{ name: string; activeKeys: number }> };
  t.like(
    list.data.find((agent) => agent.name === "existing-agent"),
    { activeKeys: 1 },
  );
  const cli = json<Array<{ name: string; plan: string }>>(await gw(["agents", "list", "--json"], { home }));
  t.like(
    cli.find((agent) => agent.name === "team-b"),
    { plan: "pro" },
  );
});

test.serial("a read-only token reads everything and changes nothing", async (t) => {
  t.is((await admin("/keys", reader)).status, 200);
  t.is((await admin("/plans", reader)).status, 200);
  const refused = await admin("/keys", reader, { method: "POST", body: { agent: "ro-made" } });
  t.is(refused.status, 403);
  t.like(await refused.json(), { error: { code: "admin_read_only" } });
  t.is((await admin("/agents", reader, { method: "POST", body: { name: "ro-agent" } })).status, 403);
  const agents = json<Array<{ name: string }>>(await gw(["agents", "list", "--json"], { home }));
  t.false(agents.some((agent) => agent.name === "ro-made" || agent.name === "ro-agent"));
});

test.serial("providers are listed with their secrets masked; health counts this instance's attempts", async (t) => {
  fake.enqueue({ usage: { prompt_tokens: 3, completion_tokens: 2 } });
  const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey, maxRetries: 0 });
  await client.chat.completions.create({ model: "m/x", max_tokens: 5, messages: [{ role: "user", content: "hi" }] });
  const providers = await admin("/providers", writer);
  const text = await providers.text();
  t.false(text.includes(UPSTREAM_KEY));
  t.false(text.includes("secret-header-value"));
  t.like((JSON.parse(text) as { data: unknown[] }).data[0], { name: "up", type: "openai", apiKey: "****", headers: { "x-attribution": "****" } });
  const health = (await (await admin("/providers/health", writer)).json()) as {
    data: Array<{ name: string; breaker: string; attempts: number; p50Ms: number }>;
  };
  t.like(health.data[0], { name: "up", breaker: "closed", attempts: 1, failures: 0 });
  t.true(health.data[0]!.p50Ms >= 0);
  const routes = (await (await admin("/routes", writer)).json()) as { data: Array<{ prefix: string }> };
  t.is(routes.data[0]!.prefix, "m/");
  const plans = (await (await admin("/plans", writer)).json()) as { data: Array<{ name: string; monthlyCredits: number }> };
  t.true(plans.data.some((plan) => plan.name === "pro" && plan.monthlyCredits > 0));
});

test.serial("usage reports: the same documents as gw usage --format json|csv, with its ranges, groups and tag filters", async (t) => {
  const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey, maxRetries: 0 });
  for (const tags of ["team:a", "team:b", "team:a, nightly"]) {
    fake.enqueue({ usage: { prompt_tokens: 10, completion_tokens: 4 } });
    await client.chat.completions.create({ model: "m/x", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }, { headers: { "x-gw-tags": tags } });
  }
  const cases: Array<[string, string[]]> = [
    ["", []],
    ["?by=model", ["--by", "model"]],
    ["?by=tag&tag=team:a", ["--by", "tag", "--tag", "team:a"]],
    ["?agent=existing-agent&by=day", ["--agent", "existing-agent", "--by", "day"]],
  ];
  for (const [query, flags] of cases) {
    const response = await admin(`/usage${query}`, writer);
    t.is(response.status, 200, query);
    const cli = await gw(["usage", "--format", "json", ...flags], { home });
    t.is(cli.code, 0, cli.stderr);
    t.deepEqual(await response.json(), JSON.parse(cli.stdout), query);
  }
  const csv = await admin("/usage?format=csv&tag=nightly", writer);
  t.is(csv.headers.get("content-type"), "text/csv; charset=utf-8");
  t.regex(csv.headers.get("content-disposition") ?? "", /attachment; filename="usage-\d{4}-\d{2}\.csv"/);
  const text = await csv.text();
  t.is(text, (await gw(["usage", "--format", "csv", "--tag", "nightly"], { home })).stdout);
  t.is(text.trim().split("\n").length, 2, "the header and the one row tagged nightly");
  for (const [query, param] of [
    ["?period=2026-13", "period"],
    ["?since=2026-11-05&until=2026-11-01", "until"],
    ["?by=week", "by"],
    ["?format=xml", "format"],
    ["?tag=no%20spaces", "tag"],
    ["?period=2026-11&since=2026-11-01", "period"],
  ] as const) {
    const refused = await admin(`/usage${query}`, writer);
    t.is(refused.status, 400, query);
    t.is(((await refused.json()) as { error: { param: string } }).error.param, param, query);
  }
  t.is((await admin("/usage?agent=nobody", writer)).status, 404);
});

test.serial("storage per agent against its plan; batches and video jobs listed (empty until there are some)", async (t) => {
  const form = new FormData();
  form.append("file", new Blob([new Uint8Array(1234)]), "data.bin");
  const stored = await fetch(`${gateway.url}/v1/storage/upload`, { method: "POST", headers: { authorization: `Bearer ${apiKey}` }, body: form });
  t.is(stored.status, 201);
  const storage = (await (await admin("/storage?agent=existing-agent", writer)).json()) as { data: Array<Record<string, unknown>> };
  t.like(storage.data, [{ agent: "existing-agent", plan: "pro", usedBytes: 1234, operations: { used: 1 } }]);
  t.true((storage.data[0]!.limitBytes as number) > 1234);
  const all = (await (await admin("/storage", writer)).json()) as { data: unknown[] };
  t.true(all.data.length >= 3);
  t.deepEqual(await (await admin("/batches", writer)).json(), { object: "list", data: [] });
  t.deepEqual(await (await admin("/video/jobs?limit=5", writer)).json(), { object: "list", data: [] });
  t.is((await admin("/batches?limit=5000", writer)).status, 400);
  t.is((await admin("/storage?agent=nobody", writer)).status, 404);
});

test.serial("every admin call is in the audit log: who, what, when, from where; never a token or a key", async (t) => {
  const audit = (await (await admin("/audit?limit=200", writer)).json()) as {
    data: Array<{ actor?: { name: string }; method: string; path: string; status: number; remote: string; action?: string; target?: string; time: string }>;
  };
  const creation = audit.data.find((entry) => entry.action === "keys.create");
  t.like(creation, { actor: { name: "ops" }, method: "POST", path: "/admin/v1/keys", status: 201 });
  t.regex(creation!.target!, /^key_/);
  t.regex(creation!.remote, /127\.0\.0\.1/);
  t.true(audit.data.some((entry) => entry.actor?.name === "dashboard" && entry.status === 403 && entry.method === "POST"));
  t.true(audit.data.some((entry) => entry.actor === undefined && entry.status === 401));
  t.true(audit.data.some((entry) => entry.action === "keys.revoke"));
  // Newest first.
  t.true(audit.data[0]!.time >= audit.data.at(-1)!.time);
  const directory = `${homePaths(home).dataDir}/audit`;
  const stored = readdirSync(directory)
    .map((name) => readFileSync(`${directory}/${name}`, "utf8"))
    .join("");
  for (const secret of [writer, reader, apiKey, UPSTREAM_KEY]) t.false(stored.includes(secret));
  t.is((await admin("/audit?limit=0", writer)).status, 400);
});

test.serial("only loopback and admin.allowFrom reach the admin API", async (t) => {
  const otherHome = await makeHome((config) => {
    config.admin = { allowFrom: ["10.1.0.0/16"] };
  });
  const token = json<{ token: string }>(await gw(["admin", "token", "create", "--name", "remote-ops", "--json"], { home: otherHome })).token;
  for (const [address, status] of [
    ["10.1.2.3", 200],
    ["::ffff:10.1.2.3", 200],
    ["10.2.0.1", 403],
    ["203.0.113.9", 403],
  ] as const) {
    const server = await startServer({ home: otherHome, host: "127.0.0.1", port: 0, logger: quietLogger, adminPeerAddress: address });
    try {
      const response = await admin("/agents", token, {}, server.url);
      t.is(response.status, status, address);
      if (status === 403) t.like(await response.json(), { error: { code: "admin_address_refused" } });
    } finally {
      await server.shutdown();
    }
  }
});

test.serial("provisioning commands pointed at the gateway with --url and an admin token use its admin API, not a home", async (t) => {
  // A machine with no gw home at all: everything goes through the gateway.
  const elsewhere = { home: `${homePaths(home).dataDir}/../../no-home-here`, env: { GW_ADMIN_URL: gateway.url, GW_ADMIN_TOKEN: writer } };
  const created = await gw(["keys", "create", "--agent", "remote-made", "--plan", "pro", "--rpm", "12", "--json"], elsewhere);
  t.is(created.code, 0, created.stderr);
  const key = json<{ key: string; prefix: string; agent: string; plan: string; rpm: number }>(created);
  t.like(key, { agent: "remote-made", plan: "pro", rpm: 12 });
  t.is((await fetch(`${gateway.url}/v1/key`, { headers: { authorization: `Bearer ${key.key}` } })).status, 200);

  const remoteList = json<Array<{ prefix: string; rpm: number }>>(await gw(["keys", "list", "--agent", "remote-made", "--json"], elsewhere));
  const localList = json<Array<{ prefix: string; rpm: number }>>(await gw(["keys", "list", "--agent", "remote-made", "--json"], { home }));
  t.deepEqual(remoteList, localList, "the API and the home answer the same listing");

  const changed = await gw(["keys", "set", key.prefix, "--budget", "900", "--budget-period", "total", "--json"], elsewhere);
  t.is(changed.code, 0, changed.stderr);
  t.like(json(changed), { budget: { credits: 900, period: "total" } });
  const amountOnly = await gw(["keys", "set", key.prefix, "--budget", "800", "--json"], elsewhere);
  t.like(json(amountOnly), { budget: { credits: 800, period: "total" } }, "the period is kept when only the amount changes");

  const agent = await gw(["agents", "create", "remote-agent", "--plan", "max", "--json"], elsewhere);
  t.is(agent.code, 0, agent.stderr);
  t.like(json(agent), { name: "remote-agent", plan: "max" });
  const agents = json<Array<{ name: string }>>(await gw(["agents", "list", "--json"], elsewhere));
  t.true(agents.some((listed) => listed.name === "remote-agent"));
  const plans = json<Array<{ name: string }>>(await gw(["plans", "list", "--json"], elsewhere));
  t.deepEqual(
    plans.map((plan) => plan.name),
    json<Array<{ name: string }>>(await gw(["plans", "list", "--json"], { home })).map((plan) => plan.name),
  );

  const remoteCsv = await gw(["usage", "--format", "csv", "--by", "model"], elsewhere);
  t.is(remoteCsv.code, 0, remoteCsv.stderr);
  t.is(remoteCsv.stdout, (await gw(["usage", "--format", "csv", "--by", "model"], { home })).stdout);
  const remoteTable = await gw(["usage"], elsewhere);
  t.is(remoteTable.code, 2);
  t.regex(remoteTable.stderr, /--format json or --format csv/);

  const revoked = await gw(["keys", "revoke", key.prefix], elsewhere);
  t.is(revoked.code, 0, revoked.stderr);
  t.is((await fetch(`${gateway.url}/v1/key`, { headers: { authorization: `Bearer ${key.key}` } })).status, 401);

  const readOnly = await gw(["keys", "create", "--agent", "x", "--admin-token", reader], elsewhere);
  t.is(readOnly.code, 1);
  t.regex(readOnly.stderr, /read-only/);
  const noToken = await gw(["agents", "list", "--url", gateway.url], { home: elsewhere.home });
  t.is(noToken.code, 2);
  t.regex(noToken.stderr, /GW_ADMIN_TOKEN/);
});

test.serial("revoking the last live token turns the admin API off again", async (t) => {
  t.is((await gw(["admin", "token", "revoke", "dashboard"], { home })).code, 0);
  t.is((await admin("/me", reader)).status, 401);
  const last = await gw(["admin", "token", "revoke", "ops"], { home });
  t.is(last.code, 0);
  t.regex(last.stderr, /admin API and console are off/);
  t.is((await admin("/me", writer)).status, 404);
  // Every kind of answer was checked against the document on the way.
  for (const expected of [
    "GET /admin/v1/keys 200",
    "POST /admin/v1/keys 201",
    "PATCH /admin/v1/keys/",
    "DELETE /admin/v1/keys/",
    "GET /admin/v1/audit 200",
    "GET /admin/v1/providers/health 200",
    "POST /admin/v1/keys 403",
    "POST /admin/v1/keys 400",
  ])
    t.true(
      answersChecked.some((answer) => answer.startsWith(expected)),
      expected,
    );
});
