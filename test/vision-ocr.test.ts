// POST /v1/vision/ocr (earlier form) with the real local tesseract: pictures with known text are
// rendered by sharp, read back, and answered as {success, tool, result: {blocks, fullText}}; a
// free usage row; 503 without the local provider or without the tesseract binary; the same
// picture-input refusals as every tool endpoint.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "ava";
import sharp from "sharp";
import { homePaths } from "../src/config/paths.js";
import { periodOf, UsageLog, type UsageRow } from "../src/store/usage-log.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { type PictureHosts, startPictureHosts } from "./helpers/picture-hosts.js";

let gateway: TestGateway;
let withoutLocal: TestGateway;
let hosts: PictureHosts;
let key: string;
let brokeKey: string;
let withoutLocalKey: string;
let sign: Buffer;

interface OcrBody {
  success: boolean;
  tool: string;
  result: { blocks: Array<{ text: string; confidence: number; type: string }>; fullText: string };
}

/** Large black text on a white (or transparent) background, rasterised by sharp. */
async function textPicture(lines: string[], background = "white"): Promise<Buffer> {
  const rows = lines.map(
    (line, index) =>
      `<text x="40" y="${110 + index * 100}" font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif" font-size="72" fill="black">${line}</text>`,
  );
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="1000" height="${80 + lines.length * 100}"><rect width="100%" height="100%" fill="${background}"/>${rows.join("")}</svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

test.before(async () => {
  hosts = await startPictureHosts();
  sign = await textPicture(["HELLO GATEWAY", "Quick brown fox"]);
  const home = await makeHome((config) => {
    config.providers = { local: { type: "local" } };
    config.tools.ocr = { default: "local/tesseract", allow: ["local/tesseract"] };
    config.plans.broke = { monthlyCredits: 0 };
  });
  gateway = await startTestGateway(home, { fetchUrl: hosts.fetchUrl });
  key = await addKey(home, "reader", "pro");
  brokeKey = await addKey(home, "no-credits", "broke");

  const bareHome = await makeHome((config) => {
    config.providers = {};
    config.tools.ocr = { default: "local/tesseract", allow: ["local/tesseract"] };
  });
  withoutLocal = await startTestGateway(bareHome);
  withoutLocalKey = await addKey(bareHome, "reader", "pro");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await withoutLocal?.shutdown();
  await hosts?.close();
});

async function ocr(body: unknown, options: { target?: TestGateway; apiKey?: string } = {}) {
  const response = await fetch(`${(options.target ?? gateway).url}/v1/vision/ocr`, {
    method: "POST",
    headers: { authorization: `Bearer ${options.apiKey ?? key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, requestId: response.headers.get("x-request-id")!, body: (await response.json()) as any };
}

function rowsFor(requestId: string): UsageRow[] {
  return UsageLog.readRows(homePaths(gateway.home).usageDir, periodOf(new Date())).filter((row) => row.requestId === requestId);
}

function assertWellFormed(t: import("ava").ExecutionContext, body: OcrBody): void {
  t.is(body.success, true);
  t.is(body.tool, "local/tesseract");
  t.true(body.result.blocks.length > 0);
  for (const block of body.result.blocks) {
    t.is(typeof block.text, "string");
    t.true(block.text.length > 0);
    t.true(block.type === "line" || block.type === "word", block.type);
    t.is(typeof block.confidence, "number");
    t.true(block.confidence >= 0 && block.confidence <= 1, String(block.confidence));
  }
}

test.serial("tesseract reads the words back: lines and words with confidences, the full text, a free usage row", async (t) => {
  const { status, requestId, body } = await ocr({ mediaBase64: sign.toString("base64") });
  t.is(status, 200, JSON.stringify(body));
  assertWellFormed(t, body as OcrBody);
  const { blocks, fullText } = (body as OcrBody).result;
  const lower = fullText.toLowerCase();
  for (const word of ["hello", "gateway", "quick", "brown", "fox"]) t.true(lower.includes(word), `${word} in ${JSON.stringify(fullText)}`);
  const lines = blocks.filter((block) => block.type === "line");
  const words = blocks.filter((block) => block.type === "word");
  t.is(lines.length, 2);
  t.deepEqual(
    words.map((word) => word.text.toLowerCase()),
    ["hello", "gateway", "quick", "brown", "fox"],
  );
  t.is(fullText, lines.map((line) => line.text).join("\n"));
  // Clean synthetic text: tesseract is sure of it.
  for (const word of words) t.true(word.confidence > 0.5, `${word.text}: ${word.confidence}`);

  const rows = rowsFor(requestId);
  t.is(rows.length, 1);
  t.like(rows[0], { endpoint: "vision.ocr", model: "local/tesseract", provider: "local", credits: 0 });
  t.is(rows[0]!.units.images, 1);
});

test.serial("black text on a transparent background is read; a data: URL works", async (t) => {
  const transparent = await textPicture(["TRANSPARENT SIGN"], "none");
  t.true((await sharp(transparent).metadata()).hasAlpha);
  const { status, body } = await ocr({ mediaBase64: `data:image/png;base64,${transparent.toString("base64")}` });
  t.is(status, 200, JSON.stringify(body));
  t.regex((body as OcrBody).result.fullText, /transparent\s+sign/i);
});

test.serial("a picture at a public URL is downloaded; an internal one is refused without a connection", async (t) => {
  hosts.serve("/sign.png", sign, "image/png");
  const fetched = await ocr({ mediaUrl: `${hosts.publicBase}/sign.png` });
  t.is(fetched.status, 200, JSON.stringify(fetched.body));
  t.regex((fetched.body as OcrBody).result.fullText, /gateway/i);
  for (const url of [`http://127.0.0.1:${hosts.internal.port}/sign.png`, "http://metadata.test/latest"]) {
    const refused = await ocr({ mediaUrl: url });
    t.is(refused.status, 400);
    t.is(refused.body.error.code, "url_not_allowed");
    t.is(refused.body.error.param, "mediaUrl");
  }
  t.is(hosts.internal.connections, 0);
});

test.serial("local OCR is free: an agent without credits still gets its text (no 402)", async (t) => {
  const { status, body } = await ocr({ mediaBase64: sign.toString("base64") }, { apiKey: brokeKey });
  t.is(status, 200, JSON.stringify(body));
});

test.serial("refusals: not a picture, both or neither field, a model outside tools.ocr", async (t) => {
  const notPicture = await ocr({ mediaBase64: Buffer.from("plain words").toString("base64") });
  t.is(notPicture.status, 400);
  t.is(notPicture.body.error.code, "invalid_image");
  t.is(notPicture.body.error.param, "mediaBase64");
  const neither = await ocr({});
  t.is(neither.status, 400);
  t.is(neither.body.error.param, "mediaUrl");
  const both = await ocr({ mediaUrl: `${hosts.publicBase}/sign.png`, mediaBase64: sign.toString("base64") });
  t.is(both.status, 400);
  t.is(both.body.error.param, "mediaBase64");
  const model = await ocr({ mediaBase64: sign.toString("base64"), model: "openai/gpt-4o" });
  t.is(model.status, 400);
  t.deepEqual(model.body.error.code, "model_not_allowed");
  t.is(model.body.error.param, "model");
});

test.serial("without the local provider: 503 provider_not_configured naming it", async (t) => {
  const { status, body } = await ocr({ mediaBase64: sign.toString("base64") }, { target: withoutLocal, apiKey: withoutLocalKey });
  t.is(status, 503);
  t.is(body.error.code, "provider_not_configured");
  t.is(body.error.type, "service_unavailable");
  t.regex(body.error.message, /provider `local`/);
});

test.serial("without the tesseract binary on PATH: 503 provider_not_configured saying so; back once it is there", async (t) => {
  const emptyDirectory = mkdtempSync(path.join(os.tmpdir(), "gw-no-tesseract-"));
  const original = process.env.PATH;
  try {
    process.env.PATH = emptyDirectory;
    const { status, body } = await ocr({ mediaBase64: sign.toString("base64") });
    t.is(status, 503);
    t.is(body.error.code, "provider_not_configured");
    t.regex(body.error.message, /tesseract/);
    t.regex(body.error.message, /not installed/);
  } finally {
    process.env.PATH = original;
    rmSync(emptyDirectory, { recursive: true, force: true });
  }
  const again = await ocr({ mediaBase64: sign.toString("base64") });
  t.is(again.status, 200);
});
