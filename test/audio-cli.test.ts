// `gw audio speak|transcribe|voices` and `gw catalog audio` as a user runs them: subprocesses of
// the built CLI against a running gw whose speech model is the real espeak-ng (local/espeak) and
// whose transcription model is the OpenAI Audio fake. Written audio is read back with ffprobe;
// transcripts in text, srt and vtt must reach stdout byte for byte as the API sent them; errors
// exit non-zero with the server's message.
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import test from "ava";
import type { SpeechBatchResult } from "../src/cli/audio-batch.js";
import type { SpeechSummary } from "../src/cli/audio-files.js";
import { type FakeOpenAIAudio, startFakeOpenAIAudio } from "./fakes/openai-audio.js";
import { addKey, gw, gwBin, json, makeHome, quietLogger, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { type PictureHosts, startPictureHosts } from "./helpers/picture-hosts.js";

const run = promisify(execFile);

let openai: FakeOpenAIAudio;
let hosts: PictureHosts;
let gateway: TestGateway;
let home: string;
let key: string;
let speechFile: string;
const directories: string[] = [];

test.before(async () => {
  openai = await startFakeOpenAIAudio();
  hosts = await startPictureHosts();
  home = await makeHome((config) => {
    config.providers = {
      local: { type: "local" },
      openai: { type: "openai", baseUrl: openai.url, apiKey: "sk-upstream", upstream: { retries: 0 } },
    };
    config.tools.speech = { default: "local/espeak", allow: ["local/espeak"] };
    config.tools.transcription = { default: "openai/whisper-1", allow: ["openai/whisper-1"] };
  });
  key = await addKey(home, "speaker", "pro");
  gateway = await startTestGateway(home, { fetchUrl: hosts.fetchUrl });
  // Real speech to transcribe: espeak-ng's own WAV.
  const directory = workDir();
  speechFile = path.join(directory, "talk.wav");
  await run("espeak-ng", ["-w", speechFile, "The beach was busy. People were swimming."]);
  hosts.serve("/talk.wav", readFileSync(speechFile), "audio/wav");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await hosts?.close();
  await openai?.close();
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

/** `null`: no key at all. */
const env = (apiKey: string | null = key) => ({ GW_BASE_URL: gateway.url, GW_API_KEY: apiKey ?? undefined, GW_HOME: home });

function workDir(): string {
  const directory = mkdtempSync(path.join(os.tmpdir(), "gw-audio-cli-"));
  directories.push(directory);
  return directory;
}

interface Probed {
  codec: string;
  container: string;
  durationSeconds: number;
}

/** What ffprobe reads in the file; raw pcm is read as what the gateway says it is (24 kHz 16-bit mono). */
async function probe(file: string, raw = false): Promise<Probed> {
  const input = raw ? ["-f", "s16le", "-ar", "24000", "-ac", "1"] : [];
  const { stdout } = await run("ffprobe", [
    "-v",
    "error",
    ...input,
    "-show_entries",
    "stream=codec_name,codec_type:format=format_name,duration",
    "-of",
    "json",
    file,
  ]);
  const parsed = JSON.parse(stdout) as { streams: Array<Record<string, string>>; format: Record<string, string> };
  const stream = parsed.streams.find((candidate) => candidate.codec_type === "audio")!;
  return { codec: stream.codec_name!, container: parsed.format.format_name!, durationSeconds: Number(parsed.format.duration) };
}

/** The built gw with stdout as bytes (audio on a pipe). */
function gwBytes(args: string[], input?: string): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  const environment: NodeJS.ProcessEnv = { ...process.env, ...env() };
  delete environment.NODE_ENV;
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [gwBin, ...args], { env: environment, encoding: "buffer", maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr: stderr.toString() }),
    );
    child.stdin?.end(input ?? "");
  });
}

/** The built gw inside a pseudo-terminal (util-linux `script`): stdin, stdout and stderr are a TTY `columns` wide. */
function gwOnTerminal(args: string[], columns = 80): Promise<{ code: number; output: string }> {
  const environment: NodeJS.ProcessEnv = { ...process.env, ...env() };
  delete environment.NODE_ENV;
  const quoted = [process.execPath, gwBin, ...args].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(" ");
  return new Promise((resolve) => {
    const child = spawn("script", ["-qec", `stty cols ${columns}; ${quoted}`, "/dev/null"], { env: environment, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.on("close", (code) => resolve({ code: code ?? -1, output: output.replaceAll("\r", "") }));
  });
}

const speechRequests = () => quietLogger.accessRecords.filter((record) => JSON.stringify(record).includes("/v1/audio/speech")).length;

const EXPECTED_CODECS: Record<string, { codec: string; raw?: boolean }> = {
  mp3: { codec: "mp3" },
  wav: { codec: "pcm_s16le" },
  opus: { codec: "opus" },
  flac: { codec: "flac" },
  pcm: { codec: "pcm_s16le", raw: true },
};

test.serial("speak -o FILE in each format: the extension asks for the format, and the file is that audio", async (t) => {
  const cwd = workDir();
  for (const [format, expected] of Object.entries(EXPECTED_CODECS)) {
    const result = await gw(["audio", "speak", "Hello from the gateway", "-o", `hello.${format}`], { env: env(), cwd });
    t.is(result.code, 0, `${format}: ${result.stderr}`);
    t.is(result.stdout, `hello.${format}\n`, format);
    const probed = await probe(path.join(cwd, `hello.${format}`), expected.raw);
    t.is(probed.codec, expected.codec, format);
    t.true(probed.durationSeconds > 0.5, `${format} lasts ${probed.durationSeconds} s`);
  }
  // .ogg names opus; --format and the extension must agree.
  const ogg = await gw(["audio", "speak", "Ogg", "-o", "hello.ogg", "--json"], { env: env(), cwd });
  t.is(ogg.code, 0, ogg.stderr);
  t.is(json<SpeechSummary>(ogg).format, "opus");
  t.is((await probe(path.join(cwd, "hello.ogg"))).codec, "opus");
  const conflicting = await gw(["audio", "speak", "x", "-o", "a.wav", "--format", "mp3"], { env: env(), cwd });
  t.not(conflicting.code, 0);
  t.regex(conflicting.stderr, /make them agree/);
  t.false(existsSync(path.join(cwd, "a.wav")));
});

test.serial("speak without -o writes speech-<request id>.<ext> in the cwd; --json prints the metadata", async (t) => {
  const cwd = workDir();
  const plain = await gw(["audio", "speak", "Default name"], { env: env(), cwd });
  t.is(plain.code, 0, plain.stderr);
  const written = plain.stdout.trim();
  t.regex(written, /^speech-req_[A-Za-z0-9_-]+\.mp3$/);
  t.deepEqual(readdirSync(cwd), [written]);
  t.is((await probe(path.join(cwd, written))).codec, "mp3");

  const described = await gw(["audio", "speak", "Twenty-one characters", "--format", "wav", "--speed", "1.5", "--voice", "en-us", "--json"], {
    env: env(),
    cwd,
  });
  t.is(described.code, 0, described.stderr);
  const summary = json<SpeechSummary>(described);
  t.regex(summary.file!, /^speech-req_[A-Za-z0-9_-]+\.wav$/);
  t.is(summary.bytes, statSync(path.join(cwd, summary.file!)).size);
  t.is(summary.format, "wav");
  t.regex(summary.contentType, /^audio\/(x-)?wav/);
  t.is(summary.characters, "Twenty-one characters".length);
  t.true(summary.durationMs! > 0);
  t.is(summary.model, "local/espeak");
  t.is(summary.voice, "en-us");
  t.regex(summary.assetId ?? "", /^file_/);
  t.is(summary.file, `speech-${summary.requestId}.wav`);
  t.is((await probe(path.join(cwd, summary.file!))).codec, "pcm_s16le");
});

test.serial("speak -o - writes the audio to a pipe, and refuses a terminal before sending anything", async (t) => {
  const piped = await gwBytes(["audio", "speak", "Through a pipe", "--format", "flac", "-o", "-"]);
  t.is(piped.code, 0, piped.stderr);
  const file = path.join(workDir(), "piped.flac");
  writeFileSync(file, piped.stdout);
  const probed = await probe(file);
  t.is(probed.codec, "flac");
  t.true(probed.durationSeconds > 0.5);

  const before = speechRequests();
  const refused = await gwOnTerminal(["audio", "speak", "Not on a terminal", "-o", "-"]);
  t.not(refused.code, 0, refused.output);
  t.regex(refused.output, /stdout, which is a terminal/);
  t.is(speechRequests(), before, "nothing was sent");

  const both = await gw(["audio", "speak", "x", "-o", "-", "--json"], { env: env() });
  t.not(both.code, 0);
  t.regex(both.stderr, /both want stdout/);
});

test.serial("speak - reads the text from stdin (one trailing newline dropped)", async (t) => {
  const cwd = workDir();
  const result = await gw(["audio", "speak", "-", "-o", "stdin.wav", "--json"], { env: env(), cwd, input: "Read from standard input\n" });
  t.is(result.code, 0, result.stderr);
  const summary = json<SpeechSummary>(result);
  t.is(summary.file, "stdin.wav");
  t.is(summary.characters, "Read from standard input".length);
  t.is((await probe(path.join(cwd, "stdin.wav"))).codec, "pcm_s16le");

  const empty = await gw(["audio", "speak", "-"], { env: env(), cwd, input: "\n" });
  t.not(empty.code, 0);
  t.regex(empty.stderr, /text is empty/);
});

test.serial("speak --batch: one file per line in -o DIR, a result line each in input order; a failed line fails the run only", async (t) => {
  const cwd = workDir();
  const lines = [
    JSON.stringify({ input: "First line", output: "first.wav" }),
    JSON.stringify({ input: "Second line", format: "opus", speed: 1.25 }),
    JSON.stringify({ input: "Third line", voice: "en-gb" }),
  ];
  writeFileSync(path.join(cwd, "lines.jsonl"), `${lines.join("\n")}\n`);
  const result = await gw(["audio", "speak", "--batch", "lines.jsonl", "--concurrency", "2", "--format", "flac", "-o", "out"], { env: env(), cwd });
  t.is(result.code, 0, result.stderr);
  const results = result.stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as SpeechBatchResult);
  t.deepEqual(
    results.map((line) => [line.line, line.status, line.file, line.format]),
    [
      [1, "ok", path.join("out", "first.wav"), "wav"],
      [2, "ok", path.join("out", "2.opus"), "opus"],
      [3, "ok", path.join("out", "3.flac"), "flac"],
    ],
  );
  t.is(results[2]!.voice, "en-gb");
  t.deepEqual(readdirSync(path.join(cwd, "out")).sort(), ["2.opus", "3.flac", "first.wav"]);
  for (const [file, codec] of [
    ["first.wav", "pcm_s16le"],
    ["2.opus", "opus"],
    ["3.flac", "flac"],
  ] as const) {
    const probed = await probe(path.join(cwd, "out", file));
    t.is(probed.codec, codec, file);
    t.true(probed.durationSeconds > 0.3, file);
  }

  const mixed = [JSON.stringify({ input: "Fine" }), "not JSON", JSON.stringify({ input: "Bad voice", voice: "no-such-voice" })].join("\n");
  const failing = await gw(["audio", "speak", "--batch", "-", "-o", "mixed"], { env: env(), cwd, input: mixed });
  t.is(failing.code, 1);
  const failed = failing.stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as SpeechBatchResult);
  t.deepEqual(
    failed.map((line) => [line.line, line.status]),
    [
      [1, "ok"],
      [2, "error"],
      [3, "error"],
    ],
  );
  t.is(failed[2]!.http_status, 400);
  t.regex(failed[2]!.error!, /no-such-voice/);
  t.regex(failing.stderr, /2 of 3 requests failed/);
  t.deepEqual(readdirSync(path.join(cwd, "mixed")), ["1.mp3"]);
});

test.serial("gw audio voices: a table, --json the API body, --model narrows, a terminal's width is kept", async (t) => {
  const table = await gw(["audio", "voices"], { env: env(null) });
  t.is(table.code, 0, table.stderr);
  const lines = table.stdout.trim().split("\n");
  t.regex(lines[0]!, /^ID\s+NAME\s+PROVIDER\s+LANGUAGES$/);
  t.true(
    lines.some((line) => /^en-us\s+.*\slocal\s+\S*en/.test(line)),
    table.stdout.slice(0, 2000),
  );

  const asJson = await gw(["audio", "voices", "--json"], { env: env(null) });
  t.is(asJson.code, 0, asJson.stderr);
  const body = json<{ voices: Array<{ id: string; provider: string; models: string[]; languages: string[] }> }>(asJson);
  t.deepEqual(body, await (await fetch(`${gateway.url}/v1/audio/voices`)).json());
  t.true(body.voices.length > 10);
  t.true(body.voices.some((voice) => voice.id === "en-us" && voice.models.includes("local/espeak")));

  const narrowed = await gw(["audio", "voices", "--model", "local/espeak", "--json"], { env: env(null) });
  t.is(narrowed.code, 0, narrowed.stderr);
  t.deepEqual(json(narrowed), await (await fetch(`${gateway.url}/v1/audio/voices?model=local%2Fespeak`)).json());

  const narrow = await gwOnTerminal(["audio", "voices"], 60);
  t.is(narrow.code, 0, narrow.output);
  const rows = narrow.output.trim().split("\n");
  t.regex(rows[0]!, /^ID\s+NAME\s+PROVIDER\s+LANGUAGES$/);
  for (const row of rows) t.true(row.length <= 60, `${row.length} > 60: ${row}`);
});

test.serial("gw catalog audio: a summary with dollar prices, --json the API body, no key needed", async (t) => {
  const summary = await gw(["catalog", "audio"], { env: env(null) });
  t.is(summary.code, 0, summary.stderr);
  const lines = summary.stdout.split("\n");
  t.is(lines[0], "Speech");
  t.regex(lines[1]!, /^ID\s+MAX CHARS\s+FORMATS\s+PER 1K CHARS$/);
  t.true(
    lines.some((line) => /^local\/espeak\s+4,096\s+mp3,wav,opus,flac,pcm\s+free$/.test(line)),
    summary.stdout,
  );
  t.true(lines.includes("Transcription"));
  t.true(lines.some((line) => /^ID\s+FORMATS\s+MAX DURATION\s+PER MINUTE$/.test(line)));
  t.true(
    lines.some((line) => /^openai\/whisper-1\s+json,text,verbose_json,srt,vtt\s+2h\s+\$0\.006$/.test(line)),
    summary.stdout,
  );

  const asJson = await gw(["catalog", "audio", "--json"], { env: env(null) });
  t.is(asJson.code, 0, asJson.stderr);
  t.deepEqual(json(asJson), await (await fetch(`${gateway.url}/v1/public/audio-models`)).json());
});

/** The gateway's answer to the same file, sent directly (what the CLI must print unchanged). */
async function direct(format: string): Promise<{ contentType: string; body: string }> {
  const form = new FormData();
  form.append("file", new Blob([readFileSync(speechFile)], { type: "audio/wav" }), "talk.wav");
  form.append("response_format", format);
  const response = await fetch(`${gateway.url}/v1/audio/transcriptions`, { method: "POST", body: form, headers: { authorization: `Bearer ${key}` } });
  if (!response.ok) throw new Error(`${response.status} ${await response.text()}`);
  return { contentType: response.headers.get("content-type") ?? "", body: await response.text() };
}

test.serial("transcribe FILE in the five formats: JSON bodies as JSON, text, srt and vtt exactly as the API sent them", async (t) => {
  openai.reset();
  const plain = await gw(["audio", "transcribe", speechFile], { env: env() });
  t.is(plain.code, 0, plain.stderr);
  t.deepEqual(json(plain), { model: "openai/whisper-1", text: "The beach was busy. People were swimming." });
  const upload = openai.requests.at(-1)!;
  t.is(upload.file?.size !== undefined && upload.file.size > 0, true);
  t.deepEqual(upload.fields?.model, ["whisper-1"]);

  const withJson = await gw(["audio", "transcribe", speechFile, "--format", "json", "--json", "--language", "en"], { env: env() });
  t.is(withJson.code, 0, withJson.stderr);
  t.deepEqual(json(withJson), json(plain));
  t.deepEqual(openai.requests.at(-1)!.fields?.language, ["en"]);

  const verbose = await gw(["audio", "transcribe", speechFile, "--format", "verbose_json"], { env: env() });
  t.is(verbose.code, 0, verbose.stderr);
  const body = json<{ model: string; text: string; task: string; duration: number; segments: Array<{ id: number; start: number; end: number; text: string }> }>(
    verbose,
  );
  t.is(body.task, "transcribe");
  t.true(body.duration > 0);
  t.deepEqual(
    body.segments.map((segment) => segment.text.trim()),
    ["The beach was busy.", "People were swimming."],
  );

  for (const format of ["text", "srt", "vtt"]) {
    const result = await gw(["audio", "transcribe", speechFile, "--format", format], { env: env() });
    t.is(result.code, 0, `${format}: ${result.stderr}`);
    const expected = await direct(format);
    t.is(result.stdout, expected.body, format);
  }
  const srt = await gw(["audio", "transcribe", speechFile, "-f", "srt"], { env: env() });
  t.regex(srt.stdout, /^1\r?\n00:00:00,000 --> 00:00:\d\d,\d{3}\r?\nThe beach was busy\./);
  const vtt = await gw(["audio", "transcribe", speechFile, "-f", "vtt"], { env: env() });
  t.regex(vtt.stdout, /^WEBVTT\r?\n\r?\n(?:\S+\r?\n)?00:00:00\.000 --> 00:00:\d\d\.\d{3}\r?\nThe beach was busy\./);
  const text = await gw(["audio", "transcribe", speechFile, "-f", "text"], { env: env() });
  t.regex(text.stdout, /^The beach was busy\. People were swimming\.\n?$/);
});

test.serial("transcribe - sends stdin as a file; a URL goes as mediaUrl and is downloaded by the gateway", async (t) => {
  openai.reset();
  const fromStdin = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    const environment: NodeJS.ProcessEnv = { ...process.env, ...env() };
    delete environment.NODE_ENV;
    const child = execFile(process.execPath, [gwBin, "audio", "transcribe", "-", "--format", "text"], { env: environment }, (error, stdout, stderr) =>
      resolve({ code: error ? 1 : 0, stdout, stderr }),
    );
    child.stdin!.end(readFileSync(speechFile));
  });
  t.is(fromStdin.code, 0, fromStdin.stderr);
  t.regex(fromStdin.stdout, /^The beach was busy\. People were swimming\./);
  t.true((openai.requests.at(-1)!.file?.size ?? 0) > 0);

  const before = hosts.publicHits.length;
  const fromUrl = await gw(["audio", "transcribe", `${hosts.publicBase}/talk.wav`], { env: env() });
  t.is(fromUrl.code, 0, fromUrl.stderr);
  t.is(json<{ text: string }>(fromUrl).text, "The beach was busy. People were swimming.");
  t.is(hosts.publicHits.length, before + 1);
});

test.serial("errors: the server's message and a non-zero exit; usage errors before any request", async (t) => {
  const unknownModel = await gw(["audio", "transcribe", speechFile, "--model", "openai/no-such-model"], { env: env() });
  t.not(unknownModel.code, 0);
  t.is(unknownModel.stdout, "");
  const form = new FormData();
  form.append("file", new Blob([readFileSync(speechFile)], { type: "audio/wav" }), "talk.wav");
  form.append("model", "openai/no-such-model");
  const answer = (await (
    await fetch(`${gateway.url}/v1/audio/transcriptions`, { method: "POST", body: form, headers: { authorization: `Bearer ${key}` } })
  ).json()) as { error: { message: string } };
  t.is(unknownModel.stderr.trim(), answer.error.message);

  const unknownSpeech = await gw(["audio", "speak", "x", "--model", "local/no-such-engine"], { env: env(), cwd: workDir() });
  t.not(unknownSpeech.code, 0);
  t.regex(unknownSpeech.stderr, /local\/no-such-engine/);

  const jsonText = await gw(["audio", "transcribe", speechFile, "--format", "srt", "--json"], { env: env() });
  t.not(jsonText.code, 0);
  t.regex(jsonText.stderr, /--json prints the JSON body/);

  const missing = await gw(["audio", "transcribe", "no-such-file.wav"], { env: env() });
  t.not(missing.code, 0);
  t.regex(missing.stderr, /no-such-file\.wav: no such file/);

  const noKey = await gw(["audio", "speak", "x"], { env: env(null), cwd: workDir() });
  t.not(noKey.code, 0);
  t.regex(noKey.stderr, /no API key/);
});
