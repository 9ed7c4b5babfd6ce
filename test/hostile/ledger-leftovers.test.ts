// What issue 20's ledger work left over (docs/decisions.md §3, §5, §10):
// - a key's tokens per minute count at most what the call could have used (the prompt's bound and
//   the output cap held), so an upstream that reports 100 million tokens does not lock the key;
//   the row keeps the units the upstream reported;
// - an image call whose quality is `auto` (or omitted, when the model's default is auto) reserves
//   the dearest quality the model may pick, and settles at the quality the upstream says it drew:
//   billed that price, no overage, and a balance that cannot pay it is 402 before the call.

import test from "ava";
import { type FakeOpenAIImages, startFakeOpenAIImages } from "../fakes/openai-images.js";
import { addKey } from "../helpers/gateway-harness.js";
import { type MeteredGateway, startMeteredGateway } from "./_metered-gateway.js";

let metered: MeteredGateway;
let images: FakeOpenAIImages;

test.before(async () => {
  images = await startFakeOpenAIImages();
  metered = await startMeteredGateway((config) => {
    config.providers.openai = { type: "openai", baseUrl: images.url, apiKey: "sk-img", upstream: { retries: 0 } };
    config.tools.image = { default: "openai/dall-e-3", allow: [] };
    config.models.push({ id: "c/cheap", name: "Claude cheap", context_length: 200_000, pricing: { input_per_mtok: 1, output_per_mtok: 1 } });
  });
});

test.after.always(async () => {
  await metered?.close();
  await images?.close();
});

test.beforeEach(() => {
  metered.openai.reset();
  metered.anthropic.reset();
  images.reset();
});

const HUGE = 100_000_000;

function chat(key: string): Promise<Response> {
  return fetch(`${metered.gateway.v1}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "m/cheap", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }),
  });
}

function messages(key: string): Promise<Response> {
  return fetch(`${metered.gateway.url}/anthropic/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
    body: JSON.stringify({ model: "c/cheap", max_tokens: 5, messages: [{ role: "user", content: "hi" }] }),
  });
}

// --- 1. tokens per minute count at most what was held ---------------------------------------------

const endpoints: Array<[string, (key: string) => Promise<Response>, () => void]> = [
  ["chat completions", chat, () => metered.openai.set({ content: "ok", usage: { prompt_tokens: HUGE, completion_tokens: HUGE } })],
  ["messages", messages, () => metered.anthropic.set({ content: "ok", usage: { input_tokens: HUGE, output_tokens: HUGE } })],
];

for (const [name, call, overReport] of endpoints) {
  test.serial(`${name}: an upstream reporting 100 million tokens takes at most the held tokens from the key's tokens per minute`, async (t) => {
    // 60 a minute: one token a second comes back, so what the first call took is still visible on the second.
    const agent = `tpm-${name.replaceAll(" ", "-")}`;
    const key = await addKey(metered.home, agent, "pro", { tpm: 60 });
    overReport();
    const started = performance.now();
    const first = await call(key);
    t.is(first.status, 200, await first.clone().text());
    await first.text();
    const [row] = metered.rows(agent);
    // Priced at one credit a token: what the row billed (the candidate's bound) is the tokens held.
    const held = row!.credits;
    t.true(held > 5 && held < 60, `held ${held} tokens`);
    t.like(row!.units, { prompt_tokens: HUGE, completion_tokens: HUGE }, "the row keeps what the upstream reported");

    const second = await call(key);
    const elapsedSeconds = (performance.now() - started) / 1000;
    t.is(second.status, 200, await second.clone().text());
    await second.text();
    // The header is read at the second call's admission: what the first took, plus what came back since.
    const remaining = Number(second.headers.get("x-ratelimit-remaining-tokens"));
    t.true(remaining >= 60 - held, `remaining ${remaining}, held ${held}`);
    t.true(remaining <= 60 - held + Math.ceil(elapsedSeconds) + 1, `remaining ${remaining}, held ${held}, ${elapsedSeconds} s`);
  });
}

// --- 2. images at quality auto reserve the dearest quality ---------------------------------------

// DALL·E 3 at 1024x1024 (1.048576 megapixels): 43,600 credits a megapixel at its base (standard)
// rate, 76,300 at high (hd).
const MEGAPIXELS = 1.048576;
const HIGH = Math.ceil(76_300 * MEGAPIXELS);
const BASE = Math.ceil(43_600 * MEGAPIXELS);

function generate(key: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${metered.gateway.v1}/image/generations`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ prompt: "a lighthouse", model: "openai/dall-e-3", output_format: "png", ...body }),
  });
}

test.serial("DALL·E 3 at quality auto, drawn at high: billed the high price, no overage", async (t) => {
  const key = await metered.keyWithCredits("dalle-auto-high", HIGH);
  images.set({ reportQuality: true, quality: "high" });
  const response = await generate(key, { quality: "auto" });
  t.is(response.status, 200, await response.clone().text());
  await response.text();
  const rows = metered.rows("dalle-auto-high");
  t.is(rows.length, 1);
  t.is(rows[0]!.credits, HIGH);
  t.is(rows[0]!.overage, undefined);
  t.is(metered.used("dalle-auto-high"), HIGH);
});

test.serial("DALL·E 3 at quality auto or none: a balance that cannot pay the high price is 402 before the call", async (t) => {
  const key = await metered.keyWithCredits("dalle-short", HIGH - 1);
  images.set({ reportQuality: true, quality: "high" });
  for (const quality of ["auto", undefined]) {
    const response = await generate(key, quality === undefined ? {} : { quality });
    t.is(response.status, 402, `quality ${quality}`);
    const body = (await response.json()) as { error: { code: string; message: string } };
    t.is(body.error.code, "insufficient_credits");
    t.regex(body.error.message, new RegExp(`${HIGH}`));
  }
  t.is(images.requests.length, 0, "nothing reached the upstream");
  t.is(metered.used("dalle-short"), 0);

  // A quality named outright is reserved and billed at its own price.
  images.reset();
  const medium = await generate(key, { quality: "medium" });
  t.is(medium.status, 200, await medium.clone().text());
  await medium.text();
  t.is(images.requests.at(-1)!.json.quality, "standard");
  t.is(metered.used("dalle-short"), BASE);
});

test.serial("DALL·E 3 at quality auto drawn at the base quality (the upstream says standard, or nothing) is billed the base price", async (t) => {
  const key = await metered.keyWithCredits("dalle-auto-base", 2 * HIGH);
  images.set({ reportQuality: true });
  const reported = await generate(key, { quality: "auto" });
  t.is(reported.status, 200, await reported.clone().text());
  await reported.text();
  images.set({});
  const silent = await generate(key, {});
  t.is(silent.status, 200, await silent.clone().text());
  await silent.text();
  t.deepEqual(
    metered.rows("dalle-auto-base").map((row) => [row.credits, row.overage]),
    [
      [BASE, undefined],
      [BASE, undefined],
    ],
  );
});
