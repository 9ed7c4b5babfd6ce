// `gw video generate|status|cancel|ls` and `gw catalog video` as a user runs them: subprocesses of
// the built CLI against a running gw whose video model is the real local ffmpeg engine
// (local/kenburns, jobs finishing in about two seconds). Saved clips are read back with ffprobe
// (H.264, the length asked, the size of the resolution and ratio); --json prints the API bodies;
// Ctrl-C stops waiting without cancelling; errors exit non-zero with the server's message; checks
// on a terminal run under `script`.
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import test from "ava";
import sharp from "sharp";
import { GwApiError } from "../src/client/gw-api-error.js";
import { GwClient } from "../src/client/gw-client.js";
import type { VideoJobBody } from "../src/client/video-types.js";
import { DEFAULT_VIDEO_MODEL_INPUTS } from "../src/config/default-video-models.js";
import { eventually } from "./helpers/eventually.js";
import { addKey, gw, gwBin, json, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { type PictureHosts, startPictureHosts } from "./helpers/picture-hosts.js";

const run = promisify(execFile);
const KENBURNS = DEFAULT_VIDEO_MODEL_INPUTS.find((model) => model.id === "local/kenburns")!;
const PRICED = "local/kenburns-priced";
const FINISHED = ["SUCCEEDED", "FAILED", "CANCELLED"];

let gateway: TestGateway;
let hosts: PictureHosts;
let home: string;
let key: string;
let photo: string;
let photoBytes: Buffer;
const directories: string[] = [];

test.before(async () => {
  hosts = await startPictureHosts();
  home = await makeHome((config) => {
    config.providers = { local: { type: "local" } };
    config.video = { tickSeconds: 1, pollIntervalSeconds: 1, localConcurrency: 2 };
    config.catalog = {
      video: [KENBURNS, { ...KENBURNS, id: PRICED, freeTier: false, pricing: { perSecond: { "480p": 1000, "720p": 50_000, "1080p": 300_000 } } }],
    };
    config.tools.video = { default: "local/kenburns", allow: ["local/kenburns", PRICED] };
  });
  key = await addKey(home, "director", "pro");
  gateway = await startTestGateway(home, { fetchUrl: hosts.fetchUrl });
  photoBytes = await sharp({ create: { width: 800, height: 500, channels: 3, background: { r: 40, g: 120, b: 200 } } })
    .composite([{ input: Buffer.from('<svg width="800" height="500"><circle cx="400" cy="250" r="120" fill="orange"/></svg>'), top: 0, left: 0 }])
    .png()
    .toBuffer();
  const directory = workDir();
  photo = path.join(directory, "photo.png");
  writeFileSync(photo, photoBytes);
  hosts.serve("/photo.png", photoBytes, "image/png");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await hosts?.close();
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

/** `null`: no key at all. */
const env = (apiKey: string | null = key) => ({ GW_BASE_URL: gateway.url, GW_API_KEY: apiKey ?? undefined, GW_HOME: home });

function workDir(): string {
  const directory = mkdtempSync(path.join(os.tmpdir(), "gw-video-cli-"));
  directories.push(directory);
  return directory;
}

async function api(method: string, route: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${gateway.url}${route}`, { method, headers: { authorization: `Bearer ${key}` } });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

function waitFinished(id: string): Promise<VideoJobBody> {
  return eventually(async () => (await api("GET", `/v1/video/jobs/${id}`)).body as VideoJobBody, {
    until: (body) => FINISHED.includes(body.status),
    what: `job ${id} to finish`,
    timeoutMs: 40_000,
    intervalMs: 200,
  });
}

interface Probed {
  codec: string;
  width: number;
  height: number;
  duration: number;
}

async function probe(file: string): Promise<Probed> {
  const { stdout } = await run("ffprobe", ["-v", "error", "-show_entries", "format=duration:stream=codec_name,codec_type,width,height", "-of", "json", file]);
  const parsed = JSON.parse(stdout) as {
    format: { duration: string };
    streams: Array<{ codec_name: string; codec_type: string; width: number; height: number }>;
  };
  const stream = parsed.streams.find((candidate) => candidate.codec_type === "video")!;
  return { codec: stream.codec_name, width: stream.width, height: stream.height, duration: Number(parsed.format.duration) };
}

/** The built gw with stdout as bytes (a clip on a pipe). */
function gwBytes(args: string[]): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  const environment: NodeJS.ProcessEnv = { ...process.env, ...env() };
  delete environment.NODE_ENV;
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [gwBin, ...args], { env: environment, encoding: "buffer", maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr: stderr.toString() }),
    );
    child.stdin?.end();
  });
}

/** The built gw inside a pseudo-terminal (util-linux `script`): stdin, stdout and stderr are a TTY `columns` wide. */
function gwOnTerminal(args: string[], columns = 80, cwd?: string): Promise<{ code: number; output: string }> {
  const environment: NodeJS.ProcessEnv = { ...process.env, ...env() };
  delete environment.NODE_ENV;
  const quoted = [process.execPath, gwBin, ...args].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(" ");
  return new Promise((resolve) => {
    const child = spawn("script", ["-qec", `stty cols ${columns}; ${quoted}`, "/dev/null"], { env: environment, cwd, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.on("close", (code) => resolve({ code: code ?? -1, output }));
  });
}

const jobCount = async () => (await api("GET", "/v1/video/jobs?limit=100")).body.data.length as number;

test.serial(
  "generate --image FILE --wait -o FILE: the clip is a real H.264 mp4 of the length and size asked; the path on stdout, status lines on stderr",
  async (t) => {
    const cwd = workDir();
    const result = await gw(
      [
        "video",
        "generate",
        "a slow look at the orange sun",
        "--image",
        photo,
        "--duration",
        "2",
        "--resolution",
        "480p",
        "--ratio",
        "16:9",
        "--wait",
        "-o",
        "clip.mp4",
      ],
      { env: env(), cwd },
    );
    t.is(result.code, 0, result.stderr);
    t.is(result.stdout, "clip.mp4\n");
    const probed = await probe(path.join(cwd, "clip.mp4"));
    t.like(probed, { codec: "h264", width: 854, height: 480 });
    t.true(Math.abs(probed.duration - 2) <= 0.1, `${probed.duration} s`);
    // Not a terminal: one plain line per status, the last SUCCEEDED; no cursor control.
    const lines = result.stderr.trim().split("\n");
    t.regex(lines[0]!, /^vid_\w+ {2}QUEUED {2}\d+:\d\d elapsed$/);
    t.regex(lines.at(-1)!, /^vid_\w+ {2}SUCCEEDED {2}\d+:\d\d elapsed$/);
    t.is(new Set(lines.map((line) => line.split(/\s+/)[1])).size, lines.length, "a line only when the status changes");
    t.false(result.stderr.includes("\r") || result.stderr.includes("\u001b"), "no cursor control");
    t.deepEqual(readdirSync(cwd), ["clip.mp4"], "no temp file left behind");

    // Portrait 720p, the default length (5 s), the default name video-<id>.mp4 in the cwd; faster polling.
    const portrait = await gw(["video", "generate", "portrait", "--image", photo, "--ratio", "9:16", "--wait", "--poll-interval", "0.5"], { env: env(), cwd });
    t.is(portrait.code, 0, portrait.stderr);
    const written = portrait.stdout.trim();
    t.regex(written, /^video-vid_\w+\.mp4$/);
    const tall = await probe(path.join(cwd, written));
    t.like(tall, { codec: "h264", width: 720, height: 1280 });
    t.true(Math.abs(tall.duration - 5) <= 0.1, `${tall.duration} s`);

    // -o DIR saves DIR/video-<id>.mp4; the prompt can come from stdin; an http(s) --image goes to the gateway as a URL.
    mkdirSync(path.join(cwd, "clips"));
    const before = hosts.publicHits.length;
    const square = await gw(
      [
        "video",
        "generate",
        "-",
        "--image",
        `${hosts.publicBase}/photo.png`,
        "--duration",
        "1",
        "--resolution",
        "1080p",
        "--ratio",
        "1:1",
        "--wait",
        "-o",
        "clips",
      ],
      { env: env(), cwd, input: "a square from stdin\n" },
    );
    t.is(square.code, 0, square.stderr);
    t.regex(square.stdout.trim(), /^clips\/video-vid_\w+\.mp4$/);
    t.like(await probe(path.join(cwd, square.stdout.trim())), { codec: "h264", width: 1080, height: 1080 });
    t.is(hosts.publicHits.length, before + 1, "the gateway downloaded the photo");
  },
);

test.serial("generate without --wait prints the job id; status shows it; status --wait saves it; --json prints the API bodies", async (t) => {
  const cwd = workDir();
  const submitted = await gw(["video", "generate", "later", "--image", photo, "--duration", "1", "--resolution", "480p", "--ratio", "4:3"], {
    env: env(),
    cwd,
  });
  t.is(submitted.code, 0, submitted.stderr);
  const id = submitted.stdout.trim();
  t.regex(id, /^vid_[0-9A-Z]{26}$/);
  t.regex(submitted.stderr, new RegExp(`gw video status ${id} --wait`));
  t.deepEqual(readdirSync(cwd), [], "nothing saved without --wait");

  const early = await gw(["video", "status", id], { env: env() });
  t.is(early.code, 0, early.stderr);
  // Whatever state the job has reached by now: on a loaded machine the one-second clip may be done
  // before this command has started.
  t.regex(early.stdout, new RegExp(`^id {8}${id}\\nstatus {4}(QUEUED|SUBMITTED( \\d+%)?|SUCCEEDED)\\n`));
  t.regex(early.stdout, /^model {5}local\/kenburns$/m);
  t.regex(early.stdout, /^queued {4}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(/m);

  const waited = await gw(["video", "status", id, "--wait", "--poll-interval", "0.5", "--json", "-o", "four-three.mp4"], { env: env(), cwd });
  t.is(waited.code, 0, waited.stderr);
  const final = json<VideoJobBody & { file: string }>(waited);
  t.is(final.file, "four-three.mp4");
  const { file, ...job } = final;
  t.deepEqual(job, (await api("GET", `/v1/video/jobs/${id}`)).body, "the final job as the API answers it");
  t.is(job.status, "SUCCEEDED");
  const probed = await probe(path.join(cwd, file));
  t.like(probed, { codec: "h264", width: 640, height: 480 });
  t.true(Math.abs(probed.duration - 1) <= 0.1, `${probed.duration} s`);

  // A finished job: status --json is the API body, the readable form shows the link and its expiry.
  const asJson = await gw(["video", "status", id, "--json"], { env: env() });
  t.is(asJson.code, 0, asJson.stderr);
  t.deepEqual(json(asJson), job);
  const readable = await gw(["video", "status", id], { env: env() });
  t.is(readable.code, 0, readable.stderr);
  t.regex(readable.stdout, /^status {4}SUCCEEDED$/m);
  t.true(readable.stdout.includes(`\nclip      ${job.resultUrl}\n`), readable.stdout);
  t.regex(readable.stdout, /^finished {2}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(\d+s after it was queued\)$/m);
  t.regex(readable.stdout, /^expires {3}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in 2[34]h\)$/m);

  // status --wait on a finished job saves at once; the default name is never overwritten.
  const saved = await gw(["video", "status", id, "--wait"], { env: env(), cwd });
  t.is(saved.code, 0, saved.stderr);
  t.is(saved.stdout, `video-${id}.mp4\n`);
  const again = await gw(["video", "status", id, "--wait"], { env: env(), cwd });
  t.not(again.code, 0);
  t.regex(again.stderr, new RegExp(`video-${id}\\.mp4 already exists; pass -o FILE`));

  // -o - writes the clip to a pipe.
  const piped = await gwBytes(["video", "status", id, "--wait", "-o", "-"]);
  t.is(piped.code, 0, piped.stderr);
  const pipedFile = path.join(cwd, "piped.mp4");
  writeFileSync(pipedFile, piped.stdout);
  t.like(await probe(pipedFile), { codec: "h264", width: 640, height: 480 });

  // generate --json: the 202 body.
  const queued = await gw(["video", "generate", "json", "--image", photo, "--duration", "1", "--resolution", "480p", "--json"], { env: env() });
  t.is(queued.code, 0, queued.stderr);
  const body = json<VideoJobBody>(queued);
  t.deepEqual(Object.keys(body).sort(), ["id", "model", "queuedAt", "status"]);
  t.like(body, { status: "QUEUED", model: "local/kenburns" });
  await waitFinished(body.id);
});

test.serial("cancel: a long job cancelled right after submit; cancelling it again is the server's 409, non-zero; waiting on it fails", async (t) => {
  const submitted = await gw(["video", "generate", "a long one", "--image", photo, "--duration", "30", "--resolution", "1080p", "--json"], { env: env() });
  t.is(submitted.code, 0, submitted.stderr);
  const id = json<VideoJobBody>(submitted).id;
  const cancelled = await gw(["video", "cancel", id, "--json"], { env: env() });
  t.is(cancelled.code, 0, cancelled.stderr);
  const job = json<VideoJobBody>(cancelled);
  t.like(job, { id, status: "CANCELLED", error: "cancelled by client" });
  t.truthy(job.finishedAt);

  const again = await gw(["video", "cancel", id], { env: env() });
  t.not(again.code, 0);
  t.is(again.stdout, "");
  const conflict = await api("DELETE", `/v1/video/jobs/${id}`);
  t.is(conflict.status, 409);
  t.is(conflict.body.error.code, "video_job_finished");
  t.is(again.stderr.trim(), conflict.body.error.message);
  t.regex(again.stderr, /already finished \(CANCELLED\)/);

  const waited = await gw(["video", "status", id, "--wait", "--json"], { env: env(), cwd: workDir() });
  t.not(waited.code, 0);
  t.is(json<VideoJobBody>(waited).status, "CANCELLED", "the final job is printed with --json");
  t.regex(waited.stderr, new RegExp(`the video job ${id} ended CANCELLED: cancelled by client`));

  // The readable form of a cancel.
  const other = json<VideoJobBody>(
    await gw(["video", "generate", "x", "--image", photo, "--duration", "30", "--resolution", "1080p", "--json"], { env: env() }),
  );
  const plain = await gw(["video", "cancel", other.id], { env: env() });
  t.is(plain.code, 0, plain.stderr);
  t.regex(plain.stdout, new RegExp(`^id {8}${other.id}\\nstatus {4}CANCELLED\\n`));
  t.regex(plain.stdout, /^error {5}cancelled by client$/m);
});

test.serial("Ctrl-C while waiting stops waiting without cancelling: exit 130 and how to resume or cancel", async (t) => {
  const cwd = workDir();
  const environment: NodeJS.ProcessEnv = { ...process.env, ...env() };
  delete environment.NODE_ENV;
  const child = spawn(
    process.execPath,
    [gwBin, "video", "generate", "interrupted", "--image", photo, "--duration", "30", "--resolution", "1080p", "--wait", "-o", "later clip.mp4"],
    { env: environment, cwd, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  await new Promise<void>((resolve) => {
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
      if (/ QUEUED /.test(stderr)) resolve();
    });
  });
  const id = /^(vid_\w+)/.exec(stderr)![1]!;
  child.kill("SIGINT");
  t.is(await exited, 130, stderr);
  t.is(stdout, "");
  t.true(stderr.includes(`stopped waiting; the video job ${id} goes on at the gateway`), stderr);
  t.true(stderr.includes(`gw video status ${id} --wait -o 'later clip.mp4'`), stderr);
  t.true(stderr.includes(`gw video cancel ${id}`), stderr);
  // Proving a cancel does NOT come: one the CLI sent before it exited is already on its way to
  // this process's server; a short moment lets the server act on it before we look.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const job = await api("GET", `/v1/video/jobs/${id}`);
  t.true(["QUEUED", "SUBMITTED"].includes(job.body.status), `still running: ${JSON.stringify(job.body)}`);
  t.deepEqual(readdirSync(cwd), []);
  t.is((await api("DELETE", `/v1/video/jobs/${id}`)).status, 200);
});

test.serial("a terminal gets one status line rewritten in place; -o - is refused on a terminal before anything is queued", async (t) => {
  const cwd = workDir();
  const live = await gwOnTerminal(
    ["video", "generate", "on a terminal", "--image", photo, "--duration", "3", "--resolution", "480p", "--wait", "-o", "tty.mp4"],
    80,
    cwd,
  );
  t.is(live.code, 0, live.output);
  // Each frame starts with a carriage return and "erase line"; the last one ends the line.
  const frames = live.output.split("\r\u001b[2K");
  t.is(frames[0], "", live.output);
  t.regex(frames[1]!, /^vid_\w+ {2}QUEUED {2}0:0\d elapsed$/);
  t.true(frames.length > 3, "redrawn while it runs");
  t.regex(frames.at(-1)!, /^vid_\w+ {2}SUCCEEDED {2}\d+:\d\d elapsed\r?\ntty\.mp4\r?\n$/);
  t.like(await probe(path.join(cwd, "tty.mp4")), { codec: "h264", width: 854, height: 480 });

  const before = await jobCount();
  const refused = await gwOnTerminal(["video", "generate", "not on a terminal", "--image", photo, "--wait", "-o", "-"]);
  t.not(refused.code, 0, refused.output);
  t.regex(refused.output, /-o - writes the video to stdout, which is a terminal/);
  t.is(await jobCount(), before, "nothing was queued");
});

test.serial("gw video ls: newest first, --json the API body, --limit, the ids never cut on a narrow terminal", async (t) => {
  const table = await gw(["video", "ls"], { env: env() });
  t.is(table.code, 0, table.stderr);
  const lines = table.stdout.trim().split("\n");
  t.regex(lines[0]!, /^ID\s+STATUS\s+MODEL\s+QUEUED\s+FINISHED$/);
  const listed = (await api("GET", "/v1/video/jobs")).body.data as VideoJobBody[];
  t.true(listed.length >= 5);
  t.deepEqual(
    lines.slice(1).map((line) => line.split(/\s+/)[0]),
    listed.map((job) => job.id),
  );
  const ago = String.raw`(?:\d+[smh] ago|just now)`;
  for (const status of ["SUCCEEDED", "CANCELLED"]) {
    t.true(
      lines.some((line) => new RegExp(`^vid_\\w+\\s+${status}\\s+local/kenburns\\s+${ago}\\s+${ago}$`).test(line)),
      `${status}: ${table.stdout}`,
    );
  }

  const limited = await gw(["video", "ls", "--limit", "2", "--json"], { env: env() });
  t.is(limited.code, 0, limited.stderr);
  t.deepEqual(json(limited), (await api("GET", "/v1/video/jobs?limit=2")).body);
  t.is(json<{ data: unknown[] }>(limited).data.length, 2);

  const narrow = await gwOnTerminal(["video", "ls"], 72);
  t.is(narrow.code, 0, narrow.output);
  const rows = narrow.output.replaceAll("\r", "").trim().split("\n");
  for (const row of rows) t.true(row.length <= 72, `${row.length} > 72: ${row}`);
  t.deepEqual(
    rows.slice(1).map((row) => row.split(/\s+/)[0]),
    listed.map((job) => job.id),
    "whole ids",
  );
  t.true(
    rows.slice(1).every((row) => /\slocal\/\S*…\s/.test(row)),
    `the model gave up room: ${narrow.output}`,
  );

  const empty = await gw(["video", "ls"], { env: env(await addKey(home, "newcomer", "pro")) });
  t.is(empty.code, 0, empty.stderr);
  t.is(empty.stdout, "");
  t.regex(empty.stderr, /no video jobs yet/);
});

test.serial("gw catalog video: reference photo, lengths, resolutions, ratios and dollar prices; --json the API body; no key needed", async (t) => {
  const summary = await gw(["catalog", "video"], { env: env(null) });
  t.is(summary.code, 0, summary.stderr);
  const lines = summary.stdout.trim().split("\n");
  t.regex(lines[0]!, /^ID\s+PHOTO\s+SECONDS\s+RESOLUTIONS\s+RATIOS\s+PER SECOND$/);
  t.regex(lines[1]!, /^local\/kenburns\s+required\s+1-30 \(5\*\)\s+480p,720p\*,1080p\s+16:9\*,9:16,1:1,4:3,3:4\s+free$/);
  t.regex(
    lines[2]!,
    /^local\/kenburns-priced\s+required\s+1-30 \(5\*\)\s+480p,720p\*,1080p\s+16:9\*,9:16,1:1,4:3,3:4\s+480p \$0\.001, 720p \$0\.05, 1080p \$0\.30$/,
  );
  t.is(lines.at(-1), "* the default");

  const asJson = await gw(["catalog", "video", "--json"], { env: env(null) });
  t.is(asJson.code, 0, asJson.stderr);
  t.deepEqual(json(asJson), await (await fetch(`${gateway.url}/v1/public/video-models`)).json());

  const narrow = await gwOnTerminal(["catalog", "video"], 80);
  t.is(narrow.code, 0, narrow.output);
  for (const row of narrow.output.replaceAll("\r", "").trim().split("\n")) t.true(row.length <= 80, `${row.length} > 80: ${row}`);
});

test.serial("errors: the server's message and a non-zero exit; usage errors before any request", async (t) => {
  const before = await jobCount();
  const noPhoto = await gw(["video", "generate", "text only"], { env: env() });
  t.not(noPhoto.code, 0);
  t.is(noPhoto.stdout, "");
  const answer = await fetch(`${gateway.url}/v1/video/generations`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ prompt: "text only" }),
  });
  t.is(answer.status, 400);
  const refusal = ((await answer.json()) as { error: { message: string } }).error.message;
  t.is(noPhoto.stderr.trim(), refusal);
  t.regex(refusal, /local\/kenburns makes a clip from a reference photo/);

  const tooLong = await gw(["video", "generate", "x", "--image", photo, "--duration", "31", "--wait"], { env: env() });
  t.not(tooLong.code, 0);
  t.regex(tooLong.stderr, /1 to 30 seconds; 31 was asked/);
  const badRatio = await gw(["video", "generate", "x", "--image", photo, "--ratio", "2:1"], { env: env() });
  t.not(badRatio.code, 0);
  t.regex(badRatio.stderr, /offers the ratios 16:9, 9:16, 1:1, 4:3, 3:4; 2:1 was asked/);

  const missing = await gw(["video", "generate", "x", "--image", "no-such-photo.png"], { env: env() });
  t.not(missing.code, 0);
  t.regex(missing.stderr, /--image no-such-photo\.png: no such file/);
  const textFile = path.join(workDir(), "notes.txt");
  writeFileSync(textFile, "not a picture at all");
  const notPicture = await gw(["video", "generate", "x", "--image", textFile], { env: env() });
  t.not(notPicture.code, 0);
  t.regex(notPicture.stderr, /not a picture the gateway takes/);

  const outputWithoutWait = await gw(["video", "generate", "x", "--image", photo, "-o", "clip.mp4"], { env: env() });
  t.not(outputWithoutWait.code, 0);
  t.regex(outputWithoutWait.stderr, /-o saves the finished clip, so it needs --wait/);
  const both = await gw(["video", "generate", "x", "--image", photo, "--wait", "-o", "-", "--json"], { env: env() });
  t.not(both.code, 0);
  t.regex(both.stderr, /both want stdout/);
  const noDirectory = await gw(["video", "generate", "x", "--image", photo, "--wait", "-o", "no/such/dir/clip.mp4"], { env: env() });
  t.not(noDirectory.code, 0);
  t.regex(noDirectory.stderr, /the directory no\/such\/dir does not exist/);
  const fastPolling = await gw(["video", "generate", "x", "--image", photo, "--wait", "--poll-interval", "0.01"], { env: env() });
  t.not(fastPolling.code, 0);
  t.regex(fastPolling.stderr, /--poll-interval must be from 0\.5 to 300 seconds/);
  t.is(await jobCount(), before, "no refusal queued a job");

  const unknown = await gw(["video", "status", "vid_01ARZ3NDEKTSV4RRFFQ69G5FAV"], { env: env() });
  t.not(unknown.code, 0);
  const notFound = await api("GET", "/v1/video/jobs/vid_01ARZ3NDEKTSV4RRFFQ69G5FAV");
  t.is(notFound.status, 404);
  t.is(unknown.stderr.trim(), notFound.body.error.message);
  const unknownWait = await gw(["video", "status", "vid_01ARZ3NDEKTSV4RRFFQ69G5FAV", "--wait"], { env: env() });
  t.not(unknownWait.code, 0);
  t.is(unknownWait.stderr.trim(), notFound.body.error.message);

  const badLimit = await gw(["video", "ls", "--limit", "0"], { env: env() });
  t.not(badLimit.code, 0);

  const noKey = await gw(["video", "ls"], { env: env(null) });
  t.not(noKey.code, 0);
  t.regex(noKey.stderr, /no API key/);
  t.false(existsSync(path.join(process.cwd(), "clip.mp4")));
});

test.serial("waiting rides out polls that fail for a passing reason (unreachable, 503 with Retry-After); a 404 ends it at once", async (t) => {
  // The first polls fail: the gateway unreachable, then busy with a Retry-After of 0.
  const planned = ["unreachable", "503"];
  const seen: string[] = [];
  const flaky: typeof fetch = async (input, init) => {
    const failure = String(input).includes("/v1/video/jobs/") ? planned.shift() : undefined;
    if (failure) seen.push(failure);
    if (failure === "503") {
      return new Response(JSON.stringify({ error: { message: "busy", type: "server_error", code: "busy" } }), {
        status: 503,
        headers: { "content-type": "application/json", "retry-after": "0" },
      });
    }
    if (failure === "unreachable") throw new TypeError("fetch failed", { cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }) });
    return fetch(input, init);
  };
  const client = new GwClient({ baseUrl: gateway.url, apiKey: key, fetch: flaky });
  const job = await client.video.generate({
    prompt: "flaky",
    image_url: `data:image/png;base64,${photoBytes.toString("base64")}`,
    duration_seconds: 1,
    resolution: "480p",
  });
  const retries: Array<[number, number]> = [];
  const updates: string[] = [];
  const final = await client.video.waitForJob(job.id, {
    intervalSeconds: 0.5,
    onRetry: (error, delay) => retries.push([error.status, delay]),
    onUpdate: (update) => updates.push(update.status),
  });
  t.is(final.status, "SUCCEEDED");
  t.deepEqual(seen, ["unreachable", "503"]);
  t.deepEqual(retries, [
    [0, 1],
    [503, 0],
  ]);
  t.is(updates.at(-1), "SUCCEEDED");
  const clip = await client.video.downloadClip(final);
  t.is(clip.contentType, "video/mp4");
  t.true((await new Response(clip.body).arrayBuffer()).byteLength > 1000);

  const missing = await client.video
    .waitForJob("vid_01ARZ3NDEKTSV4RRFFQ69G5FAV", { intervalSeconds: 0.5, onRetry: () => t.fail("a 404 is not retried") })
    .catch((error) => error);
  t.true(missing instanceof GwApiError);
  t.is((missing as GwApiError).status, 404);
});

test.serial("gw help video lists the commands", async (t) => {
  const help = await gw(["help", "video"]);
  t.is(help.code, 0, help.stderr);
  for (const command of ["generate", "status", "cancel", "ls"]) t.regex(help.stdout, new RegExp(`video ${command}\\b`), command);
  const root = await gw(["help"]);
  t.regex(root.stdout, /^\s+video\s+Generate video clips \(asynchronous jobs\)$/m);
});
