// The credit reservation is a true upper bound of what a call can cost, so no burst of parallel
// requests spends more than the balance; pictures count as their vendors bill them, not as base64
// text; a request without max_tokens gets the max_tokens its balance pays for; a call without
// usage is billed what it produced, never the reservation; cached input has its own price.

import { randomBytes } from "node:crypto";
import Anthropic from "@anthropic-ai/sdk";
import test from "ava";
import OpenAI from "openai";
import sharp from "sharp";
import { type MeteredGateway, startMeteredGateway } from "./_metered-gateway.js";

let metered: MeteredGateway;

test.before(async () => {
  metered = await startMeteredGateway();
});

test.after.always(async () => {
  await metered?.close();
});

test.beforeEach(() => {
  metered.openai.reset();
  metered.anthropic.reset();
});

const openai = (key: string) => new OpenAI({ baseURL: metered.gateway.v1, apiKey: key, maxRetries: 0 });
const anthropic = (key: string) => new Anthropic({ baseURL: `${metered.gateway.url}/anthropic`, apiKey: key, maxRetries: 0 });

async function chat(key: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${metered.gateway.v1}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

test.serial("50 parallel CJK requests against credits for 10 never spend more than the balance", async (t) => {
  // One token per character, as real tokenizers roughly count CJK: each call really costs 1,023.
  const allowance = 10 * 1023;
  const key = await metered.keyWithCredits("cjk", allowance);
  metered.openai.set({ firstByteDelayMs: 400, content: "好", usage: { prompt_tokens: 1003, completion_tokens: 20 } });
  const prompt = "漢".repeat(1000);
  const results = await Promise.allSettled(
    Array.from({ length: 50 }, () => openai(key).chat.completions.create({ model: "m/cheap", max_tokens: 20, messages: [{ role: "user", content: prompt }] })),
  );
  const answered = results.filter((result) => result.status === "fulfilled").length;
  const refused = results
    .filter((result): result is PromiseRejectedResult => result.status === "rejected")
    .map((result) => result.reason as InstanceType<typeof OpenAI.APIError>);
  t.true(answered >= 1, `${answered} answered`);
  t.is(metered.openai.requests.length, answered, "refused requests never reached the upstream");
  t.true(refused.every((error) => error.status === 402 && error.code === "insufficient_credits"));
  t.regex(refused[0]!.message, /may cost up to \d+ \(at most \d+ input tokens and max_tokens 20\)/);
  t.is(metered.used("cjk"), answered * 1023);
  t.true(metered.used("cjk") <= allowance, `used ${metered.used("cjk")} of ${allowance}`);

  // Spending on, one at a time, until refused: still never past the allowance.
  metered.openai.set({ content: "好", usage: { prompt_tokens: 1003, completion_tokens: 20 } });
  for (let call = 0; call < 20; call += 1) {
    const response = await chat(key, { model: "m/cheap", max_tokens: 20, messages: [{ role: "user", content: prompt }] });
    await response.arrayBuffer();
    if (response.status === 402) break;
    t.is(response.status, 200);
  }
  t.true(metered.used("cjk") <= allowance, `used ${metered.used("cjk")} of ${allowance}`);
});

test.serial("a 1.2 MB photo counts as its vendor bills it, not as 1.6 million characters of base64", async (t) => {
  const photo = await noisePhoto(1600, 1200);
  t.true(photo.length > 1_100_000, `${photo.length} bytes`);
  const dataUrl = `data:image/jpeg;base64,${photo.toString("base64")}`;
  const key = await metered.keyWithCredits("photographer", 50_000);
  metered.openai.set({ content: "A field of static.", usage: { prompt_tokens: 800, completion_tokens: 10 } });
  const completion = await openai(key).chat.completions.create({
    model: "m/vision",
    max_tokens: 100,
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "What is in this photo?" },
          { type: "image_url", image_url: { url: dataUrl } },
        ],
      },
    ],
  });
  t.is(completion.choices[0]!.message.content, "A field of static.");
  // 800 x 2.5 + 10 x 10 credits: the upstream's usage, settled.
  t.deepEqual(
    metered.rows("photographer").map((row) => row.credits),
    [2100],
  );

  // The same photo through the messages endpoint (Anthropic's image block) to the same upstream.
  const message = await anthropic(key).messages.create({
    model: "m/vision",
    max_tokens: 100,
    messages: [
      {
        role: "user",
        content: [
          { type: "image", source: { type: "base64", media_type: "image/jpeg", data: photo.toString("base64") } },
          { type: "text", text: "And now?" },
        ],
      },
    ],
  });
  t.is(message.content[0]!.type, "text");
  t.is(metered.rows("photographer").length, 2);
});

test.serial("a picture still counts: 10 photos on a small balance are refused before any upstream call", async (t) => {
  const photo = await noisePhoto(1600, 1200);
  const part = { type: "image_url", image_url: { url: `data:image/jpeg;base64,${photo.toString("base64")}` } };
  // 10 pictures x 765 tokens x 2.5 credits is over 19,000 credits: more than 10,000 left.
  const key = await metered.keyWithCredits("album", 10_000);
  const response = await chat(key, { model: "m/vision", max_tokens: 10, messages: [{ role: "user", content: Array.from({ length: 10 }, () => part) }] });
  t.is(response.status, 402);
  t.is(metered.openai.requests.length, 0);
});

test.serial("without max_tokens the balance decides it (within the model's limit), sent upstream and announced", async (t) => {
  const small = await metered.keyWithCredits("frugal", 1000);
  const response = await chat(small, { model: "m/cheap", messages: [{ role: "user", content: "hi" }] });
  t.is(response.status, 200);
  const filled = Number(response.headers.get("x-service-max-tokens-filled"));
  // 1 credit a token: what is left after the prompt's bound (a few dozen bytes of JSON).
  t.true(filled > 900 && filled < 1000, `filled ${filled}`);
  t.is(metered.openai.requests.at(-1)!.body.max_tokens, filled);

  const rich = await metered.keyWithCredits("wealthy", 10_000_000);
  const capped = await chat(rich, { model: "m/cheap", stream: true, messages: [{ role: "user", content: "hi" }] });
  await capped.text();
  t.is(capped.headers.get("x-service-max-tokens-filled"), "5000", "the model's max_output_tokens from the catalog");
  t.is(metered.openai.requests.at(-1)!.body.max_tokens, 5000);

  const named = await chat(rich, { model: "m/cheap", max_tokens: 77, messages: [{ role: "user", content: "hi" }] });
  await named.json();
  t.is(named.headers.get("x-service-max-tokens-filled"), null, "a request that names max_tokens keeps it");
  t.is(metered.openai.requests.at(-1)!.body.max_tokens, 77);
});

test.serial("a max_tokens the balance cannot pay for is 402 naming one that fits, and that one is served", async (t) => {
  const key = await metered.keyWithCredits("precise", 500);
  const refused = await chat(key, { model: "m/cheap", max_tokens: 4000, messages: [{ role: "user", content: "hi" }] });
  t.is(refused.status, 402);
  const { error } = (await refused.json()) as { error: { code: string; message: string } };
  t.is(error.code, "insufficient_credits");
  const fits = Number(/a max_tokens of at most (\d+) would fit/.exec(error.message)?.[1]);
  t.true(fits > 400 && fits < 500, error.message);
  t.is(metered.openai.requests.length, 0);

  const served = await chat(key, { model: "m/cheap", max_tokens: fits, messages: [{ role: "user", content: "hi" }] });
  t.is(served.status, 200);
});

test.serial("not even a minimal answer fits: 402 before any upstream call", async (t) => {
  const key = await metered.keyWithCredits("broke-ish", 30);
  const response = await chat(key, { model: "m/cheap", messages: [{ role: "user", content: "hello there" }] });
  t.is(response.status, 402);
  const { error } = (await response.json()) as { error: { message: string } };
  t.regex(error.message, /max_tokens 256, the fewest gw fills in when the request names none\); the prompt alone may cost up to \d+/);
  t.is(metered.openai.requests.length, 0);
});

test.serial("a provider told to use max_completion_tokens gets the filled limit in that field", async (t) => {
  const { editHomeConfig } = await import("../helpers/gateway-harness.js");
  const { loadConfigFile } = await import("../../src/config/load-config.js");
  const { homePaths } = await import("../../src/config/paths.js");
  editHomeConfig(metered.home, (config) => {
    config.providers.up.maxTokensField = "max_completion_tokens";
  });
  metered.gateway.gateway.applyConfig(loadConfigFile(homePaths(metered.home).config));
  try {
    const key = await metered.keyWithCredits("reasoner", 1_000_000);
    const response = await chat(key, { model: "m/cheap", messages: [{ role: "user", content: "hi" }] });
    t.is(response.status, 200);
    const sent = metered.openai.requests.at(-1)!.body;
    t.is(sent.max_completion_tokens, 5000);
    t.false("max_tokens" in sent);
  } finally {
    editHomeConfig(metered.home, (config) => {
      delete config.providers.up.maxTokensField;
    });
    metered.gateway.gateway.applyConfig(loadConfigFile(homePaths(metered.home).config));
  }
});

test.serial("no usage from the upstream: billed the prompt's estimate plus what was produced, never the reservation", async (t) => {
  const key = await metered.keyWithCredits("unmetered", 100_000);
  metered.openai.set({ omitUsage: true, content: "three short words" });
  const completion = await openai(key).chat.completions.create({ model: "m/cheap", max_tokens: 20_000, messages: [{ role: "user", content: "hi" }] });
  const [row] = metered.rows("unmetered");
  // At 1 credit a token the client's usage is exactly what was billed, and far below the 20,000 reserved.
  t.is(row!.credits, completion.usage!.prompt_tokens + completion.usage!.completion_tokens);
  t.true(row!.credits < 100, `billed ${row!.credits}`);

  // CJK output counts about a token a character, not a quarter.
  metered.openai.set({ omitUsage: true, content: "漢".repeat(50) });
  const stream = await openai(key).chat.completions.create({ model: "m/cheap", stream: true, max_tokens: 20_000, messages: [{ role: "user", content: "hi" }] });
  let usage: OpenAI.CompletionUsage | undefined;
  for await (const chunk of stream) usage ??= chunk.usage ?? undefined;
  t.true(usage!.completion_tokens >= 50, `${usage!.completion_tokens} completion tokens`);
  t.is(metered.rows("unmetered")[1]!.credits, usage!.prompt_tokens + usage!.completion_tokens);
});

test.serial("a stream cut short is billed what was relayed", async (t) => {
  const key = await metered.keyWithCredits("interrupted", 100_000);
  metered.openai.set({ content: "one two three four five six seven eight", dropAfterChunks: 2 });
  const response = await chat(key, { model: "m/cheap", stream: true, max_tokens: 50_000, messages: [{ role: "user", content: "hi" }] });
  const text = await response.text();
  t.regex(text, /stream_interrupted|error/);
  const [row] = metered.rows("interrupted");
  t.true(row!.credits > 0 && row!.credits < 100, `billed ${row!.credits}, not the 50,000 reserved`);
});

test.serial("cached input is billed at the cache prices: OpenAI's cached_tokens, Anthropic's cache reads and writes", async (t) => {
  const key = await metered.keyWithCredits("cacher", 1_000_000);
  // A prompt long enough to hold the 3,100 input tokens reported (billing never passes the prompt's bound).
  const hi = "hi ".repeat(1100);
  metered.openai.set({ rawUsage: { prompt_tokens: 1000, completion_tokens: 10, total_tokens: 1010, prompt_tokens_details: { cached_tokens: 800 } } });
  await openai(key).chat.completions.create({ model: "m/cached", max_tokens: 50, messages: [{ role: "user", content: hi }] });
  // 200 x 3 + 800 x 0.3 + 10 x 15
  t.is(metered.rows("cacher")[0]!.credits, 990);
  t.deepEqual(metered.rows("cacher")[0]!.units, { prompt_tokens: 1000, completion_tokens: 10, cached_tokens: 800 });

  const anthropicUsage = { input_tokens: 100, output_tokens: 10, cache_read_input_tokens: 1000, cache_creation_input_tokens: 2000 };
  // 100 x 3 + 1000 x 0.3 + 2000 x 3.75 + 10 x 15
  const expected = 8250;
  metered.anthropic.enqueue({ usage: anthropicUsage });
  await anthropic(key).messages.create({ model: "c/cached", max_tokens: 50, messages: [{ role: "user", content: hi }] });
  t.is(metered.rows("cacher")[1]!.credits, expected, "messages endpoint, native");

  metered.anthropic.enqueue({ usage: anthropicUsage });
  const converted = await openai(key).chat.completions.create({ model: "c/cached", max_tokens: 50, messages: [{ role: "user", content: hi }] });
  t.is(metered.rows("cacher")[2]!.credits, expected, "chat completions from Anthropic");
  t.is(converted.usage!.prompt_tokens, 3100);
  t.deepEqual(metered.rows("cacher")[2]!.units, { prompt_tokens: 3100, completion_tokens: 10, cached_tokens: 1000, cache_write_tokens: 2000 });

  metered.anthropic.enqueue({ usage: anthropicUsage });
  const streamed = await anthropic(key)
    .messages.stream({ model: "c/cached", max_tokens: 50, messages: [{ role: "user", content: hi }] })
    .finalMessage();
  t.is(streamed.usage.cache_creation_input_tokens, 2000);
  t.is(metered.rows("cacher")[3]!.credits, expected, "messages endpoint, native stream");
});

/** A photo-sized JPEG: noise does not compress, so 1600x1200 is about 1.2 MB. */
async function noisePhoto(width: number, height: number): Promise<Buffer> {
  return sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 80 })
    .toBuffer();
}
