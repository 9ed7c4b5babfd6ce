// mediaUrl on the picture-reading endpoints: the gateway downloads a public picture itself, and
// refuses every private or internal address (literal, by name, disguised, or behind a redirect)
// with 400 url_not_allowed before any connection is made: the internal trap's counters stay 0.
import test from "ava";
import sharp from "sharp";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { type PictureHosts, startPictureHosts } from "./helpers/picture-hosts.js";

let openai: FakeOpenAI;
let hosts: PictureHosts;
let gateway: TestGateway;
let key: string;
let brokeKey: string;
let png: Buffer;

test.before(async () => {
  openai = await startFakeOpenAI();
  hosts = await startPictureHosts();
  png = await sharp({ create: { width: 40, height: 30, channels: 3, background: "#22aa44" } })
    .png()
    .toBuffer();
  hosts.serve("/x.png", png, "image/png");
  hosts.serve("/notes.txt", Buffer.from("not a picture at all"), "image/png");
  const home = await makeHome((config) => {
    config.providers = { oai: { type: "openai", baseUrl: openai.url, apiKey: "sk-upstream", upstream: { retries: 0 } } };
    config.routes = [{ prefix: "oai/", provider: "oai", priority: 10 }];
    config.tools.describe = { default: "oai/gpt-4o-mini", allow: [] };
    config.plans.broke = { monthlyCredits: 0 };
  });
  gateway = await startTestGateway(home, { fetchUrl: hosts.fetchUrl });
  key = await addKey(home, "viewer", "pro");
  brokeKey = await addKey(home, "no-credits", "broke");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await hosts?.close();
  await openai?.close();
});

async function describe(mediaUrl: string, path = "/v1/image/describe", apiKey = key) {
  const response = await fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ mediaUrl, prompt: "What is in it?" }),
  });
  return { status: response.status, body: (await response.json()) as any };
}

test.serial("a picture on a public host is downloaded and sent to the model inline", async (t) => {
  const { status, body } = await describe(`${hosts.publicBase}/x.png`);
  t.is(status, 200, JSON.stringify(body));
  t.deepEqual(body, { model: "oai/gpt-4o-mini", text: "echo: What is in it?" });
  t.true(hosts.publicHits.includes("/x.png"));
  t.deepEqual(openai.requests.at(-1)!.body.messages[0].content[1], {
    type: "image_url",
    image_url: { url: `data:image/png;base64,${png.toString("base64")}` },
  });
});

test.serial("private and internal addresses are refused with 400 url_not_allowed, never connected to", async (t) => {
  const port = hosts.internal.port;
  hosts.redirect("/to-loopback", `http://127.0.0.1:${port}/secret`);
  hosts.redirect("/to-intranet", `http://intranet.test:${port}/secret`);
  const chatCalls = openai.requests.length;
  const refused = [
    `http://127.0.0.1:${port}/`,
    "http://10.0.0.1/",
    `http://intranet.test:${port}/`,
    "http://metadata.test/",
    `http://[::ffff:127.0.0.1]:${port}/`,
    `http://2130706433:${port}/`,
    `http://rebind.test:${port}/`,
    `${hosts.publicBase}/to-loopback`,
    `${hosts.publicBase}/to-intranet`,
  ];
  for (const url of refused) {
    for (const path of ["/v1/image/describe", "/v1/vision/describe"]) {
      const { status, body } = await describe(url, path);
      t.is(status, 400, `${path} ${url}: ${JSON.stringify(body)}`);
      t.is(body.error?.code, "url_not_allowed", url);
      t.is(body.error?.param, "mediaUrl", url);
      t.false(String(body.error?.message).includes(String(port)), "the message names no internal port");
    }
  }
  t.deepEqual(hosts.internal.requests, []);
  t.is(hosts.internal.connections, 0);
  t.is(openai.requests.length, chatCalls, "nothing reached the model");
});

test.serial("a URL that cannot be read is 400 url_fetch_failed; a download that is not a picture is 400 invalid_image", async (t) => {
  const missing = await describe(`${hosts.publicBase}/nothing-here.png`);
  t.is(missing.status, 400);
  t.is(missing.body.error.code, "url_fetch_failed");
  t.is(missing.body.error.param, "mediaUrl");
  const text = await describe(`${hosts.publicBase}/notes.txt`);
  t.is(text.status, 400);
  t.is(text.body.error.code, "invalid_image");
  t.is(text.body.error.param, "mediaUrl");
});

test.serial("a caller without credits gets 402 before the picture is downloaded", async (t) => {
  const hits = hosts.publicHits.length;
  const calls = openai.requests.length;
  const { status, body } = await describe(`${hosts.publicBase}/x.png`, "/v1/image/describe", brokeKey);
  t.is(status, 402);
  t.is(body.error.code, "insufficient_credits");
  t.is(hosts.publicHits.length, hits, "nothing downloaded");
  t.is(openai.requests.length, calls);
});
