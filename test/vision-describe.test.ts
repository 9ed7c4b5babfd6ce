// POST /v1/image/describe and the earlier-form POST /v1/vision/describe end to end: one chat
// completion through the chat router to each vendor fake (OpenAI, Anthropic, Gemini), asserting
// the picture and the prompt in the vendor's own wire format, the `{model, text}` body, the usage
// row, and every refusal (model not allowlisted, none configured, picture fields, not a picture).
import test from "ava";
import sharp from "sharp";
import { homePaths } from "../src/config/paths.js";
import { DEFAULT_DESCRIBE_PROMPT } from "../src/gateway/vision/describe-service.js";
import { periodOf, UsageLog, type UsageRow } from "../src/store/usage-log.js";
import { type FakeAnthropic, startFakeAnthropic } from "./fakes/anthropic.js";
import { type FakeGemini, startFakeGemini } from "./fakes/gemini.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

let openai: FakeOpenAI;
let anthropic: FakeAnthropic;
let gemini: FakeGemini;
let gateway: TestGateway;
let unconfigured: TestGateway;
let key: string;
let freeKey: string;
let trickleKey: string;
let unconfiguredKey: string;
let png: Buffer;

const OPENAI_MODEL = "oai/gpt-4o-mini";
const CLAUDE_MODEL = "claude/claude-sonnet-4-5";
const GEMINI_MODEL = "google/gemini-2.5-flash";

test.before(async () => {
  openai = await startFakeOpenAI();
  anthropic = await startFakeAnthropic();
  gemini = await startFakeGemini();
  png = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 200, g: 30, b: 30 } } })
    .png()
    .toBuffer();
  const home = await makeHome((config) => {
    config.providers = {
      oai: { type: "openai", baseUrl: openai.url, apiKey: "sk-upstream", upstream: { retries: 0 } },
      claude: { type: "anthropic", baseUrl: anthropic.url, apiKey: "sk-ant-upstream", upstream: { retries: 0 } },
      google: { type: "gemini", baseUrl: gemini.url, apiKey: "AIza-upstream", upstream: { retries: 0 } },
    };
    config.routes = [
      { prefix: "oai/", provider: "oai", priority: 10, freeTier: true },
      { prefix: "claude/", provider: "claude", priority: 10, freeTier: false },
      { prefix: "google/", provider: "google", priority: 10, freeTier: true },
    ];
    config.tools.describe = { default: OPENAI_MODEL, allow: [CLAUDE_MODEL, GEMINI_MODEL] };
    config.plans.trickle = { requestsPerMinute: 1 };
  });
  gateway = await startTestGateway(home);
  key = await addKey(home, "viewer", "pro");
  freeKey = await addKey(home, "free-viewer", "free");
  trickleKey = await addKey(home, "trickle-viewer", "trickle");

  const bareHome = await makeHome((config) => {
    config.tools.describe = { default: null, allow: [] };
  });
  unconfigured = await startTestGateway(bareHome);
  unconfiguredKey = await addKey(bareHome, "nobody", "pro");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await unconfigured?.shutdown();
  await openai?.close();
  await anthropic?.close();
  await gemini?.close();
});

test.beforeEach(() => {
  openai.reset();
  anthropic.reset();
  gemini.reset();
});

interface ErrorBody {
  error: { message: string; type: string; code: string; param?: string };
}

async function post(path: string, body: unknown, options: { target?: TestGateway; apiKey?: string } = {}) {
  const response = await fetch(`${(options.target ?? gateway).url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${options.apiKey ?? key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, requestId: response.headers.get("x-request-id")!, body: (await response.json()) as any };
}

const describe = (body: unknown, options: { target?: TestGateway; apiKey?: string } = {}) => post("/v1/image/describe", body, options);

function rowsFor(requestId: string, target = gateway): UsageRow[] {
  return UsageLog.readRows(homePaths(target.home).usageDir, periodOf(new Date())).filter((row) => row.requestId === requestId);
}

const dataUrl = () => `data:image/png;base64,${png.toString("base64")}`;

const vendors = [
  {
    model: OPENAI_MODEL,
    sent: () => {
      const content = openai.requests.at(-1)!.body.messages[0].content;
      return { text: content[0], image: content[1] };
    },
    expectedImage: () => ({ type: "image_url", image_url: { url: dataUrl() } }),
    upstreamModel: () => openai.requests.at(-1)!.body.model,
    expectedText: (prompt: string) => ({ type: "text", text: prompt }),
  },
  {
    model: CLAUDE_MODEL,
    sent: () => {
      const content = anthropic.requests.at(-1)!.body.messages[0].content;
      return { text: content[0], image: content[1] };
    },
    expectedImage: () => ({ type: "image", source: { type: "base64", media_type: "image/png", data: png.toString("base64") } }),
    upstreamModel: () => anthropic.requests.at(-1)!.body.model,
    expectedText: (prompt: string) => ({ type: "text", text: prompt }),
  },
  {
    model: GEMINI_MODEL,
    sent: () => {
      const parts = gemini.requests.at(-1)!.body.contents[0].parts;
      return { text: parts[0], image: parts[1] };
    },
    expectedImage: () => ({ inlineData: { mimeType: "image/png", data: png.toString("base64") } }),
    upstreamModel: () => gemini.requests.at(-1)!.path,
    expectedText: (prompt: string) => ({ text: prompt }),
  },
];

for (const vendor of vendors) {
  test.serial(`${vendor.model}: the picture and the prompt reach the vendor in its format; {model, text}; one billed usage row`, async (t) => {
    const prompt = `What colour is this? (${vendor.model})`;
    // Bare base64 for one vendor, a data: URL for the others: both forms of mediaBase64.
    const mediaBase64 = vendor.model === OPENAI_MODEL ? png.toString("base64") : dataUrl();
    const { status, requestId, body } = await describe({ mediaBase64, prompt, model: vendor.model });
    t.is(status, 200, JSON.stringify(body));
    t.deepEqual(body, { model: vendor.model, text: `echo: ${prompt}` });
    const sent = vendor.sent();
    t.deepEqual(sent.text, vendor.expectedText(prompt));
    t.deepEqual(sent.image, vendor.expectedImage());
    t.true(String(vendor.upstreamModel()).includes(vendor.model.split("/")[1]!));

    const rows = rowsFor(requestId);
    t.is(rows.length, 1);
    t.is(rows[0]!.endpoint, "image.describe");
    t.is(rows[0]!.model, vendor.model);
    t.true(rows[0]!.credits > 0);
    t.true((rows[0]!.units.prompt_tokens ?? 0) > 0);
  });
}

test.serial("without model and prompt: the tools.describe default and a general description instruction", async (t) => {
  openai.enqueue({ content: "  A plain red rectangle.\n" });
  const { status, body } = await describe({ mediaBase64: dataUrl() });
  t.is(status, 200, JSON.stringify(body));
  t.deepEqual(body, { model: OPENAI_MODEL, text: "A plain red rectangle." });
  const sent = openai.requests.at(-1)!.body;
  t.is(sent.model, "gpt-4o-mini");
  t.is(sent.messages.length, 1);
  t.deepEqual(sent.messages[0].content[0], { type: "text", text: DEFAULT_DESCRIBE_PROMPT });
  t.is(typeof sent.max_tokens, "number");
});

test.serial("a model outside tools.describe: 400 model_not_allowed, nothing sent upstream or billed", async (t) => {
  for (const model of ["oai/gpt-4o", "nobody/nothing"]) {
    const { status, requestId, body } = await describe({ mediaBase64: dataUrl(), model });
    t.is(status, 400);
    t.is((body as ErrorBody).error.code, "model_not_allowed");
    t.is((body as ErrorBody).error.param, "model");
    t.is((body as ErrorBody).error.type, "invalid_request_error");
    t.deepEqual(rowsFor(requestId), []);
  }
  t.is(openai.requests.length + anthropic.requests.length + gemini.requests.length, 0);
});

test.serial("no describe model configured: 503 provider_not_configured", async (t) => {
  const { status, body } = await describe({ mediaBase64: dataUrl() }, { target: unconfigured, apiKey: unconfiguredKey });
  t.is(status, 503);
  t.is((body as ErrorBody).error.code, "provider_not_configured");
  t.regex((body as ErrorBody).error.message, /tools\.describe/);
});

test.serial("exactly one of mediaUrl and mediaBase64: both or neither is 400 naming the field", async (t) => {
  const neither = await describe({ prompt: "what is it?" });
  t.is(neither.status, 400);
  t.is(neither.body.error.code, "invalid_parameter");
  t.is(neither.body.error.param, "mediaUrl");
  const both = await describe({ mediaUrl: "https://example.com/x.png", mediaBase64: dataUrl() });
  t.is(both.status, 400);
  t.is(both.body.error.param, "mediaBase64");
  t.regex(both.body.error.message, /not both/);
  const wrongType = await describe({ mediaBase64: 42 });
  t.is(wrongType.status, 400);
  t.is(wrongType.body.error.param, "mediaBase64");
  t.is(openai.requests.length, 0);
});

test.serial("not a picture: 400 invalid_image naming the field; base64 never turns into a fetch", async (t) => {
  const text = await describe({ mediaBase64: Buffer.from("just some text, not pixels").toString("base64") });
  t.is(text.status, 400);
  t.is(text.body.error.code, "invalid_image");
  t.is(text.body.error.param, "mediaBase64");
  const svg = await describe({ mediaBase64: `data:image/svg+xml;base64,${Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>').toString("base64")}` });
  t.is(svg.status, 415);
  t.is(svg.body.error.code, "unsupported_media_type");
  const url = await describe({ mediaBase64: "http://example.com/cat.png" });
  t.is(url.status, 400);
  t.is(url.body.error.param, "mediaBase64");
  const scheme = await describe({ mediaUrl: "file:///etc/passwd" });
  t.is(scheme.status, 400);
  t.is(scheme.body.error.code, "url_not_allowed");
  t.is(scheme.body.error.param, "mediaUrl");
  t.is(openai.requests.length, 0);
});

test.serial("the earlier form /v1/vision/describe answers {success, result: {text}}", async (t) => {
  const { status, requestId, body } = await post("/v1/vision/describe", { mediaBase64: dataUrl(), prompt: "Name the colour." });
  t.is(status, 200, JSON.stringify(body));
  t.deepEqual(body, { success: true, result: { text: "echo: Name the colour." } });
  t.deepEqual(openai.requests.at(-1)!.body.messages[0].content[1], { type: "image_url", image_url: { url: dataUrl() } });
  const rows = rowsFor(requestId);
  t.is(rows.length, 1);
  t.is(rows[0]!.endpoint, "vision.describe");
  t.true(rows[0]!.credits > 0);
});

test.serial("errors of the chat path propagate: an upstream refusal of a value comes back verbatim", async (t) => {
  openai.enqueue({
    status: 400,
    errorBody: { error: { message: "Invalid image.", type: "invalid_request_error", param: null, code: "invalid_image_format" } },
  });
  const { status, body } = await describe({ mediaBase64: dataUrl() });
  t.is(status, 400);
  t.deepEqual(body, { error: { message: "Invalid image.", type: "invalid_request_error", param: null, code: "invalid_image_format" } });
});

test.serial("plan gates of the chat router apply: a free key gets 403 for a model not flagged free-tier", async (t) => {
  const { status, body } = await describe({ mediaBase64: dataUrl(), model: CLAUDE_MODEL }, { apiKey: freeKey });
  t.is(status, 403);
  t.is(body.error.code, "model_requires_upgrade");
  t.is(anthropic.requests.length, 0);
});

test.serial("a key is required; GET is 405", async (t) => {
  const noKey = await describe({ mediaBase64: dataUrl() }, { apiKey: "gw_not_a_key" });
  t.is(noKey.status, 401);
  t.is(noKey.body.error.code, "invalid_api_key");
  for (const path of ["/v1/image/describe", "/v1/vision/describe", "/v1/vision/ocr"]) {
    const response = await fetch(`${gateway.url}${path}`);
    t.is(response.status, 405, path);
  }
});

test.serial("a large or animated picture is re-encoded for the model (first frame, at most 2048 px)", async (t) => {
  const gif = await sharp({ create: { width: 3000, height: 1000, channels: 3, background: "#336699" } })
    .gif()
    .toBuffer();
  const { status, body } = await describe({ mediaBase64: gif.toString("base64") });
  t.is(status, 200, JSON.stringify(body));
  const url: string = openai.requests.at(-1)!.body.messages[0].content[1].image_url.url;
  t.true(url.startsWith("data:image/jpeg;base64,"));
  const meta = await sharp(Buffer.from(url.slice(url.indexOf(",") + 1), "base64")).metadata();
  t.is(meta.width, 2048);
  t.is(meta.height, 683);
});

test.serial("the per-key rate limit applies to every picture endpoint: 429 with Retry-After", async (t) => {
  const first = await post("/v1/vision/ocr", {}, { apiKey: trickleKey });
  t.is(first.status, 400, "counted, then refused for its body");
  for (const path of ["/v1/image/describe", "/v1/vision/describe", "/v1/vision/ocr"]) {
    const response = await fetch(`${gateway.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${trickleKey}`, "content-type": "application/json" },
      body: JSON.stringify({ mediaBase64: dataUrl() }),
    });
    t.is(response.status, 429, path);
    t.truthy(response.headers.get("retry-after"));
    t.is(((await response.json()) as ErrorBody).error.code, "rate_limit_exceeded");
  }
  t.is(openai.requests.length, 0);
});
