// The tesseract runner's failure paths, with stand-in binaries: a missing binary, a failing one,
// one that never finishes (killed at the time limit), and a caller that goes away (killed at once).
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import test from "ava";
import { OcrEngineError, recognizeText } from "../src/media/tesseract-ocr.js";

const directory = mkdtempSync(path.join(os.tmpdir(), "gw-tesseract-"));
test.after.always(() => rmSync(directory, { recursive: true, force: true }));

function script(name: string, body: string): string {
  const file = path.join(directory, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

const picture = Buffer.from("stand-in bytes");

test("a missing binary is reason missing", async (t) => {
  const error = await t.throwsAsync(recognizeText(picture, { binary: path.join(directory, "no-such-tesseract") }), { instanceOf: OcrEngineError });
  t.is(error!.reason, "missing");
});

test("a failing run is reason failed, with its exit status and nothing of its output", async (t) => {
  const binary = script("failing", "cat >/dev/null; echo 'Error in pixReadMem: /secret/path' >&2; exit 3");
  const error = await t.throwsAsync(recognizeText(picture, { binary }), { instanceOf: OcrEngineError });
  t.is(error!.reason, "failed");
  t.regex(error!.message, /exit status 3/);
  t.false(error!.message.includes("/secret/path"));
});

test("a run over the time limit is killed: reason timeout", async (t) => {
  const binary = script("slow", "exec sleep 30");
  const error = await t.throwsAsync(recognizeText(picture, { binary, timeoutMs: 300 }), { instanceOf: OcrEngineError });
  t.is(error!.reason, "timeout");
});

test("an aborted call rejects with the abort reason", async (t) => {
  const binary = script("slow-abort", "exec sleep 30");
  const controller = new AbortController();
  const running = recognizeText(picture, { binary, signal: controller.signal });
  const reason = new Error("client went away");
  controller.abort(reason);
  t.is(await t.throwsAsync(running), reason);
});

test("the TSV a run prints is parsed", async (t) => {
  const binary = script(
    "fake-tsv",
    "cat >/dev/null; printf 'level\\tpage_num\\tblock_num\\tpar_num\\tline_num\\tword_num\\tleft\\ttop\\twidth\\theight\\tconf\\ttext\\n5\\t1\\t1\\t1\\t1\\t1\\t0\\t0\\t9\\t9\\t77.5\\thi\\n'",
  );
  const parsed = await recognizeText(picture, { binary });
  t.is(parsed.text, "hi");
  t.is(parsed.lines[0]!.words[0]!.confidence, 77.5);
});
