// enhance_prompt on POST /v1/image/generations: one chat completion through the chat router
// rewrites the prompt (body + X-Service-Enhanced-Prompt, two usage rows), and it fails open.
import test from "ava";
import { homePaths } from "../src/config/paths.js";
import { periodOf, UsageLog } from "../src/store/usage-log.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { type FakeOpenAIImages, startFakeOpenAIImages } from "./fakes/openai-images.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

let images: FakeOpenAIImages;
let chat: FakeOpenAI;
let gateway: TestGateway;
let key: string;

test.before(async () => {
  images = await startFakeOpenAIImages();
  chat = await startFakeOpenAI();
  const home = await makeHome((config) => {
    config.providers = {
      openai: { type: "openai", baseUrl: images.url, apiKey: "k", upstream: { retries: 0 } },
      writer: { type: "openai", baseUrl: chat.url, apiKey: "k", upstream: { retries: 0 } },
    };
    config.routes = [{ prefix: "writer/", provider: "writer" }];
    config.tools.image = { default: "openai/gpt-image-1", allow: [] };
    config.tools.enhance = { default: "writer/gpt-x", allow: [] };
  });
  gateway = await startTestGateway(home);
  key = await addKey(home, "painter", "pro");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await images?.close();
  await chat?.close();
});

const generate = (body: Record<string, unknown>) =>
  fetch(`${gateway.url}/v1/image/generations`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });

const rowsFor = (requestId: string) => UsageLog.readRows(homePaths(gateway.home).usageDir, periodOf(new Date())).filter((row) => row.requestId === requestId);

test.serial("the rewrite is drawn, returned in the body and the header, and billed as a second row", async (t) => {
  chat.enqueue({ content: "A red fox in deep snow at dawn,\nsoft light, café ☕ style" });
  const response = await generate({ prompt: "a fox", enhance_prompt: true });
  const body = (await response.json()) as { id: string; enhanced_prompt?: string; data: Array<{ revised_prompt: string }> };
  t.is(response.status, 200, JSON.stringify(body));
  t.is(body.enhanced_prompt, "A red fox in deep snow at dawn,\nsoft light, café ☕ style");
  t.is(response.headers.get("x-service-enhanced-prompt"), "A red fox in deep snow at dawn, soft light, caf style");
  t.is(images.requests.at(-1)!.json.prompt, body.enhanced_prompt);
  t.is(chat.requests.at(-1)!.body.messages.at(-1).content, "a fox");
  t.deepEqual(
    rowsFor(body.id)
      .map((row) => row.endpoint)
      .sort(),
    ["image.enhance", "image.generations"],
  );
});

test.serial("the header is capped at 512 characters; the body keeps the whole rewrite", async (t) => {
  const long = "word ".repeat(200).trim();
  chat.enqueue({ content: long });
  const response = await generate({ prompt: "a fox", enhance_prompt: true });
  const body = (await response.json()) as { enhanced_prompt?: string };
  t.is(body.enhanced_prompt, long);
  t.is(response.headers.get("x-service-enhanced-prompt")!.length, 512);
});

test.serial("fails open: a failed rewrite draws the original prompt, bills nothing extra, no enhanced_prompt", async (t) => {
  chat.enqueue({ status: 500 });
  const response = await generate({ prompt: "a quiet lake", enhance_prompt: true });
  const body = (await response.json()) as { id: string; enhanced_prompt?: string };
  t.is(response.status, 200);
  t.is(body.enhanced_prompt, undefined);
  t.is(response.headers.get("x-service-enhanced-prompt"), null);
  t.is(images.requests.at(-1)!.json.prompt, "a quiet lake");
  t.deepEqual(
    rowsFor(body.id).map((row) => row.endpoint),
    ["image.generations"],
  );
});

test.serial("without enhance_prompt no chat call is made", async (t) => {
  const before = chat.requests.length;
  const response = await generate({ prompt: "a hill" });
  t.is(response.status, 200);
  t.is(chat.requests.length, before);
});
