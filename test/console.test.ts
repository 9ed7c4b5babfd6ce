// The web console in a real browser (headless Chromium, Debian's, driven by playwright-core;
// docs/decisions.md §27): signing in through the form, the overview's figures against
// `gw usage --json`, a key made in the console working at once and revoked at once, the usage
// export against `gw usage --format csv`, a streamed playground answer, and every page walked
// under its Content-Security-Policy with no violation or script error, also 360 px wide in dark
// mode. GW_CONSOLE_SCREENSHOTS=1 writes each page's picture to docs/console/.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import test from "ava";
import OpenAI from "openai";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { type FakeOpenAIImages, startFakeOpenAIImages } from "./fakes/openai-images.js";
import { addKey, gw, json, makeHome, projectRoot, quietLogger, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const PAGES = [
  ["overview", "/console"],
  ["keys", "/console/keys"],
  ["usage", "/console/usage"],
  ["requests", "/console/requests"],
  ["jobs", "/console/jobs"],
  ["providers", "/console/providers"],
  ["playground", "/console/playground"],
] as const;
const SCREENSHOTS = process.env.GW_CONSOLE_SCREENSHOTS === "1" ? path.join(projectRoot, "docs", "console") : null;

let fake: FakeOpenAI;
let images: FakeOpenAIImages;
let home: string;
let gateway: TestGateway;
let adminToken: string;
let alphaKey: string;
let betaKey: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** What the browser reported: console errors and warnings, uncaught exceptions, CSP violations. */
const problems: string[] = [];

/** Debian's chromium (install.sh installs it), found on PATH as a user's shell would. */
function chromiumPath(): string {
  for (const name of ["chromium", "chromium-browser"]) {
    try {
      return execFileSync("which", [name], { encoding: "utf8" }).trim();
    } catch {}
  }
  if (existsSync("/usr/bin/chromium")) return "/usr/bin/chromium";
  throw new Error("no chromium on this machine: install.sh installs Debian's (apt-get install chromium)");
}

function watch(target: Page): void {
  target.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") problems.push(`${target.url()}: console ${message.type()}: ${message.text()}`);
  });
  target.on("pageerror", (error) => problems.push(`${target.url()}: page error: ${error.message}`));
}

async function newContext(options: Parameters<Browser["newContext"]>[0] = {}): Promise<BrowserContext> {
  const made = await browser.newContext({ baseURL: gateway.url, acceptDownloads: true, ...options });
  // Violations are also reported to the console; the event says which directive, for the message.
  await made.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) => console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`));
  });
  made.on("page", watch);
  return made;
}

test.before(async () => {
  fake = await startFakeOpenAI();
  images = await startFakeOpenAIImages();
  home = await makeHome((config) => {
    config.upstream = { retries: 0 };
    config.providers = {
      up: { type: "openai", baseUrl: fake.url, apiKey: "sk-upstream" },
      openai: { type: "openai", baseUrl: images.url, apiKey: "sk-images" },
    };
    config.tools.image = { default: "openai/gpt-image-1", allow: [] };
    config.routes = [{ prefix: "fake/", provider: "up", priority: 1 }];
    config.models = [
      { id: "fake/chat", name: "Chat", context_length: 8000, pricing: { input_per_mtok: 3, output_per_mtok: 15 } },
      { id: "fake/mini", name: "Mini", context_length: 8000, pricing: { input_per_mtok: 1, output_per_mtok: 2 } },
    ];
  });
  gateway = await startTestGateway(home);
  alphaKey = await addKey(home, "alpha", "pro");
  betaKey = await addKey(home, "beta", "max");
  const created = await gw(["admin", "token", "create", "--name", "ops", "--json"], { home });
  if (created.code !== 0) throw new Error(created.stderr);
  adminToken = json<{ token: string }>(created).token;
  // A few billed calls, tagged and not, on two models and two agents.
  const calls: Array<[string, string, string, string | undefined]> = [
    [alphaKey, "fake/chat", "summarise the quarterly report", "customer:acme"],
    [alphaKey, "fake/chat", "and now in French, please", "customer:acme, team-x"],
    [alphaKey, "fake/mini", "hello, there", undefined],
    [betaKey, "fake/mini", "what is 2+2", "team-x"],
    [betaKey, "fake/chat", 'a "quoted", comma-laden prompt', undefined],
  ];
  for (const [key, model, content, tags] of calls) {
    const client = new OpenAI({ baseURL: gateway.v1, apiKey: key, maxRetries: 0, defaultHeaders: tags ? { "x-gw-tags": tags } : {} });
    await client.chat.completions.create({ model, messages: [{ role: "user", content }] });
  }
  browser = await chromium.launch({ executablePath: chromiumPath() });
  context = await newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  if (SCREENSHOTS) mkdirSync(SCREENSHOTS, { recursive: true });
});

test.after.always(async () => {
  await browser?.close();
  await gateway?.shutdown();
  await fake?.close();
  await images?.close();
});

async function screenshot(target: Page, name: string): Promise<void> {
  if (SCREENSHOTS) await target.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

test.serial("signing in with an admin token through the form opens the overview; the session cookie is HttpOnly and SameSite=Strict", async (t) => {
  const first = await page.goto("/console");
  t.is(new URL(page.url()).pathname, "/console/sign-in", "no page without a session");
  t.is(first?.headers()["content-security-policy"], CSP);
  await screenshot(page, "sign-in");
  await page.fill("#token", "gwa_not-a-token");
  await page.click("button[type=submit]");
  t.regex((await page.textContent("[role=alert]")) ?? "", /not an admin token/);
  // The refused sign-in's 401 is the one error the browser was meant to report.
  t.deepEqual(
    problems.splice(0).map((problem) => problem.replace(/^\S+ /, "")),
    ["console error: Failed to load resource: the server responded with a status of 401 ()"],
  );
  await page.fill("#token", adminToken);
  await Promise.all([page.waitForURL("**/console"), page.click("button[type=submit]")]);
  t.is(await page.textContent("h1"), "Overview");
  const [cookie] = await context.cookies();
  t.like(cookie, { name: "gw_console", path: "/console", httpOnly: true, sameSite: "Strict", secure: false });
  t.false(cookie!.value.includes(adminToken.slice(4)), "the cookie holds no part of the token");
});

test.serial("the overview's spend per agent and per model is what gw usage --json says; requests are this instance's", async (t) => {
  const requestsSoFar = quietLogger.accessRecords.filter((record) => !record.path.startsWith("/console")).length;
  await page.goto("/console");
  const usage = json<{ agents: Array<{ agent: string; used: number }> }>(await gw(["usage", "--json"], { home }));
  t.true(
    usage.agents.some((agent) => agent.used > 0),
    "there is spend to compare",
  );
  for (const agent of usage.agents) {
    t.is(await page.getAttribute(`tr[data-agent="${agent.agent}"] td[data-used]`, "data-used"), String(agent.used), agent.agent);
  }
  const total = usage.agents.reduce((sum, agent) => sum + agent.used, 0);
  t.is(await page.getAttribute("[data-figure=credits]", "data-value"), String(total));
  const byModel = json<{ groups: Array<{ model: string; credits: number }> }>(await gw(["usage", "--by", "model", "--json"], { home }));
  for (const group of byModel.groups) {
    t.is(await page.getAttribute(`#top-models tr[data-value="${group.model}"] td[data-credits]`, "data-credits"), String(group.credits), group.model);
  }
  t.is(await page.getAttribute("[data-figure=requests]", "data-value"), String(requestsSoFar));
  t.regex((await page.textContent(".cards")) ?? "", /of the last 500 requests on this instance/);
  t.is(await page.locator("[data-chart=spend-per-day] canvas").count(), 1, "uPlot drew the chart");
  await screenshot(page, "overview");
});

test.serial("a key created in the console is shown once, works at once, and stops working once revoked", async (t) => {
  await page.goto("/console/keys");
  await page.fill("input[name=agent]", "made-in-console");
  await page.selectOption("select[name=plan]", "pro");
  await page.fill("input[name=name]", "console key");
  await page.fill("input[name=budget]", "5000");
  await page.fill("input[name=models]", "fake/*");
  await page.fill("input[name=rpm]", "30");
  await page.click("form.create-key button[type=submit]");
  const key = ((await page.textContent("#new-key")) ?? "").trim();
  t.regex(key, /^gw_[0-9A-Za-z]{43,}$/);
  await screenshot(page, "keys-new");
  const works = await fetch(`${gateway.url}/v1/key`, { headers: { authorization: `Bearer ${key}` } });
  t.is(works.status, 200);
  const listed = json<Array<{ prefix: string; name: string; agent: string; plan: string; rpm: number; models: string[]; budget: { credits: number } }>>(
    await gw(["keys", "list", "--json"], { home }),
  ).find((entry) => key.startsWith(entry.prefix));
  t.like(listed, { name: "console key", agent: "made-in-console", plan: "pro", rpm: 30, models: ["fake/*"], budget: { credits: 5000 } });

  await page.goto("/console/keys");
  t.false((await page.content()).includes(key), "shown once: the list has its prefix only");
  const row = page.locator(`tr[data-key="${listed!.prefix}"]`);
  t.is(await row.count(), 1);
  await screenshot(page, "keys");
  page.once("dialog", (dialog) => void dialog.accept());
  await Promise.all([page.waitForURL(/revoked=/), row.locator("button", { hasText: "Revoke" }).click()]);
  t.regex((await page.textContent("[role=status]")) ?? "", /Revoked/);
  const refused = await fetch(`${gateway.url}/v1/key`, { headers: { authorization: `Bearer ${key}` } });
  t.is(refused.status, 401);
});

test.serial("the usage export downloads the rows gw usage --format csv writes, also filtered", async (t) => {
  await page.goto("/console/usage");
  await screenshot(page, "usage");
  const download = async (): Promise<string> => {
    const [file] = await Promise.all([page.waitForEvent("download"), page.click("text=Export CSV")]);
    return readFileSync((await file.path())!, "utf8");
  };
  const all = await gw(["usage", "--format", "csv"], { home });
  t.is(all.code, 0, all.stderr);
  t.is(all.stdout.trim().split("\n").length, 6, "the header and the five calls' rows");
  t.is(await download(), all.stdout);

  await page.selectOption("select[name=agent]", "alpha");
  await page.fill("input[name=tag]", "customer:acme");
  await Promise.all([page.waitForURL(/agent=alpha/), page.click("form.filters button[type=submit]")]);
  const filtered = await gw(["usage", "--agent", "alpha", "--tag", "customer:acme", "--format", "csv"], { home });
  t.is(filtered.stdout.trim().split("\n").length, 3);
  t.is(await download(), filtered.stdout);
  t.is(await page.locator("#usage-rows tbody tr").count(), 2, "the table shows the same rows");
  const response = await page.request.get(`/console/usage.csv?model=fake/mini`);
  t.is(response.headers()["content-type"], "text/csv; charset=utf-8");
  t.regex(response.headers()["content-disposition"] ?? "", /^attachment; filename="gw-usage-\d{4}-\d{2}-\d{2}-to-\d{4}-\d{2}-\d{2}\.csv"$/);
});

test.serial("the playground streams a chat answer into the page, with the pasted key sent to /v1 only", async (t) => {
  const sent: Array<{ url: string; headers: Record<string, string>; body: string | null }> = [];
  page.on("request", (request) => sent.push({ url: request.url(), headers: request.headers(), body: request.postData() }));
  await page.goto("/console/playground");
  await page.fill("#pg-key", alphaKey);
  await page.fill("#pg-model", "fake/chat");
  await page.fill("#pg-message", "tell me a story");
  fake.enqueue({ content: "Once upon a time there was a gateway.", chunkDelayMs: 40 });
  // Every text the answer showed, as it grew.
  await page.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { seen: string[] }).seen = seen;
    new MutationObserver(() => {
      const bubble = document.querySelector(".bubble.assistant");
      if (bubble && bubble.textContent !== seen.at(-1)) seen.push(bubble.textContent ?? "");
    }).observe(document.getElementById("pg-transcript")!, { subtree: true, childList: true, characterData: true });
  });
  await page.click("#pg-send");
  await page.waitForFunction(() => document.getElementById("pg-status")?.textContent?.startsWith("Done"));
  t.is(await page.textContent(".bubble.assistant"), "Once upon a time there was a gateway.");
  const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen);
  t.true(
    seen.filter((text) => text.length > 0 && text !== "Once upon a time there was a gateway.").length >= 2,
    `the answer grew as it streamed: ${JSON.stringify(seen)}`,
  );
  t.regex((await page.textContent("#pg-status")) ?? "", /Done: \d+ prompt and \d+ completion tokens/);
  t.true(fake.requests.at(-1)?.body.stream, "the upstream was asked for a stream");
  await screenshot(page, "playground");

  const chat = sent.filter((request) => request.url.endsWith("/v1/chat/completions"));
  t.is(chat.length, 1);
  t.is(chat[0]!.headers.authorization, `Bearer ${alphaKey}`);
  t.is(chat[0]!.headers.cookie, undefined, "the console session does not travel to the API");
  const elsewhere = sent.filter((request) => !request.url.includes("/v1/"));
  t.false(
    elsewhere.some((request) => JSON.stringify(request).includes(alphaKey)),
    "the key goes to the API only",
  );
  const stored = await page.evaluate(() => [localStorage.length, sessionStorage.length, document.cookie]);
  t.deepEqual(stored, [0, 0, ""]);
});

test.serial("the playground draws a picture from a prompt and shows what it cost", async (t) => {
  await page.goto("/console/playground");
  await page.fill("#pg-key", alphaKey);
  await page.fill("#pg-image-model", "openai/gpt-image-1");
  await page.selectOption("#pg-image-size", "1024x1024");
  await page.fill("#pg-image-prompt", "a lighthouse at dusk");
  await page.click("#pg-draw");
  await page.waitForFunction(() => !["", "Drawing…"].includes(document.getElementById("pg-image-status")?.textContent ?? ""));
  t.regex((await page.textContent("#pg-image-status")) ?? "", /^Done: [\d,]+ credits\.$/);
  const drawn = await page.evaluate(() => {
    const image = document.getElementById("pg-image") as HTMLImageElement;
    return { hidden: image.hidden, src: image.src.slice(0, 22), width: image.naturalWidth, alt: image.alt };
  });
  t.deepEqual(drawn, { hidden: false, src: "data:image/png;base64,", width: 1024, alt: "a lighthouse at dusk" });
  t.is(images.requests.at(-1)?.json.prompt, "a lighthouse at dusk");
  await screenshot(page, "playground-picture");
});

test.serial("every page carries the CSP, and the browser reports no violation or error on any, wide or 360 px in dark mode", async (t) => {
  for (const [name, pathname] of PAGES) {
    const response = await page.goto(pathname);
    t.is(response?.status(), 200, pathname);
    t.is(response?.headers()["content-security-policy"], CSP, pathname);
    t.is(response?.headers()["cache-control"], "no-store", pathname);
    if (name !== "overview" && name !== "keys" && name !== "usage" && name !== "playground") await screenshot(page, name);
  }
  const phone = await newContext({ viewport: { width: 360, height: 740 }, colorScheme: "dark", storageState: await context.storageState() });
  try {
    const small = await phone.newPage();
    for (const [name, pathname] of PAGES) {
      await small.goto(pathname);
      t.is((await small.textContent("h1")) !== null, true, pathname);
      const width = await small.evaluate(() => document.documentElement.scrollWidth);
      t.true(width <= 360, `${pathname} fits 360 px (is ${width})`);
      const background = await small.evaluate(() => getComputedStyle(document.body).backgroundColor);
      t.is(background, "rgb(18, 20, 24)", `${pathname} is dark`);
      if (name === "overview" || name === "usage" || name === "playground") await screenshot(small, `${name}-360-dark`);
    }
  } finally {
    await phone.close();
  }
  t.deepEqual(problems, []);
});

test.serial("signing out ends the session: the pages send you to sign-in again", async (t) => {
  await page.goto("/console");
  await Promise.all([page.waitForURL("**/console/sign-in"), page.click("text=Sign out")]);
  t.deepEqual(await context.cookies(), []);
  await page.goto("/console/keys");
  t.is(new URL(page.url()).pathname, "/console/sign-in");
  t.deepEqual(problems, []);
});
