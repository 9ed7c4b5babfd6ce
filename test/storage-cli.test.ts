// `gw storage ...` run as a user runs it (built CLI, subprocesses) against a real gw: every
// command, --json printing exactly the API body, streamed uploads and downloads, errors.

import { execFile } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import test from "ava";
import { sparseFile, storageApi } from "./_storage.js";
import { addKey, gwBin, makeHome, quietLogger, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { tempDir } from "./helpers/temp-dirs.js";

let gateway: TestGateway;
let home: string;
const keys: Record<string, string> = {};

test.before(async () => {
  home = await makeHome((config) => {
    config.plans = { free: {}, pro: { requestsPerMinute: 100_000 }, max: {} };
  });
  gateway = await startTestGateway(home);
  for (const agent of ["flow", "json", "many", "big", "names", "errors"]) keys[agent] = await addKey(home, agent, "pro");
});

test.after.always(async () => {
  await gateway?.shutdown();
});

test.after("no request failed inside the gateway", (t) => {
  t.deepEqual(
    quietLogger.lines.filter((line) => line.startsWith("error")),
    [],
  );
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `gw` in a directory of its own, with the agent's key and the gateway's address. */
function gw(agent: string | null, args: string[], cwd = tempDir("gw-cli-storage-")): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, GW_HOME: home, GW_BASE_URL: gateway.url, GW_API_KEY: agent ? keys[agent] : undefined };
  delete env.NODE_ENV;
  if (!agent) delete env.GW_API_KEY;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [gwBin, ...args],
      { cwd, env, maxBuffer: 64 * 1024 * 1024, timeout: 120_000 /* a hang guard, as in _gw-cli.ts */ },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

function parsed<T = any>(run: Run): T {
  try {
    return JSON.parse(run.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${run.code}): ${run.stdout}\n${run.stderr}`);
  }
}

function workspace(files: Record<string, string | Buffer>): string {
  const directory = tempDir("gw-cli-files-");
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(directory, name), content);
  return directory;
}

test("upload, ls, get (-o FILE, -o -, default name), url, quota, rm: the whole round trip", async (t) => {
  const directory = workspace({ "notes.txt": "hello from the cli\n" });
  const upload = await gw("flow", ["storage", "upload", path.join(directory, "notes.txt")]);
  t.is(upload.code, 0, upload.stderr);
  const [id, name, , contentType] = upload.stdout.trim().split(/\s{2,}/);
  t.regex(id!, /^file_[0-9A-Z]{26}$/);
  t.is(name, "notes.txt");
  t.is(contentType, "text/plain");

  const ls = await gw("flow", ["storage", "ls"]);
  t.is(ls.code, 0);
  t.regex(ls.stdout, /^ID\s+NAME\s+SIZE\s+TYPE\s+CREATED\n/);
  t.true(ls.stdout.includes(id!));
  t.regex(ls.stderr, /page 1 of 1, 1 file in all/);

  const target = path.join(directory, "copy.txt");
  t.is((await gw("flow", ["storage", "get", id!, "-o", target])).code, 0);
  t.is(readFileSync(target, "utf8"), "hello from the cli\n");
  const toStdout = await gw("flow", ["storage", "get", id!, "-o", "-"]);
  t.is(toStdout.stdout, "hello from the cli\n");
  const here = tempDir("gw-cli-get-");
  const byName = await gw("flow", ["storage", "get", id!], here);
  t.is(byName.code, 0, byName.stderr);
  t.is(readFileSync(path.join(here, "notes.txt"), "utf8"), "hello from the cli\n");
  const again = await gw("flow", ["storage", "get", id!], here);
  t.is(again.code, 1);
  t.regex(again.stderr, /notes.txt already exists; pass -o FILE/);

  const url = await gw("flow", ["storage", "url", id!]);
  t.is(await (await fetch(url.stdout.trim())).text(), "hello from the cli\n");
  const quota = await gw("flow", ["storage", "quota"]);
  t.regex(
    quota.stdout,
    /^19 B of 5 GB used \(19 of 5368709120 bytes\)\n1 of 500 storage operations used this month \(\d{4}-\d{2}, UTC; uploads, presigned uploads and deletes count\)\n$/,
  );

  const rm = await gw("flow", ["storage", "rm", id!]);
  t.is(rm.code, 0);
  t.is(rm.stdout, `deleted ${id}\n`);
  const gone = await gw("flow", ["storage", "get", id!, "-o", path.join(directory, "gone.txt")]);
  t.is(gone.code, 1);
  t.is(gone.stderr, `File not found: ${id}\n`, "the error names the id");
  t.false(existsSync(path.join(directory, "gone.txt")));
});

test("--json prints exactly the API body", async (t) => {
  const client = storageApi(gateway, keys.json!);
  const directory = workspace({ "data.json": '{"a":1}' });
  const uploaded = parsed(await gw("json", ["storage", "upload", path.join(directory, "data.json"), "--json"]));
  t.deepEqual(Object.keys(uploaded), ["data"]);
  t.like(uploaded.data, { filename: "data.json", contentType: "application/json", sizeBytes: 7 });
  const id = uploaded.data.id as string;
  t.deepEqual(parsed(await gw("json", ["storage", "ls", "--json", "--page", "1", "--limit", "1"])), (await client.list("?page=1&limit=1")).body);
  t.deepEqual(parsed(await gw("json", ["storage", "quota", "--json"])), (await client.quota()).body);
  const url = parsed(await gw("json", ["storage", "url", id, "--json"]));
  t.deepEqual(Object.keys(url.data).sort(), ["contentType", "expiresIn", "filename", "url"]);
  t.like(url.data, { filename: "data.json", contentType: "application/json", expiresIn: 3600 });
  const saved = parsed(await gw("json", ["storage", "get", id, "-o", path.join(directory, "out.json"), "--json"]));
  t.deepEqual(saved, { id, filename: "data.json", contentType: "application/json", sizeBytes: 7, path: path.join(directory, "out.json") });
  t.deepEqual(parsed(await gw("json", ["storage", "rm", id, "--json"])), { message: "File deleted." });
});

test("several files in one upload, direct and presigned, with the type by extension or as given", async (t) => {
  const directory = workspace({ "a.png": Buffer.from([137, 80, 78, 71]), "b.csv": "x,y\n1,2\n", "c.unknown": "?" });
  const files = ["a.png", "b.csv", "c.unknown"].map((name) => path.join(directory, name));
  for (const extra of [[], ["--presigned"]]) {
    const run = await gw("many", ["storage", "upload", ...files, ...extra, "--json"]);
    t.is(run.code, 0, run.stderr);
    // One API body per file, one after another (jq reads them as a stream).
    const bodies = run.stdout
      .trim()
      .split(/\n(?=\{)/)
      .map((text) => JSON.parse(text) as { data: { filename: string; contentType: string; sizeBytes: number } });
    t.deepEqual(
      bodies.map((body) => [body.data.filename, body.data.contentType, body.data.sizeBytes]),
      [
        ["a.png", "image/png", 4],
        ["b.csv", "text/csv", 8],
        ["c.unknown", "application/octet-stream", 1],
      ],
    );
  }
  t.is((await storageApi(gateway, keys.many!).list()).body.pagination.total, 6);
});

test("large files stream both ways (direct and presigned); no progress line when stderr is not a terminal", async (t) => {
  const file = sparseFile(20 * 1024 * 1024);
  const ids: string[] = [];
  for (const extra of [[], ["--presigned", "--content-type", "application/x-custom"]]) {
    const run = await gw("big", ["storage", "upload", file, ...extra, "--json"]);
    t.is(run.code, 0, run.stderr);
    t.is(run.stderr, "");
    const { data } = JSON.parse(run.stdout) as { data: { id: string; sizeBytes: number; contentType: string } };
    t.is(data.sizeBytes, 20 * 1024 * 1024);
    t.is(data.contentType, extra.length ? "application/x-custom" : "application/octet-stream");
    ids.push(data.id);
  }
  const target = path.join(tempDir("gw-cli-big-"), "big.bin");
  const get = await gw("big", ["storage", "get", ids[1]!, "-o", target]);
  t.is(get.code, 0, get.stderr);
  t.is(get.stderr, `saved ${target} (20 MB)\n`);
  t.true(readFileSync(target).equals(readFileSync(file)));
});

test("names: unicode and spaces round-trip; a stored name never escapes the current directory", async (t) => {
  const directory = workspace({ "résumé 履歴書.txt": "unicode" });
  const uploaded = parsed(await gw("names", ["storage", "upload", path.join(directory, "résumé 履歴書.txt"), "--json"]));
  t.is(uploaded.data.filename, "résumé 履歴書.txt");
  const here = tempDir("gw-cli-names-");
  t.is((await gw("names", ["storage", "get", uploaded.data.id], here)).code, 0);
  t.is(readFileSync(path.join(here, "résumé 履歴書.txt"), "utf8"), "unicode");
  // A presigned record named like a path is saved under its last segment only.
  const client = storageApi(gateway, keys.names!);
  const presigned = (await client.presign({ filename: "../../escape.txt", contentType: "text/plain", sizeBytes: 2 })).body.data;
  await fetch(presigned.uploadUrl, { method: "PUT", headers: { "content-type": "text/plain" }, body: "ok" });
  t.is((await gw("names", ["storage", "get", presigned.id], here)).code, 0);
  t.is(readFileSync(path.join(here, "escape.txt"), "utf8"), "ok");
  t.false(existsSync(path.join(here, "..", "..", "escape.txt")));
});

test("errors: the server's message and a non-zero exit; local problems said plainly", async (t) => {
  const missing = await gw("errors", ["storage", "upload", "/nonexistent/file.bin"]);
  t.is(missing.code, 1);
  t.is(missing.stderr, "/nonexistent/file.bin: no such file\n");
  const limit = await gw("errors", ["storage", "ls", "--limit", "101"]);
  t.is(limit.code, 1);
  t.is(limit.stderr, "limit must be a whole number from 1 to 100.\n");
  const noKey = await gw(null, ["storage", "quota"]);
  t.is(noKey.code, 1);
  t.regex(noKey.stderr, /no API key/);
});
