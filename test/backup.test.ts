// `gw backup` and `gw restore`, the built CLI against a real gateway: a backup taken while chat
// calls and uploads keep arriving restores into a home that serves the same keys, balances (those
// of the snapshot: a prefix of the live usage log), files and signed links; a damaged or hostile
// archive is refused before anything reaches the home.

import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import test from "ava";
import { create as createTar, extract as extractTar, Header, list as listTar } from "tar";
import { homePaths } from "../src/config/paths.js";
import { periodOf, type UsageRow } from "../src/store/usage-log.js";
import { storageApi } from "./_storage.js";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai.js";
import { addKey, gw, gwBin, json, makeHome, type RawConfig, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

interface BackupSummary {
  path: string;
  files: number;
  bytes: number;
  dataBytes: number;
  notes: string[];
  contents: { agents: number; keys: number; storedFiles: number; usagePeriods: string[] };
}

interface ManifestFile {
  path: string;
  size: number;
  sha256: string;
}

const AGENTS = ["alice", "bob", "carol"];
/** Rounds each agent's burst runs at most; it stops as soon as the backup is done. */
const MAX_BURST_ROUNDS = 300;

let fake: FakeOpenAI;
let home: string;
let live: TestGateway;
let work: string;
let archive: string;
let summary: BackupSummary;
const keys: Record<string, string> = {};
/** Every file uploaded, by its (unique) name: what a download must answer. */
const uploaded = new Map<string, Buffer>();
/** Names uploaded before the backup started: they must all be in it. */
const beforeBackup = new Set<string>();
let signedLink: string;
let signedName: string;
let burstRounds = 0;

function configure(config: RawConfig): void {
  config.providers = { fake: { type: "openai", baseUrl: fake.url, apiKey: "sk-upstream-secret" } };
  config.routes = [{ prefix: "fake/", provider: "fake" }];
  config.models = [
    { id: "fake/gpt-test", name: "GPT Test", context_length: 8192, created: 1700000000, pricing: { input_per_mtok: 1000, output_per_mtok: 2000 } },
  ];
  config.plans = { free: {}, pro: { requestsPerMinute: 100_000, storageOperationsPerPeriod: 100_000 }, max: {} };
}

/** Distinct bytes per name, a few kilobytes to a few dozen, so writes take a moment. */
function bytesFor(name: string): Buffer {
  const seed = createHash("sha256").update(name).digest();
  return Buffer.concat(Array.from({ length: 100 + (seed[0]! % 200) }, () => seed));
}

async function chat(gateway: TestGateway, agent: string): Promise<void> {
  const response = await fetch(`${gateway.v1}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${keys[agent]}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "fake/gpt-test", messages: [{ role: "user", content: `hello from ${agent}` }] }),
  });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`chat for ${agent} answered ${response.status}`);
}

async function upload(gateway: TestGateway, agent: string, name: string): Promise<string> {
  const bytes = bytesFor(name);
  const result = await storageApi(gateway, keys[agent]!).upload(name, bytes);
  if (result.status !== 201) throw new Error(`upload ${name} answered ${result.status}: ${result.text}`);
  uploaded.set(name, bytes);
  return result.body.data.id as string;
}

function creditsByAgent(log: Buffer): Map<string, number> {
  const totals = new Map<string, number>();
  for (const line of log.toString("utf8").split("\n")) {
    if (!line) continue;
    const row = JSON.parse(line) as UsageRow;
    totals.set(row.agent, (totals.get(row.agent) ?? 0) + row.credits);
  }
  return totals;
}

async function manifestOf(file: string): Promise<ManifestFile[]> {
  const directory = mkdtempSync(path.join(work, "manifest-"));
  await extractTar({ file, cwd: directory }, ["manifest.json"]);
  return (JSON.parse(readFileSync(path.join(directory, "manifest.json"), "utf8")) as { files: ManifestFile[] }).files;
}

async function entriesOf(file: string): Promise<string[]> {
  const names: string[] = [];
  await listTar({ file, onReadEntry: (entry) => names.push(entry.path) });
  return names;
}

/** A fresh path for a home that does not exist yet. */
function newHomePath(label: string): string {
  return path.join(mkdtempSync(path.join(work, `${label}-`)), "home");
}

/** Staging folders a restore leaves next to the home (none, whatever happened). */
function leftovers(target: string): string[] {
  return readdirSync(path.dirname(target)).filter((name) => name.includes("gw-restore"));
}

test.before(async () => {
  work = mkdtempSync(path.join(os.tmpdir(), "gw-backup-test-"));
  archive = path.join(work, "snapshot.tar.gz");
  fake = await startFakeOpenAI();
  home = await makeHome(configure);
  for (const agent of AGENTS) keys[agent] = await addKey(home, agent, "pro");

  // First some usage and files, then a clean stop: the high-water mark on disk now claims these
  // rows, so the archive's mark is not empty and the restored home must agree with it.
  const first = await startTestGateway(home);
  for (const agent of AGENTS) {
    for (let n = 0; n < 3; n += 1) await chat(first, agent);
    for (let n = 0; n < 2; n += 1) await upload(first, agent, `${agent}-early-${n}.bin`);
  }
  await first.shutdown();

  live = await startTestGateway(home);
  signedName = "alice-signed.bin";
  const signedId = await upload(live, "alice", signedName);
  signedLink = (await storageApi(live, keys.alice!).url(signedId)).body.data.url as string;

  // The burst: every agent chats and uploads, round after round, until the backup is done. The
  // backup starts once every agent finished a first round, so writes are under way when it begins.
  let backupDone = false;
  const firstRounds: Array<Promise<void>> = [];
  const bursts = AGENTS.map((agent) => {
    let firstDone!: () => void;
    firstRounds.push(new Promise<void>((resolve) => (firstDone = resolve)));
    return (async () => {
      for (let round = 0; round < MAX_BURST_ROUNDS && (round === 0 || !backupDone); round += 1) {
        await Promise.all([chat(live, agent), chat(live, agent), upload(live, agent, `${agent}-burst-${round}.bin`)]);
        burstRounds += 1;
        if (round === 0) firstDone();
      }
    })();
  });
  await Promise.all(firstRounds);
  for (const name of uploaded.keys()) beforeBackup.add(name);
  const result = await gw(["backup", "--home", home, "-o", archive, "--json"]);
  backupDone = true;
  await Promise.all(bursts);
  if (result.code !== 0) throw new Error(`gw backup failed: ${result.stderr}`);
  summary = json<BackupSummary>(result);
});

test.after.always(async () => {
  await live?.shutdown();
  await fake?.close();
  for (const directory of [work, home]) if (directory) rmSync(directory, { recursive: true, force: true });
});

test("the backup reports what it wrote and its manifest lists every file with its checksum", async (t) => {
  t.true(burstRounds >= AGENTS.length);
  t.is(summary.path, archive);
  t.true(existsSync(archive));
  t.is(summary.bytes, readFileSync(archive).length);
  t.is(summary.contents.agents, AGENTS.length);
  t.is(summary.contents.keys, AGENTS.length);
  t.deepEqual(summary.contents.usagePeriods, [periodOf(new Date())]);
  const entries = await entriesOf(archive);
  const manifest = await manifestOf(archive);
  t.is(entries[0], "manifest.json");
  t.deepEqual(
    entries.slice(1),
    manifest.map((file) => file.path),
  );
  t.is(manifest.length, summary.files);
  t.is(
    manifest.reduce((sum, file) => sum + file.size, 0),
    summary.dataBytes,
  );
  for (const name of [
    "config.json",
    "data/metadata.json",
    "data/usage-watermark.json",
    "data/storage/signing.key",
    `data/usage/${periodOf(new Date())}.jsonl`,
  ]) {
    t.true(
      manifest.some((file) => file.path === name),
      name,
    );
  }
  // The mark and the log agree exactly: the restored home opens, with the copy's balances.
  const unpacked = mkdtempSync(path.join(work, "mark-"));
  const period = periodOf(new Date());
  await extractTar({ file: archive, cwd: unpacked }, ["data/usage-watermark.json", `data/usage/${period}.jsonl`]);
  const mark = JSON.parse(readFileSync(path.join(unpacked, "data/usage-watermark.json"), "utf8")) as {
    periods: Record<string, { rows: number; bytes: number }>;
  };
  const log = readFileSync(path.join(unpacked, `data/usage/${period}.jsonl`));
  t.is(mark.periods[period]?.rows, log.toString("utf8").split("\n").filter(Boolean).length);
  t.is(mark.periods[period]?.bytes, log.length);
  t.false(
    manifest.some((file) => /\.tmp$|\.lock\/|\/\.partial\//.test(file.path)),
    "no temp files, locks or partial uploads",
  );
});

test.serial("a restored home serves the same keys, the snapshot's balances, every file and the earlier signed link", async (t) => {
  const target = newHomePath("restored");
  const restored = await gw(["restore", archive, "--home", target, "--json"]);
  t.is(restored.code, 0, restored.stderr);
  t.is(json<{ home: string; files: number }>(restored).files, summary.files);
  t.deepEqual(leftovers(target), []);
  const copy = await startTestGateway(target);
  try {
    // Keys: every one authenticates, anything else does not.
    for (const agent of AGENTS) t.is((await storageApi(copy, keys[agent]!).quota()).status, 200, agent);
    t.is((await storageApi(copy, `${keys.alice!.slice(0, -4)}zzzz`).quota()).status, 401);

    // Balances: the restored log is a byte prefix of the live one (the snapshot), its credits are
    // what the restored gateway counts, and never more than the live gateway counts now.
    const period = periodOf(new Date());
    const liveLog = readFileSync(path.join(homePaths(home).usageDir, `${period}.jsonl`));
    const restoredLog = readFileSync(path.join(homePaths(target).usageDir, `${period}.jsonl`));
    t.true(restoredLog.length > 0);
    t.true(liveLog.subarray(0, restoredLog.length).equals(restoredLog), "the restored usage log is a prefix of the live one");
    const snapshotCredits = creditsByAgent(restoredLog);
    for (const agent of copy.gateway.store.data.agents) {
      const credits = snapshotCredits.get(agent.id) ?? 0;
      t.true(credits > 0, agent.name);
      t.is((await copy.gateway.ledger.planBalance(agent.id, 0)).used, credits, agent.name);
      t.true(credits <= (await live.gateway.ledger.planBalance(agent.id, 0)).used, agent.name);
    }

    // Files: every restored record downloads with its bytes; everything stored before the backup is there.
    const names = new Set<string>();
    for (const agent of AGENTS) {
      const client = storageApi(copy, keys[agent]!);
      for (let page = 1; ; page += 1) {
        const listed = await client.list(`?limit=100&page=${page}`);
        t.is(listed.status, 200);
        const files = listed.body.data as Array<{ id: string; filename: string; sizeBytes: number }>;
        for (const file of files) {
          names.add(file.filename);
          const expected = uploaded.get(file.filename);
          t.truthy(expected, file.filename);
          const link = (await client.url(file.id)).body.data.url as string;
          const download = await fetch(link);
          t.is(download.status, 200, file.filename);
          t.true(Buffer.from(await download.arrayBuffer()).equals(expected!), file.filename);
        }
        if (files.length < 100) break;
      }
    }
    for (const name of beforeBackup) t.true(names.has(name), name);
    t.is(names.size, summary.contents.storedFiles);

    // The link signed by the original home works on the restored one (same signing key).
    const original = new URL(signedLink);
    const again = await fetch(`${copy.url}${original.pathname}${original.search}`);
    t.is(again.status, 200);
    t.true(Buffer.from(await again.arrayBuffer()).equals(uploaded.get(signedName)!));
  } finally {
    await copy.shutdown();
  }
});

test("one changed byte in one file refuses the restore, naming the file, before anything reaches the home", async (t) => {
  const manifest = await manifestOf(archive);
  const unpacked = mkdtempSync(path.join(work, "tamper-"));
  await extractTar({ file: archive, cwd: unpacked });
  const victim = manifest.find((file) => file.path.startsWith("data/blobs/"))!;
  const file = path.join(unpacked, victim.path);
  const bytes = readFileSync(file);
  bytes[10] = bytes[10]! ^ 0xff;
  writeFileSync(file, bytes);
  const tampered = path.join(work, "tampered.tar.gz");
  await createTar({ gzip: true, portable: true, cwd: unpacked, file: tampered }, ["manifest.json", ...manifest.map((entry) => entry.path)]);
  const target = newHomePath("tampered");
  const result = await gw(["restore", tampered, "--home", target]);
  t.not(result.code, 0);
  t.true(result.stderr.includes(victim.path), result.stderr);
  t.regex(result.stderr, /checksum/);
  t.regex(result.stderr, /nothing was written/);
  t.false(existsSync(target));
  t.deepEqual(leftovers(target), []);
});

test("a home that is not empty is refused; --force sets its gw files aside and leaves the rest", async (t) => {
  const target = newHomePath("occupied");
  const init = await gw(["init", "--home", target]);
  t.is(init.code, 0, init.stderr);
  writeFileSync(path.join(target, "operator-notes.txt"), "mine");
  const oldConfig = readFileSync(homePaths(target).config);
  const refused = await gw(["restore", archive, "--home", target]);
  t.not(refused.code, 0);
  t.regex(refused.stderr, /is not empty/);
  t.regex(refused.stderr, /--force/);
  t.true(readFileSync(homePaths(target).config).equals(oldConfig), "nothing changed");

  const forced = await gw(["restore", archive, "--home", target, "--force", "--json"]);
  t.is(forced.code, 0, forced.stderr);
  const { setAside } = json<{ setAside: string }>(forced);
  t.is(path.dirname(setAside), target);
  t.true(readFileSync(path.join(setAside, "config.json")).equals(oldConfig), "the old config is set aside, not deleted");
  t.is(readFileSync(path.join(target, "operator-notes.txt"), "utf8"), "mine");
  const restoredMetadata = JSON.parse(readFileSync(homePaths(target).metadata, "utf8")) as { keys: unknown[] };
  t.is(restoredMetadata.keys.length, AGENTS.length);
});

/** A gzipped tar built header by header: what no well-behaved tool would write. */
function rawArchive(entries: Array<{ path: string; type?: "File" | "SymbolicLink" | "Link" | "Directory"; body?: Buffer; linkpath?: string }>): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const type = entry.type ?? "File";
    const body = entry.body ?? Buffer.alloc(0);
    const block = Buffer.alloc(512);
    new Header({ path: entry.path, type, size: type === "File" ? body.length : 0, mode: 0o644, mtime: new Date(0), linkpath: entry.linkpath }).encode(block, 0);
    blocks.push(block);
    if (type === "File" && body.length > 0) blocks.push(body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

function manifestFor(files: Array<{ path: string; body: Buffer }>): Buffer {
  return Buffer.from(
    JSON.stringify({
      format: "gw-backup",
      version: 1,
      gwVersion: "0.1.0",
      createdAt: new Date(0).toISOString(),
      sourceHome: "/elsewhere",
      contents: { agents: 0, keys: 0, storedFiles: 0, usagePeriods: [] },
      files: files.map((file) => ({ path: file.path, size: file.body.length, sha256: createHash("sha256").update(file.body).digest("hex") })),
    }),
  );
}

test("hostile archives are refused with the reason, and nothing is written anywhere", async (t) => {
  const config = readFileSync(homePaths(home).config);
  const evil = Buffer.from("evil");
  const cases: Array<[string, Buffer, RegExp]> = [
    [
      "path traversal",
      rawArchive([
        { path: "manifest.json", body: manifestFor([{ path: "config.json", body: config }]) },
        { path: "config.json", body: config },
        { path: "../evil.txt", body: evil },
      ]),
      /\.\.\/evil\.txt climbs out/,
    ],
    [
      "traversal inside a gw folder",
      rawArchive([
        { path: "manifest.json", body: manifestFor([{ path: "config.json", body: config }]) },
        { path: "data/../../evil.txt", body: evil },
      ]),
      /climbs out/,
    ],
    [
      "absolute path",
      rawArchive([
        { path: "manifest.json", body: manifestFor([]) },
        { path: "/tmp/gw-evil.txt", body: evil },
      ]),
      /absolute path/,
    ],
    [
      "symbolic link",
      rawArchive([
        { path: "manifest.json", body: manifestFor([]) },
        { path: "data/link", type: "SymbolicLink", linkpath: "/etc/passwd" },
      ]),
      /symbolic link/,
    ],
    [
      "hard link",
      rawArchive([
        { path: "manifest.json", body: manifestFor([]) },
        { path: "data/link", type: "Link", linkpath: "/etc/passwd" },
      ]),
      /hard link/,
    ],
    [
      "an entry outside the manifest",
      rawArchive([
        { path: "manifest.json", body: manifestFor([{ path: "config.json", body: config }]) },
        { path: "config.json", body: config },
        { path: "data/extra.json", body: evil },
      ]),
      /data\/extra\.json is not in the manifest/,
    ],
    [
      "a file of the manifest missing",
      rawArchive([{ path: "manifest.json", body: manifestFor([{ path: "config.json", body: config }]) }]),
      /not in the archive \(config\.json\)/,
    ],
    [
      "a manifest naming a path outside the home",
      rawArchive([{ path: "manifest.json", body: manifestFor([{ path: "../evil.txt", body: evil }]) }]),
      /not a path inside a gw home/,
    ],
    ["no manifest first", rawArchive([{ path: "config.json", body: config }]), /not manifest\.json/],
    ["not an archive", gzipSync(Buffer.from("hello, not a tar at all")), /not a readable gw backup/],
  ];
  for (const [label, bytes, reason] of cases) {
    const file = path.join(work, `${label.replace(/\W+/g, "-")}.tar.gz`);
    writeFileSync(file, bytes);
    const target = newHomePath("hostile");
    const result = await gw(["restore", file, "--home", target]);
    t.not(result.code, 0, label);
    t.regex(result.stderr, reason, label);
    t.false(existsSync(target), label);
    t.deepEqual(leftovers(target), [], label);
    t.false(existsSync(path.join(path.dirname(target), "evil.txt")), label);
    t.false(existsSync(path.join(path.dirname(path.dirname(target)), "evil.txt")), label);
  }
  t.false(existsSync("/tmp/gw-evil.txt"));
});

test("uploads in flight, orphan blobs, temp files, locks and caches stay out; a blob deleted meanwhile drops its record", async (t) => {
  const crafted = await makeHome(configure);
  await addKey(crafted, "dave", "pro");
  const paths = homePaths(crafted);
  const agentId = (JSON.parse(readFileSync(paths.metadata, "utf8")) as { agents: Array<{ id: string }> }).agents[0]!.id;
  const records = path.join(paths.dataDir, "storage", "records", agentId);
  const blobs = path.join(paths.blobsDir, agentId);
  mkdirSync(records, { recursive: true });
  mkdirSync(blobs, { recursive: true });
  const record = (id: string, state: string, sizeBytes = 4) => ({
    id,
    agentId,
    filename: `${id}.bin`,
    contentType: "application/octet-stream",
    sizeBytes,
    createdAt: new Date().toISOString(),
    state,
    ...(state === "pending" ? { uploadExpires: Math.floor(Date.now() / 1000) + 3600 } : {}),
  });
  const ids = {
    ready: "file_01JAAAAAAAAAAAAAAAAAAAAAAA",
    uploading: "file_01JBBBBBBBBBBBBBBBBBBBBBBB",
    pending: "file_01JCCCCCCCCCCCCCCCCCCCCCCC",
    vanished: "file_01JDDDDDDDDDDDDDDDDDDDDDDD",
    orphan: "file_01JEEEEEEEEEEEEEEEEEEEEEEE",
  };
  writeFileSync(path.join(records, `${ids.ready}.json`), JSON.stringify(record(ids.ready, "ready")));
  writeFileSync(path.join(blobs, ids.ready), "keep");
  writeFileSync(path.join(records, `${ids.uploading}.json`), JSON.stringify(record(ids.uploading, "uploading", 0)));
  writeFileSync(path.join(records, `${ids.pending}.json`), JSON.stringify(record(ids.pending, "pending")));
  writeFileSync(path.join(records, `${ids.vanished}.json`), JSON.stringify(record(ids.vanished, "ready")));
  writeFileSync(path.join(blobs, ids.orphan), "orph");
  writeFileSync(path.join(records, `${ids.ready}.json.123.abcdef.tmp`), "{");
  mkdirSync(path.join(paths.blobsDir, ".partial"), { recursive: true });
  writeFileSync(path.join(paths.blobsDir, ".partial", "999999-0011223344556677"), "half an upload");
  writeFileSync(path.join(paths.usageDir, "key-totals.json"), "{}");
  writeFileSync(path.join(paths.dataDir, ".metadata.json.tmp"), "{");
  mkdirSync(paths.tlsDir, { recursive: true });
  writeFileSync(paths.tlsCert, "certificate");
  mkdirSync(path.join(paths.dataDir, "projects"), { recursive: true });
  writeFileSync(path.join(paths.dataDir, "projects", `${agentId}.json`), JSON.stringify({ version: 1, projects: [] }));
  mkdirSync(path.join(paths.dataDir, "projects", `${agentId}.json.lock`));
  writeFileSync(path.join(crafted, "operator-notes.txt"), "not gw's");

  const output = path.join(work, "crafted.tar.gz");
  const result = await gw(["backup", "--home", crafted, "-o", output, "--json"]);
  t.is(result.code, 0, result.stderr);
  const report = json<BackupSummary>(result);
  const names = (await entriesOf(output)).slice(1);
  const recordsPath = `data/storage/records/${agentId}`;
  t.deepEqual(names.filter((name) => name.includes(agentId)).sort(), [
    `data/blobs/${agentId}/${ids.ready}`,
    `data/projects/${agentId}.json`,
    `${recordsPath}/${ids.ready}.json`,
    `${recordsPath}/${ids.pending}.json`,
  ]);
  t.true(names.includes("tls/cert.pem"));
  t.false(
    names.some((name) => /key-totals|\.tmp|\.lock|\.partial|operator-notes/.test(name)),
    names.join(" "),
  );
  t.is(report.contents.storedFiles, 2);
  t.true(report.notes.some((note) => note.includes(ids.vanished) && /deleted during the backup/.test(note)));
  t.true(report.notes.some((note) => /1 upload in flight left out/.test(note)));
  t.true(existsSync(path.join(records, `${ids.vanished}.json`)), "the live home is not changed");
  t.deepEqual(
    readdirSync(crafted).filter((name) => name.startsWith(".gw-backup")),
    [],
    "no staging folder left behind",
  );

  // The archive restores, and the home opens with the ready file and the pending upload.
  const target = newHomePath("crafted");
  const restored = await gw(["restore", output, "--home", target]);
  t.is(restored.code, 0, restored.stderr);
  t.false(existsSync(path.join(target, "operator-notes.txt")));
  const copy = await startTestGateway(target);
  try {
    const file = await copy.gateway.storage.findFile(agentId, ids.ready);
    t.is(file?.state, "ready");
  } finally {
    await copy.shutdown();
  }
});

/** The built gw with stdin and stdout on files (binary both ways), stderr collected. */
function gwWithFiles(args: string[], files: { stdin?: string; stdout?: string }): Promise<{ code: number | null; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_ENV; // as in _gw-cli.ts: run the built commands, as a user's shell does
  const stdin = files.stdin ? openSync(files.stdin, "r") : "ignore";
  const stdout = files.stdout ? openSync(files.stdout, "w") : "ignore";
  const child = spawn(process.execPath, [gwBin, ...args], { env, stdio: [stdin, stdout, "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  return new Promise((resolve) =>
    child.on("close", (code) => {
      for (const fd of [stdin, stdout]) if (typeof fd === "number") closeSync(fd);
      resolve({ code, stderr });
    }),
  );
}

test("-o - writes the archive to stdout (the summary to stderr), and `restore -` reads one from stdin", async (t) => {
  const piped = path.join(work, "piped.tar.gz");
  const backup = await gwWithFiles(["backup", "--home", home, "-o", "-"], { stdout: piped });
  t.is(backup.code, 0, backup.stderr);
  t.regex(backup.stderr, /^wrote stdout: \d+ files, \d+ bytes/);
  t.is((await entriesOf(piped))[0], "manifest.json");
  const target = newHomePath("piped");
  const restore = await gwWithFiles(["restore", "-", "--home", target], { stdin: piped });
  t.is(restore.code, 0, restore.stderr);
  t.true(existsSync(homePaths(target).metadata));
});
