// Who may use the web console and how (docs/decisions.md §27), over plain HTTP as a browser or an
// attacker's page would send it: off (404 as any unknown path) until an admin token exists; a signed
// session cookie (HttpOnly, SameSite=Strict, Path=/console, Secure over HTTPS) from signing in with
// an admin token, accepted by every instance of the home and ended at once when the token is
// revoked; no page without one; every POST refused when cross-site or without the session's CSRF
// token; read-only sessions change nothing; the admin API's address rule; the security headers on
// every console answer; console changes in the audit log.
import test from "ava";
import { Agent, fetch as undiciFetch } from "undici";
import { type RunningServer, startServer } from "../src/server/start-server.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { addKey, editHomeConfig, gw, json, makeHome, quietLogger, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const PAGES = ["/console", "/console/keys", "/console/usage", "/console/requests", "/console/jobs", "/console/providers", "/console/playground"];
const FORM = "application/x-www-form-urlencoded";

let fake: FakeOpenAI;
let home: string;
let gateway: TestGateway;
let writer: string;
let reader: string;

test.before(async () => {
  fake = await startFakeOpenAI();
  home = await makeHome((config) => {
    config.providers = { up: { type: "openai", baseUrl: fake.url, apiKey: "sk-upstream" } };
    config.routes = [{ prefix: "fake/", provider: "up", priority: 1 }];
    config.models = [{ id: "fake/x", name: "X", context_length: 8000, pricing: { input_per_mtok: 1, output_per_mtok: 1 } }];
  });
  gateway = await startTestGateway(home);
});

test.after.always(async () => {
  await gateway?.shutdown();
  await fake?.close();
});

async function createToken(name: string, extra: string[] = []): Promise<string> {
  const created = await gw(["admin", "token", "create", "--name", name, "--json", ...extra], { home });
  if (created.code !== 0) throw new Error(created.stderr);
  return json<{ token: string }>(created).token;
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

async function send(
  path: string,
  init: { method?: string; cookie?: string; form?: Record<string, string>; headers?: Record<string, string> } = {},
  base = gateway.url,
): Promise<Answer> {
  const headers: Record<string, string> = { ...init.headers };
  if (init.cookie) headers.cookie = init.cookie;
  if (init.form) headers["content-type"] = FORM;
  const response = await fetch(`${base}${path}`, {
    method: init.method ?? (init.form ? "POST" : "GET"),
    headers,
    body: init.form ? new URLSearchParams(init.form) : undefined,
    redirect: "manual",
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** Sign in as a browser on the console's own page would: same-origin. Returns the cookie to send back. */
async function signIn(token: string, base = gateway.url): Promise<string> {
  const answer = await send("/console/sign-in", { form: { token }, headers: { origin: base, "sec-fetch-site": "same-origin" } }, base);
  if (answer.status !== 303) throw new Error(`sign-in answered ${answer.status}: ${answer.text}`);
  return answer.headers.getSetCookie()[0]!.split(";")[0]!;
}

function csrfOf(page: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(page);
  if (!match) throw new Error("no CSRF field on the page");
  return match[1]!;
}

const sameSite = (base = gateway.url) => ({ origin: base, "sec-fetch-site": "same-origin" });

test.serial("off until an admin token exists: every /console path answers 404 exactly as an unknown path", async (t) => {
  const unknown = await send("/no-such-path");
  for (const path of ["/console", "/console/sign-in", "/console/keys", "/console/assets/x/console.css"]) {
    const answer = await send(path);
    t.is(answer.status, 404, path);
    t.deepEqual(JSON.parse(answer.text), JSON.parse(unknown.text.replace("/no-such-path", path)), path);
    t.is(answer.headers.get("content-security-policy"), null, "nothing says a console is there");
  }
  const post = await send("/console/sign-in", { form: { token: "gwa_x" } });
  t.is(post.status, 404);
});

test.serial("no page without a session: pages redirect to sign-in, a POST is 401, a forged cookie is cleared", async (t) => {
  writer = await createToken("ops");
  reader = await createToken("viewer", ["--read-only"]);
  for (const path of PAGES) {
    const answer = await send(path);
    t.is(answer.status, 303, path);
    t.is(answer.headers.get("location"), "/console/sign-in", path);
  }
  const post = await send("/console/keys", { form: { agent: "x" }, headers: sameSite() });
  t.is(post.status, 401);
  t.false(json<Array<{ name: string }>>(await gw(["agents", "list", "--json"], { home })).some((agent) => agent.name === "x"));
  const cookie = await signIn(writer);
  const [name, value] = cookie.split("=") as [string, string];
  const forged = `${name}=${value.slice(0, -4)}AAAA`;
  const answer = await send("/console", { cookie: forged });
  t.is(answer.status, 303);
  t.regex(answer.headers.getSetCookie()[0] ?? "", /^gw_console=; Max-Age=0; Path=\/console/);
  const otherToken = value.replace(/adm_[0-9A-Za-z]+/, "adm_01AAAAAAAAAAAAAAAAAAAAAAAA");
  t.is((await send("/console", { cookie: `${name}=${otherToken}` })).status, 303, "the token id is signed too");
});

test.serial("sign-in takes a live admin token only and sets an HttpOnly, SameSite=Strict session cookie for /console", async (t) => {
  const apiKey = await addKey(home, "someone", "pro");
  for (const token of ["", `gwa_${"x".repeat(43)}`, apiKey]) {
    const answer = await send("/console/sign-in", { form: { token }, headers: sameSite() });
    t.is(answer.status, 401, token);
    t.regex(answer.text, /not an admin token of this gateway/);
    t.deepEqual(answer.headers.getSetCookie(), []);
    t.false(answer.text.includes(apiKey), "the presented value is never echoed");
  }
  const answer = await send("/console/sign-in", { form: { token: writer }, headers: sameSite() });
  t.is(answer.status, 303);
  t.is(answer.headers.get("location"), "/console");
  const cookie = answer.headers.getSetCookie()[0]!;
  t.regex(cookie, /^gw_console=v1\.adm_[0-9A-Za-z]+\.\d+\.[\w-]+\.[\w-]+; Max-Age=43200; Path=\/console; HttpOnly; SameSite=Strict$/);
  t.false(cookie.includes(writer.slice(4)), "the cookie holds no part of the token");
  const page = await send("/console", { cookie: cookie.split(";")[0] });
  t.is(page.status, 200);
  t.regex(page.text, /<span class="token"[^>]*>ops<\/span>/);
  // Already signed in: the sign-in page sends you on.
  t.is((await send("/console/sign-in", { cookie: cookie.split(";")[0] })).status, 303);
});

test.serial("the Content-Security-Policy and the other security headers are on every console answer", async (t) => {
  const cookie = await signIn(writer);
  const answers: Array<[string, Answer]> = [];
  for (const path of [...PAGES, "/console/sign-in", "/console/nope"]) answers.push([path, await send(path, { cookie })]);
  answers.push(["a refused POST", await send("/console/keys", { cookie, form: {}, headers: sameSite() })]);
  answers.push(["signed out", await send("/console/keys")]);
  for (const [what, answer] of answers) {
    t.is(answer.headers.get("content-security-policy"), CSP, what);
    t.is(answer.headers.get("x-content-type-options"), "nosniff", what);
    t.is(answer.headers.get("referrer-policy"), "no-referrer", what);
    t.is(answer.headers.get("cache-control"), "no-store", what);
  }
  t.is(answers.find(([what]) => what === "/console/nope")![1].status, 404);
  t.false(
    answers.some(([, answer]) => /\sstyle="|<style[\s>]|<script>/.test(answer.text)),
    "no inline style or script",
  );
  // Assets: the package's files, with their type and a year's cache under the hashed URL.
  const page = answers[0]![1].text;
  const assetUrls = [...page.matchAll(/(?:href|src)="(\/console\/assets\/[^"]+)"/g)].map((match) => match[1]!);
  t.true(assetUrls.length >= 4, assetUrls.join(" "));
  for (const url of assetUrls) {
    const asset = await send(url);
    t.is(asset.status, 200, url);
    t.is(asset.headers.get("content-type"), url.endsWith(".css") ? "text/css; charset=utf-8" : "text/javascript; charset=utf-8", url);
    t.is(asset.headers.get("cache-control"), "public, max-age=31536000, immutable", url);
    t.is(asset.headers.get("content-security-policy"), CSP, url);
  }
  t.is((await send("/console/assets/0/console.js")).headers.get("cache-control"), "no-cache", "another version's URL is not cached");
  t.is((await send(assetUrls[0]!.replace(/[^/]+$/, "package.json"))).status, 404);
});

test.serial("a cross-site or token-less POST is refused 403 and changes nothing", async (t) => {
  const cookie = await signIn(writer);
  const csrf = csrfOf((await send("/console/keys", { cookie })).text);
  const otherCsrf = csrfOf((await send("/console/keys", { cookie: await signIn(writer) })).text);
  t.not(csrf, otherCsrf, "each session has its own CSRF token");
  const attempts: Array<[string, Record<string, string>, Record<string, string>]> = [
    ["a foreign Origin", { _csrf: csrf }, { origin: "https://evil.example", "sec-fetch-site": "cross-site" }],
    ["a foreign Origin with no Sec-Fetch-Site", { _csrf: csrf }, { origin: "http://127.0.0.1:1" }],
    ["Origin null from another site's sandboxed frame", { _csrf: csrf }, { origin: "null", "sec-fetch-site": "cross-site" }],
    ["Sec-Fetch-Site cross-site", { _csrf: csrf }, { "sec-fetch-site": "cross-site" }],
    ["Sec-Fetch-Site same-site", { _csrf: csrf }, { "sec-fetch-site": "same-site" }],
    ["no CSRF token", {}, sameSite()],
    ["a wrong CSRF token", { _csrf: "x".repeat(43) }, sameSite()],
    ["another session's CSRF token", { _csrf: otherCsrf }, sameSite()],
  ];
  for (const [what, fields, headers] of attempts) {
    const answer = await send("/console/keys", { cookie, form: { ...fields, agent: "csrf-victim" }, headers });
    t.is(answer.status, 403, what);
    t.regex(answer.text, /another site|CSRF token/, what);
  }
  const signInFromElsewhere = await send("/console/sign-in", { form: { token: writer }, headers: { origin: "https://evil.example" } });
  t.is(signInFromElsewhere.status, 403);
  t.deepEqual(signInFromElsewhere.headers.getSetCookie(), []);
  const agents = json<Array<{ name: string }>>(await gw(["agents", "list", "--json"], { home }));
  t.false(
    agents.some((agent) => agent.name === "csrf-victim"),
    "no key or agent was made",
  );
  // The same POST from the console's own page goes through (the header form of the token too).
  const made = await send("/console/keys", { cookie, form: { agent: "csrf-victim" }, headers: { ...sameSite(), "x-gw-csrf": csrf } });
  t.is(made.status, 201);
  t.regex(made.text, /<output id="new-key">gw_[0-9A-Za-z]+<\/output>/);
});

test.serial("what the pages show is escaped: a hostile agent name or query value stays text", async (t) => {
  const cookie = await signIn(writer);
  const csrf = csrfOf((await send("/console/keys", { cookie })).text);
  const hostile = `<img src=x onerror=alert(1)>"'&`;
  const made = await send("/console/keys", { cookie, form: { _csrf: csrf, agent: hostile, name: "</script><script>alert(2)</script>" }, headers: sameSite() });
  t.is(made.status, 201);
  const escaped = "&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;";
  for (const path of [
    "/console",
    "/console/keys",
    "/console/usage",
    `/console/usage?${new URLSearchParams({ agent: hostile, model: hostile, since: hostile })}`,
  ]) {
    const page = await send(path, { cookie });
    t.is(page.status, 200, path);
    t.false(page.text.includes("<img src=x"), path);
    t.false(page.text.includes("<script>alert"), path);
    t.true(page.text.includes(escaped), path);
  }
  const revoke = json<Array<{ id: string; agent: string }>>(await gw(["keys", "list", "--json"], { home })).find((key) => key.agent === hostile)!;
  t.is((await send("/console/keys/revoke", { cookie, form: { _csrf: csrf, key: revoke.id }, headers: sameSite() })).status, 303);
});

test.serial("a read-only session sees every page without a form that changes anything, and its POSTs are refused 403", async (t) => {
  const cookie = await signIn(reader);
  for (const path of PAGES) {
    const page = await send(path, { cookie });
    t.is(page.status, 200, path);
    t.false(/action="\/console\/keys/.test(page.text), `${path} has no key form`);
  }
  const keys = await send("/console/keys", { cookie });
  t.regex(keys.text, /read-only/);
  t.regex(keys.text, /<table class="keys"/, "the keys are listed");
  const csrf = csrfOf(keys.text);
  const live = json<Array<{ id: string; revokedAt: string | null }>>(await gw(["keys", "list", "--json"], { home }));
  const create = await send("/console/keys", { cookie, form: { _csrf: csrf, agent: "read-only-made" }, headers: sameSite() });
  t.is(create.status, 403);
  t.regex(create.text, /read-only/);
  const revoke = await send("/console/keys/revoke", { cookie, form: { _csrf: csrf, key: live[0]!.id }, headers: sameSite() });
  t.is(revoke.status, 403);
  const after = json<Array<{ id: string; revokedAt: string | null }>>(await gw(["keys", "list", "--json"], { home }));
  t.deepEqual(after, live, "nothing changed");
  // Signing out is not a change: a read-only session may.
  const out = await send("/console/sign-out", { cookie, form: { _csrf: csrf }, headers: sameSite() });
  t.is(out.status, 303);
  t.regex(out.headers.getSetCookie()[0] ?? "", /^gw_console=; Max-Age=0/);
});

test.serial("revoking the admin token ends its sessions at once", async (t) => {
  const token = await createToken("short-lived");
  const cookie = await signIn(token);
  t.is((await send("/console", { cookie })).status, 200);
  const revoked = await gw(["admin", "token", "revoke", "short-lived"], { home });
  t.is(revoked.code, 0, revoked.stderr);
  const answer = await send("/console", { cookie });
  t.is(answer.status, 303);
  t.is(answer.headers.get("location"), "/console/sign-in");
  t.is((await send("/console/sign-in", { form: { token }, headers: sameSite() })).status, 401);
});

test.serial("console changes are in the audit log like admin API calls: who, what, to what; refusals too", async (t) => {
  const cookie = await signIn(writer);
  const csrf = csrfOf((await send("/console/keys", { cookie })).text);
  const made = await send("/console/keys", { cookie, form: { _csrf: csrf, agent: "audited" }, headers: sameSite() });
  t.is(made.status, 201);
  const key = /<output id="new-key">(gw_[0-9A-Za-z]+)<\/output>/.exec(made.text)![1]!;
  const listed = json<Array<{ id: string; prefix: string }>>(await gw(["keys", "list", "--json"], { home })).find((entry) => key.startsWith(entry.prefix))!;
  t.truthy(listed);
  const revoke = await send("/console/keys/revoke", { cookie, form: { _csrf: csrf, key: listed.id }, headers: sameSite() });
  t.is(revoke.status, 303);
  await send("/console/keys", { cookie, form: { agent: "no-csrf" }, headers: sameSite() });
  const audit = await fetch(`${gateway.url}/admin/v1/audit?limit=50`, { headers: { authorization: `Bearer ${writer}` } });
  const entries = (
    (await audit.json()) as { data: Array<{ path: string; method: string; status: number; action?: string; target?: string; actor?: { name: string } }> }
  ).data;
  const consoleEntries = entries.filter((entry) => entry.path.startsWith("/console"));
  t.like(
    consoleEntries.find((entry) => entry.action === "keys.create" && entry.target === listed.id),
    { method: "POST", path: "/console/keys", status: 201, actor: { name: "ops" } },
  );
  t.like(
    consoleEntries.find((entry) => entry.action === "keys.revoke" && entry.target === listed.id),
    { method: "POST", path: "/console/keys/revoke", status: 303, actor: { name: "ops" } },
  );
  t.true(consoleEntries.some((entry) => entry.action === "console.sign_in" && entry.actor?.name === "ops"));
  t.true(
    consoleEntries.some((entry) => entry.status === 403 && entry.action === undefined),
    "the refused POST is audited too",
  );
  t.false(JSON.stringify(entries).includes(key), "never the key");
  t.false(JSON.stringify(entries).includes(writer), "never the token");
  t.false(
    consoleEntries.some((entry) => entry.method === "GET"),
    "reading pages is not audited",
  );
});

test.serial("the admin API's address rule: loopback and admin.allowFrom only", async (t) => {
  editHomeConfig(home, (config) => {
    config.admin = { allowFrom: ["10.0.0.0/8"] };
  });
  const servers: RunningServer[] = [];
  try {
    for (const [address, status] of [
      ["10.2.0.1", 303],
      ["203.0.113.9", 403],
    ] as const) {
      const server = await startServer({ home, host: "127.0.0.1", port: 0, logger: quietLogger, adminPeerAddress: address });
      servers.push(server);
      const answer = await send("/console", {}, server.url);
      t.is(answer.status, status, address);
      if (status === 403) {
        t.regex(answer.text, /loopback only/);
        t.is(answer.headers.get("content-type"), "text/html; charset=utf-8");
        t.is((await send("/console/sign-in", { form: { token: writer }, headers: sameSite(server.url) }, server.url)).status, 403);
      }
    }
  } finally {
    await Promise.all(servers.map((server) => server.shutdown()));
    editHomeConfig(home, (config) => {
      delete config.admin;
    });
  }
});

test.serial("a session signed on one instance works on another sharing the home's secret; HTTPS cookies are Secure", async (t) => {
  const cookie = await signIn(writer);
  const other = await startServer({ home, host: "127.0.0.1", port: 0, logger: quietLogger });
  const https = await startServer({ home, host: "127.0.0.1", port: 0, logger: quietLogger, tls: { selfSigned: true } });
  try {
    const page = await send("/console/keys", { cookie }, other.url);
    t.is(page.status, 200);
    t.regex(page.text, /Keys and agents/);
    const dispatcher = new Agent({ connect: { rejectUnauthorized: false } });
    const response = await undiciFetch(`${https.url}/console/sign-in`, {
      method: "POST",
      headers: { "content-type": FORM, origin: https.url, "sec-fetch-site": "same-origin" },
      body: new URLSearchParams({ token: writer }),
      redirect: "manual",
      dispatcher,
    });
    t.is(response.status, 303);
    t.regex(response.headers.getSetCookie()[0] ?? "", /; Path=\/console; HttpOnly; Secure; SameSite=Strict$/);
    await dispatcher.close();
  } finally {
    await other.shutdown();
    await https.shutdown();
  }
});
