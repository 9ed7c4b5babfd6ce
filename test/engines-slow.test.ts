// espeak-ng and tesseract that are installed but slow to answer their version check (a loaded
// machine) are "slow", never "not installed" (docs/decisions.md §6): `gw doctor` warns that they
// answered slowly, local speech and OCR answer 503 engine_busy with Retry-After, and the next
// call asks again (a slow answer is not remembered), finding them once they answer.
// Fake engines are shell scripts on PATH in front of the real binaries: their `--version` waits
// until the test writes a `release` file; nothing here bounds how long anything takes.
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import test from "ava";
import sharp from "sharp";
import { runDoctor } from "../src/cli/doctor-checks.js";
import { audioEngineFailure } from "../src/gateway/audio/audio-engine-errors.js";
import { EngineBusyError } from "../src/gateway/errors.js";
import { OcrService } from "../src/gateway/vision/ocr-service.js";
import { parseOcrRequest } from "../src/gateway/vision/vision-request.js";
import { AudioEngineError } from "../src/media/audio-process.js";
import { lookupEspeak, lookupTesseract } from "../src/media/engines.js";
import { createLocalSpeech } from "../src/providers/local/local-speech.js";
import { addKey, makeHome, startTestGateway } from "./helpers/gateway-harness.js";
import { tempDir } from "./helpers/temp-dirs.js";

const which = (name: string) => execFileSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).trim();
const REAL = { "espeak-ng": which("espeak-ng"), tesseract: which("tesseract") };
const SLEEP = which("sleep");
// Short enough for a test; the fakes never answer before they are released, however long that is.
// Once released, the checks get the usual time: nothing here bounds how long a real answer takes.
const CHECK = { versionTimeoutMs: 200 };

type EngineName = keyof typeof REAL;

/** A folder with fake `espeak-ng` and `tesseract`: `--version` is noted, then waits for `release`; everything runs the real one. */
function slowEngines(): string {
  const dir = tempDir("gw-slow-engines-");
  for (const [name, real] of Object.entries(REAL)) {
    const script = [
      "#!/bin/sh",
      'if [ "$1" = "--version" ]; then',
      `  echo called >> "${dir}/${name}-version-calls"`,
      `  while [ ! -e "${dir}/release" ]; do "${SLEEP}" 0.05; done`,
      "fi",
      `exec "${real}" "$@"`,
      "",
    ].join("\n");
    writeFileSync(path.join(dir, name), script);
    chmodSync(path.join(dir, name), 0o755);
  }
  return dir;
}

const release = (dir: string) => writeFileSync(path.join(dir, "release"), "");
const released = (dir: string) => existsSync(path.join(dir, "release"));
const versionCalls = (dir: string, name: EngineName) =>
  readFileSync(path.join(dir, `${name}-version-calls`), "utf8")
    .trim()
    .split("\n").length;

/** PATH is where local speech and OCR look (process.env); returns the undo. */
function onPath(dir: string): () => void {
  const saved = process.env.PATH;
  process.env.PATH = dir;
  return () => {
    process.env.PATH = saved;
  };
}

test("gw doctor: a slow espeak-ng or tesseract is a warning that it answered slowly, not 'not found'; once it answers, ok", async (t) => {
  const dir = slowEngines();
  const home = await makeHome();
  const slow = await runDoctor(home, { ...process.env, PATH: dir }, CHECK);
  for (const name of ["espeak-ng", "tesseract"] as const) {
    const check = slow.checks.find((candidate) => candidate.name === name);
    t.is(check?.status, "warn", name);
    t.regex(check?.detail ?? "", /answered slowly/, name);
    t.true(check?.detail.includes(path.join(dir, name)), `${name}: ${check?.detail}`);
    t.notRegex(check?.detail ?? "", /not found|not installed/, name);
  }

  // Missing is still told apart.
  const empty = tempDir("gw-no-engines-");
  const missing = await runDoctor(home, { ...process.env, PATH: empty }, CHECK);
  t.like(
    missing.checks.find((candidate) => candidate.name === "espeak-ng"),
    { status: "warn" },
  );
  t.regex(missing.checks.find((candidate) => candidate.name === "espeak-ng")?.detail ?? "", /not found/);

  release(dir);
  const answered = await runDoctor(home, { ...process.env, PATH: dir });
  for (const name of ["espeak-ng", "tesseract"] as const) {
    const check = answered.checks.find((candidate) => candidate.name === name);
    t.like(check, { status: "ok", path: path.join(dir, name), source: "PATH" }, name);
    t.regex(check?.version ?? "", /^\d+\.\d+/, name);
  }
});

test.serial("local speech: a slow espeak-ng is ready (installed) but busy: 503 engine_busy with Retry-After, asked again next time", async (t) => {
  const dir = slowEngines();
  const speech = createLocalSpeech({ lookupEngine: (env) => lookupEspeak(env, released(dir) ? {} : CHECK) });
  const speak = () =>
    speech.synthesize({ model: "espeak", input: "Slow but there.", voice: "en-us", speed: 1, format: "wav" }, { signal: new AbortController().signal });
  const restore = onPath(dir);
  try {
    t.true(await speech.ready!(), "a slow engine is installed: its model stays on offer");
    const busy = await t.throwsAsync(speak(), { instanceOf: AudioEngineError });
    t.is(busy?.reason, "busy");
    t.regex(busy?.message ?? "", /espeak-ng did not answer .* in time/);
    t.notRegex(busy?.message ?? "", /not installed/);
    // What a client gets for it: 503 engine_busy saying it is busy, with a time to come back.
    const answer = audioEngineFailure(busy, "local") as { status: number; code: string; message: string; headers: Record<string, string> };
    t.like(answer, { status: 503, code: "engine_busy" });
    t.regex(answer.message, /busy/);
    t.truthy(answer.headers["retry-after"]);

    release(dir);
    const spoken = await speak();
    t.is(spoken.format, "wav");
    t.is(spoken.bytes.subarray(0, 4).toString("latin1"), "RIFF");
    t.true(versionCalls(dir, "espeak-ng") >= 3, "the slow answers were not remembered");
  } finally {
    restore();
  }
});

test.serial("OCR: a slow tesseract is 503 engine_busy with Retry-After, not 'not installed'; once it answers, the text is read", async (t) => {
  const dir = slowEngines();
  const home = await makeHome((config) => {
    config.providers = { local: { type: "local" } };
    config.tools.ocr = { default: "local/tesseract", allow: ["local/tesseract"] };
  });
  const gateway = await startTestGateway(home);
  const key = await addKey(home, "reader", "pro");
  const restore = onPath(dir);
  try {
    const service = new OcrService({
      config: () => gateway.gateway.config,
      ledger: gateway.gateway.ledger,
      fetchUrl: gateway.gateway.fetchUrl,
      lookupEngine: (env) => lookupTesseract(env, released(dir) ? {} : CHECK),
    });
    const caller = await gateway.gateway.authenticator.authenticate(key);
    const context = {
      caller,
      plan: gateway.gateway.config.resolvedPlans.pro!,
      requestId: "req-slow-ocr",
      signal: new AbortController().signal,
      endpoint: "vision.ocr",
    };
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="900" height="180"><rect width="100%" height="100%" fill="white"/><text x="40" y="120" font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif" font-size="72" fill="black">SLOW ENGINE</text></svg>`;
    const picture = (await sharp(Buffer.from(svg)).png().toBuffer()).toString("base64");
    const read = () => service.recognize(parseOcrRequest({ mediaBase64: picture }), context);

    const busy = await t.throwsAsync(read(), { instanceOf: EngineBusyError });
    t.like(busy, { status: 503, code: "engine_busy" });
    t.truthy(busy?.headers["retry-after"]);
    t.regex(busy?.message ?? "", /tesseract did not answer .* in time/);
    t.notRegex(busy?.message ?? "", /not installed/);

    release(dir);
    const recognised = await read();
    t.regex(recognised.fullText, /SLOW ENGINE/);
    t.true(versionCalls(dir, "tesseract") >= 2, "the slow answer was not remembered");
  } finally {
    restore();
    await gateway.shutdown();
  }
});
