// One `gw serve` per home (src/store/serve-lock.ts): a second server on the same home refuses and
// says which one runs there (two would each hold their own credit reservations and overspend); a
// server that stopped, or was killed, leaves the home free at once; an owner file nobody keeps
// fresh, or whose process is gone, does not block.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import test from "ava";
import { homePaths } from "../src/config/paths.js";
import { runningOwner, serveLockFile } from "../src/store/serve-lock.js";
import { gw } from "./_gw-cli.js";
import { gwBin, makeHome, spawnServe } from "./helpers/gateway-harness.js";

/** `gw serve` expected to refuse: its exit code and what it said. */
function serveRefused(home: string): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const child = spawn(process.execPath, [gwBin, "serve", "--home", home, "--port", "0"], { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  let stdout = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
    // It listened: the refusal this waits for will not come; stop it so the test fails at once.
    if (stdout.includes("listening on")) child.kill("SIGKILL");
  });
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stderr, stdout })));
}

test("a second gw serve on the same home refuses, naming the one that runs; the first goes on serving", async (t) => {
  const home = await makeHome();
  const first = await spawnServe(home);
  t.teardown(() => first.child.kill("SIGKILL"));
  const second = await serveRefused(home);
  t.is(second.code, 1);
  t.is(second.stdout, "", "it never listened");
  t.regex(second.stderr, new RegExp(`another gw serve \\(pid ${first.child.pid} on .*${first.url.replace(/[.:/]/g, "\\$&")}`));
  t.regex(second.stderr, /stop it first/);
  t.is((await fetch(`${first.url}/health`)).status, 200);
});

test("a server stopped with SIGTERM frees the home: its owner file is gone and the next one starts", async (t) => {
  const home = await makeHome();
  const first = await spawnServe(home);
  t.true(existsSync(serveLockFile(homePaths(home).dataDir)));
  first.child.kill("SIGTERM");
  t.is(await first.exited, 0);
  t.false(existsSync(serveLockFile(homePaths(home).dataDir)));
  const next = await spawnServe(home);
  t.teardown(() => next.child.kill("SIGKILL"));
  t.is((await fetch(`${next.url}/health`)).status, 200);
});

test("a server killed with SIGKILL does not block the next start: its process is gone", async (t) => {
  const home = await makeHome();
  const first = await spawnServe(home);
  first.child.kill("SIGKILL");
  await first.exited;
  t.true(existsSync(serveLockFile(homePaths(home).dataDir)), "the killed server could not remove its file");
  const next = await spawnServe(home);
  t.teardown(() => next.child.kill("SIGKILL"));
  t.is((await fetch(`${next.url}/health`)).status, 200);
});

test("an owner on another host blocks while it keeps its file fresh, not after; a live pid whose file went stale does not block", async (t) => {
  const home = await makeHome();
  const dataDir = homePaths(home).dataDir;
  const file = serveLockFile(dataDir);
  const elsewhere = { pid: 4242, host: `${hostname()}-other`, url: "http://10.0.0.2:8080", startedAt: "2026-11-27T10:00:00.000Z" };
  writeFileSync(file, JSON.stringify(elsewhere));
  t.deepEqual(runningOwner(dataDir), elsewhere);
  const refused = await serveRefused(home);
  t.is(refused.code, 1);
  t.regex(refused.stderr, /pid 4242 on .*-other, http:\/\/10\.0\.0\.2:8080/);

  const aMinuteAgo = new Date(Date.now() - 60_000);
  utimesSync(file, aMinuteAgo, aMinuteAgo);
  t.is(runningOwner(dataDir), undefined);

  // This test process is alive, but a reused pid is not a server when nobody has touched the file.
  writeFileSync(file, JSON.stringify({ pid: process.ppid, host: hostname(), startedAt: "2026-11-27T10:00:00.000Z" }));
  t.truthy(runningOwner(dataDir), "fresh and alive: a server");
  utimesSync(file, aMinuteAgo, aMinuteAgo);
  t.is(runningOwner(dataDir), undefined);
  const serve = await spawnServe(home);
  t.teardown(() => serve.child.kill("SIGKILL"));
  t.is((await fetch(`${serve.url}/health`)).status, 200);
  t.is(path.basename(file), "serve.json");
});

test("gw restore --force refuses a home whose server runs, and changes nothing in it", async (t) => {
  const source = await makeHome();
  const archive = `${source}-backup.tar.gz`;
  const backup = await gw(["backup", "--home", source, "--output", archive]);
  t.is(backup.code, 0, backup.stderr);
  const home = await makeHome();
  const serve = await spawnServe(home);
  t.teardown(() => serve.child.kill("SIGKILL"));
  const restore = await gw(["restore", archive, "--home", home, "--force"]);
  t.is(restore.code, 1);
  t.regex(restore.stderr, new RegExp(`a gw serve \\(pid ${serve.child.pid} .*\\) is running on .*: stop it first`));
  t.is((await fetch(`${serve.url}/health`)).status, 200);
  t.deepEqual(
    readdirSync(home).filter((name) => name.startsWith(".gw-replaced")),
    [],
    "nothing moved aside",
  );
});
