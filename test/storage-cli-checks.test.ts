// `gw storage upload` checks every argument before sending any (exists, a regular file, within the
// gateway's per-file limit), and a file the gateway refuses mid-send is reported with the
// gateway's own message, not as the broken pipe of its early close; `gw storage get` of a missing
// file names the id. Built CLI as subprocesses, against a real gateway with a 1 MB file limit.

import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import test from "ava";
import { sparseFile, storageApi, testPlan } from "./_storage.js";
import { addKey, gwBin, makeHome, quietLogger, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";
import { tempDir } from "./helpers/temp-dirs.js";

const MB = 1024 * 1024;
const SERVER_REFUSAL = "The file is larger than the 1 MB limit per file (1048576 bytes).";

let gateway: TestGateway;
let relay: Relay;
const keys: Record<string, string> = {};

test.before(async () => {
  const home = await makeHome((config) => {
    config.storage = { driver: "fs", maxFileBytes: 1 * MB };
    config.plans = { free: {}, pro: testPlan(1024 * MB), max: {} };
  });
  gateway = await startTestGateway(home);
  relay = await limitHidingRelay(gateway.url);
  for (const agent of ["missing", "directory", "early", "refused", "getter"]) keys[agent] = await addKey(home, agent, "pro");
});

test.after.always(async () => {
  await relay?.close();
  await gateway?.shutdown();
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function gw(agent: string, args: string[], baseUrl = gateway.url): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, GW_HOME: gateway.home, GW_BASE_URL: baseUrl, GW_API_KEY: keys[agent] };
  delete env.NODE_ENV;
  return new Promise((resolve) => {
    execFile(process.execPath, [gwBin, ...args], { env, timeout: 120_000 /* a hang guard, as in _gw-cli.ts */ }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

function workspace(files: Record<string, string>): string {
  const directory = tempDir("gw-cli-checks-");
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(directory, name), content);
  return directory;
}

async function storedCount(agent: string): Promise<number> {
  return (await storageApi(gateway, keys[agent]!).list()).body.pagination.total as number;
}

function uploadAttempts(agent: string): number {
  return quietLogger.accessRecords.filter((record) => record.agent === agent && record.path === "/v1/storage/upload").length;
}

test("a missing second argument: nothing is uploaded, and the error names it", async (t) => {
  const directory = workspace({ "a.txt": "first" });
  const missing = path.join(directory, "b.txt");
  const run = await gw("missing", ["storage", "upload", path.join(directory, "a.txt"), missing]);
  t.is(run.code, 1);
  t.is(run.stderr, `${missing}: no such file\nnothing was uploaded\n`);
  t.is(run.stdout, "");
  t.is(await storedCount("missing"), 0);
});

test("a directory among the arguments is refused before any upload, with the other problems", async (t) => {
  const directory = workspace({ "a.txt": "first" });
  mkdirSync(path.join(directory, "folder"));
  const run = await gw("directory", ["storage", "upload", path.join(directory, "folder"), path.join(directory, "a.txt"), path.join(directory, "gone.txt")]);
  t.is(run.code, 1);
  t.is(run.stderr, `${path.join(directory, "folder")}: not a regular file\n${path.join(directory, "gone.txt")}: no such file\nnothing was uploaded\n`);
  t.is(await storedCount("directory"), 0);
});

test("a file over the gateway's limit is refused before anything is sent, naming the limit", async (t) => {
  const small = path.join(workspace({ "small.txt": "fits" }), "small.txt");
  const big = sparseFile(3 * MB);
  for (const extra of [[], ["--presigned"]]) {
    const run = await gw("early", ["storage", "upload", small, big, ...extra]);
    t.is(run.code, 1);
    t.is(run.stderr, `${big}: 3 MB (3145728 bytes) is over the gateway's limit of 1 MB per file (1048576 bytes)\nnothing was uploaded\n`);
  }
  t.is(uploadAttempts("early"), 0, "no upload was sent");
  t.is(await storedCount("early"), 0);
});

test("a file the gateway refuses while it is being sent: the gateway's message, never a broken pipe", async (t) => {
  // Through the relay the CLI cannot learn the limit, so it sends, and the gateway answers 413 and
  // closes while the file is still streaming. Several runs: the close races the client's writes.
  const big = sparseFile(64 * MB);
  for (let run = 0; run < 6; run += 1) {
    const refused = await gw("refused", ["storage", "upload", big], relay.url);
    t.is(refused.code, 1);
    t.is(refused.stderr, `${big}: ${SERVER_REFUSAL}\n`, `run ${run}`);
  }
  t.true(uploadAttempts("refused") >= 6, "the gateway itself refused them");
  t.is(await storedCount("refused"), 0);
});

test("get, url and rm of a missing file name the id", async (t) => {
  const id = "file_01J0000000000000000000000Z";
  for (const command of [
    ["get", id, "-o", path.join(os.tmpdir(), `gw-missing-${process.pid}`)],
    ["url", id],
    ["rm", id],
  ]) {
    const run = await gw("getter", ["storage", ...command]);
    t.is(run.code, 1);
    t.is(run.stderr, `File not found: ${id}\n`, command[0]);
  }
});

interface Relay {
  url: string;
  close(): Promise<void>;
}

/**
 * A TCP relay to the gateway that drops the per-file limit header from its answers: a gateway
 * that does not say its limit (an older gw, or a proxy that strips unknown headers), so the CLI
 * cannot check sizes before sending. When the gateway closes a connection, the client's side is
 * reset right after what the gateway sent, as the gateway's own close of a connection it stopped
 * reading does.
 */
async function limitHidingRelay(target: string): Promise<Relay> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = keepReadingAfterRefusedWrites(net.connect(Number(port), hostname));
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => undefined);
      socket.on("close", () => sockets.delete(socket));
    }
    client.on("data", (chunk) => upstream.writable && upstream.write(chunk));
    client.on("end", () => upstream.end());
    client.on("close", () => upstream.destroy());
    upstream.on("data", (chunk: Buffer) => {
      if (client.writable) client.write(Buffer.from(chunk.toString("latin1").replace(/\r\nx-service-max-file-bytes:[^\r]*/i, ""), "latin1"));
    });
    upstream.on("close", () => {
      if (client.writable) client.write("", () => client.resetAndDestroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The relay must not lose the gateway's answer itself: a write the gateway no longer reads fails
 * (EPIPE), and Node would destroy the socket before reading the answer already received.
 */
function keepReadingAfterRefusedWrites(socket: net.Socket): net.Socket {
  let refused = false;
  const settle = (callback: (error?: Error | null) => void) => (error?: Error | null) => {
    if (error) refused = true;
    callback();
  };
  const write = socket._write.bind(socket);
  const writev = socket._writev!.bind(socket);
  socket._write = (chunk, encoding, callback) => (refused ? callback() : write(chunk, encoding, settle(callback)));
  socket._writev = (chunks, callback) => (refused ? callback() : writev(chunks, settle(callback)));
  return socket;
}
