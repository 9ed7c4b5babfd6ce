// Chat completions translated for native vendors, through a real gateway and the official openai
// SDK, asserting both the exact request the vendor's fake received and what the client got:
// - Anthropic: response_format json_schema / json_object as a forced answer tool whose input comes
//   back as the message's JSON text (streamed too), reasoning_effort as extended thinking with the
//   documented budgets, and a 400 naming the provider for what cannot be honoured;
// - Gemini: an image_url by http(s) URL fetched by the gateway (SSRF-checked, capped, its type
//   sniffed from the bytes) and sent inline; a private URL is 400 url_not_allowed.
import test from "ava";
import OpenAI from "openai";
import sharp from "sharp";
import { type FakeAnthropic, startFakeAnthropic } from "./fakes/anthropic.js";
import { type FakeGemini, startFakeGemini } from "./fakes/gemini.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { type PictureHosts, startPictureHosts } from "./helpers/picture-hosts.js";

let anthropic: FakeAnthropic;
let gemini: FakeGemini;
let hosts: PictureHosts;
let gateway: TestGateway;
let key: string;
let png: Buffer;

const CLAUDE = "claude/claude-sonnet-4-5";
const GEMINI = "google/gemini-2.5-flash";
const weatherSchema = {
  type: "object",
  properties: { city: { type: "string" }, celsius: { type: "number" } },
  required: ["city", "celsius"],
  additionalProperties: false,
};

test.before(async () => {
  anthropic = await startFakeAnthropic();
  gemini = await startFakeGemini();
  hosts = await startPictureHosts();
  png = await sharp({ create: { width: 40, height: 30, channels: 3, background: "#2080c0" } })
    .png()
    .toBuffer();
  // Served as a generic type: the gateway must tell a PNG by its bytes.
  hosts.serve("/photo", png, "application/octet-stream");
  hosts.serve("/notes.txt", Buffer.from("not a picture at all"), "text/plain");
  hosts.serve("/big.png", Buffer.concat([png, Buffer.alloc(16 * 1024 * 1024)]), "image/png");
  const home = await makeHome((config) => {
    config.upstream = { retries: 0 };
    config.providers = {
      claude: { type: "anthropic", baseUrl: anthropic.url, apiKey: "sk-ant-translations" },
      google: { type: "gemini", baseUrl: gemini.url, apiKey: "AIza-translations" },
    };
    config.routes = [
      { prefix: "claude/", provider: "claude", priority: 10 },
      { prefix: "google/", provider: "google", priority: 10 },
    ];
  });
  gateway = await startTestGateway(home, { fetchUrl: hosts.fetchUrl });
  key = await addKey(home, "translator", "pro");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await anthropic?.close();
  await gemini?.close();
  await hosts?.close();
});

test.beforeEach(() => {
  anthropic.reset();
  gemini.reset();
});

const client = () => new OpenAI({ baseURL: gateway.v1, apiKey: key, maxRetries: 0 });
const lastClaude = () => anthropic.requests.at(-1)!.body;

test.serial("Anthropic json_schema: a forced tool with the schema; its input is the message's JSON content, finish stop", async (t) => {
  anthropic.enqueue({ toolUses: [{ id: "toolu_1", name: "weather_report", input: { city: "Oslo", celsius: 4 } }] });
  const completion = await client().chat.completions.create({
    model: CLAUDE,
    messages: [{ role: "user", content: "Weather in Oslo?" }],
    response_format: { type: "json_schema", json_schema: { name: "weather_report", description: "A weather report.", schema: weatherSchema, strict: true } },
  });
  const sent = lastClaude();
  t.deepEqual(sent.tools, [
    {
      name: "weather_report",
      description: "A weather report. Give your answer as this tool's input, following its schema.",
      input_schema: weatherSchema,
    },
  ]);
  t.deepEqual(sent.tool_choice, { type: "tool", name: "weather_report" });
  t.false("thinking" in sent);
  const choice = completion.choices[0]!;
  t.is(choice.message.content, '{"city":"Oslo","celsius":4}');
  t.deepEqual(JSON.parse(choice.message.content!), { city: "Oslo", celsius: 4 });
  t.is(choice.message.tool_calls, undefined);
  t.is(choice.finish_reason, "stop");
});

test.serial("Anthropic json_schema streamed: input_json_delta arrives as content deltas, no tool calls", async (t) => {
  anthropic.enqueue({ toolUses: [{ id: "toolu_2", name: "weather_report", input: { city: "Bergen", celsius: 9 } }] });
  const stream = await client().chat.completions.create({
    model: CLAUDE,
    messages: [{ role: "user", content: "Weather in Bergen?" }],
    response_format: { type: "json_schema", json_schema: { name: "weather_report", schema: weatherSchema } },
    stream: true,
  });
  let content = "";
  const finishes: string[] = [];
  let toolDeltas = 0;
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    if (!choice) continue;
    content += choice.delta.content ?? "";
    if (choice.delta.tool_calls) toolDeltas += 1;
    if (choice.finish_reason) finishes.push(choice.finish_reason);
  }
  t.deepEqual(JSON.parse(content), { city: "Bergen", celsius: 9 });
  t.is(toolDeltas, 0);
  t.deepEqual(finishes, ["stop"]);
  t.is(lastClaude().stream, true);
  t.deepEqual(lastClaude().tool_choice, { type: "tool", name: "weather_report" });
});

test.serial("Anthropic json_object: a forced tool taking any object; the answer is that object as JSON text", async (t) => {
  anthropic.enqueue({ toolUses: [{ id: "toolu_3", name: "json_object", input: { answer: 42, unit: "things" } }] });
  const completion = await client().chat.completions.create({
    model: CLAUDE,
    messages: [{ role: "user", content: "Answer in JSON." }],
    response_format: { type: "json_object" },
  });
  const sent = lastClaude();
  t.deepEqual(sent.tools, [
    { name: "json_object", description: "Give your answer as this tool's input: a JSON object, as asked.", input_schema: { type: "object" } },
  ]);
  t.deepEqual(sent.tool_choice, { type: "tool", name: "json_object" });
  t.deepEqual(JSON.parse(completion.choices[0]!.message.content!), { answer: 42, unit: "things" });
  t.is(completion.choices[0]!.finish_reason, "stop");
});

test.serial("Anthropic reasoning_effort: extended thinking with the documented budget, below max_tokens; the thinking never reaches the client", async (t) => {
  anthropic.enqueue({ thinking: "let me think about it", content: "Forty-two." });
  const completion = await client().chat.completions.create({
    model: CLAUDE,
    messages: [{ role: "user", content: "The answer?" }],
    reasoning_effort: "medium",
    max_tokens: 8000,
  });
  t.deepEqual(lastClaude().thinking, { type: "enabled", budget_tokens: 4096 });
  t.is(lastClaude().max_tokens, 8000);
  t.is(completion.choices[0]!.message.content, "Forty-two.");
  t.false(JSON.stringify(completion).includes("let me think"));

  // high is 16384, cut to leave 1024 tokens of max_tokens for the answer; low is 1024.
  await client().chat.completions.create({ model: CLAUDE, messages: [{ role: "user", content: "Hard one?" }], reasoning_effort: "high", max_tokens: 10000 });
  t.deepEqual(lastClaude().thinking, { type: "enabled", budget_tokens: 8976 });
  await client().chat.completions.create({
    model: CLAUDE,
    messages: [{ role: "user", content: "Easy?" }],
    reasoning_effort: "low",
    max_tokens: 4000,
    temperature: 1,
  });
  t.deepEqual(lastClaude().thinking, { type: "enabled", budget_tokens: 1024 });
  // none is Anthropic's default: no thinking.
  await client().chat.completions.create({ model: CLAUDE, messages: [{ role: "user", content: "Quick?" }], reasoning_effort: "none" });
  t.false("thinking" in lastClaude());
});

test.serial("Anthropic: what cannot be honoured is a 400 naming the provider and the parameter, and nothing is sent", async (t) => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ["an effort Anthropic has no budget for", { reasoning_effort: "minimal" }, "reasoning_effort"],
    ["thinking with a temperature", { reasoning_effort: "low", temperature: 0.3 }, "temperature"],
    ["thinking with top_k", { reasoning_effort: "low", top_k: 5 }, "top_k"],
    ["thinking with no room under max_tokens", { reasoning_effort: "high", max_tokens: 1500 }, "reasoning_effort"],
    ["thinking with a JSON answer (a forced tool)", { reasoning_effort: "low", response_format: { type: "json_object" } }, "reasoning_effort"],
    [
      "thinking with a required tool call",
      { reasoning_effort: "low", tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }], tool_choice: "required" },
      "reasoning_effort",
    ],
    [
      "a JSON answer with tools",
      {
        response_format: { type: "json_schema", json_schema: { name: "r", schema: weatherSchema } },
        tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }],
      },
      "response_format",
    ],
    [
      "a schema whose root is not an object",
      { response_format: { type: "json_schema", json_schema: { name: "r", schema: { type: "array" } } } },
      "response_format.json_schema.schema",
    ],
    ["an unknown response_format", { response_format: { type: "xml" } }, "response_format"],
  ];
  for (const [what, extra, param] of cases) {
    const response = await fetch(`${gateway.v1}/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: CLAUDE, messages: [{ role: "user", content: "hi" }], ...extra }),
    });
    const body = await response.json();
    t.is(response.status, 400, `${what}: ${JSON.stringify(body)}`);
    t.like(body.error, { type: "invalid_request_error", param, provider: "claude" }, what);
    t.regex(body.error.message, /provider claude/, what);
  }
  // A tool-result turn would need the signed thinking block back, which chat completions cannot carry.
  const toolTurn = await fetch(`${gateway.v1}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: CLAUDE,
      reasoning_effort: "low",
      tools: [{ type: "function", function: { name: "f", parameters: { type: "object" } } }],
      messages: [
        { role: "user", content: "call f" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "call_1", content: "done" },
      ],
    }),
  });
  t.is(toolTurn.status, 400);
  t.like((await toolTurn.json()).error, { param: "reasoning_effort", provider: "claude" });
  t.is(anthropic.requests.length, 0, "nothing reached Anthropic");
});

test.serial("Gemini: an image by http(s) URL is fetched by the gateway and sent inline with the type its bytes have", async (t) => {
  gemini.enqueue({ content: "A blue rectangle." });
  const completion = await client().chat.completions.create({
    model: GEMINI,
    messages: [
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: `${hosts.publicBase}/photo` } },
        ],
      },
    ],
  });
  t.is(completion.choices[0]!.message.content, "A blue rectangle.");
  const sent = gemini.requests.at(-1)!.body;
  t.deepEqual(sent.contents, [{ role: "user", parts: [{ text: "What is this?" }, { inlineData: { mimeType: "image/png", data: png.toString("base64") } }] }]);
  t.true(hosts.publicHits.includes("/photo"));

  // Streamed the same way.
  gemini.enqueue({ content: "Still blue." });
  const stream = await client().chat.completions.create({
    model: GEMINI,
    stream: true,
    messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: `${hosts.publicBase}/photo` } }] }],
  });
  let text = "";
  for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
  t.is(text, "Still blue.");
  t.deepEqual(gemini.requests.at(-1)!.body.contents[0].parts, [{ inlineData: { mimeType: "image/png", data: png.toString("base64") } }]);
});

test.serial(
  "Gemini: a private URL is 400 url_not_allowed, never fetched; what is not a picture or too big is refused too; nothing goes to Gemini",
  async (t) => {
    const ask = async (url: string) => {
      const response = await fetch(`${gateway.v1}/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: GEMINI, messages: [{ role: "user", content: [{ type: "image_url", image_url: { url } }] }] }),
      });
      return { status: response.status, body: await response.json() };
    };
    for (const url of [`http://127.0.0.1:${hosts.internal.port}/secret.png`, "http://intranet.test/x.png", "http://metadata.test/latest/meta-data"]) {
      const answer = await ask(url);
      t.is(answer.status, 400, `${url}: ${JSON.stringify(answer.body)}`);
      t.like(answer.body.error, { code: "url_not_allowed", param: "messages[0].content[0]", provider: "google" }, url);
    }
    t.is(hosts.internal.requests.length, 0);
    t.is(hosts.internal.connections, 0);

    const text = await ask(`${hosts.publicBase}/notes.txt`);
    t.is(text.status, 400, JSON.stringify(text.body));
    t.like(text.body.error, { code: "invalid_image", param: "messages[0].content[0]" });
    const big = await ask(`${hosts.publicBase}/big.png`);
    t.is(big.status, 400, JSON.stringify(big.body));
    t.like(big.body.error, { code: "url_not_allowed", param: "messages[0].content[0]" });
    t.regex(big.body.error.message, /limit/);
    t.is(gemini.requests.length, 0);
  },
);
