// Large transfers and the event loop under media work (issue 26; docs/benchmarks.md):
//
//   npm run build && node scripts/bench-transfer.mjs [--part all|transfer|media]
//     transfers: [--size-mb 50] [--runs 5] [--big-mb 200]
//     media:     [--media-runs 3] [--idle-seconds 8] [--concurrency 4] [--rate 200]
//                [--works upscale12,upscale4,video] [--pinned-media]
//
// Transfers. One `gw serve` on a fresh home (its key made as bench/start-gw.sh makes it) and,
// beside it, a bare node:http server that streams a PUT's body to a new file on the same disk and
// answers a GET with fs.createReadStream (the plain copy; a PUT that also fsyncs, as gw must
// before it answers, is shown for scale). The same client, plain node:http in this process
// streaming from and to disk, sends a random --size-mb file through each: gw's multipart upload
// (/v1/storage/upload), its presigned PUT (the presign call included), and downloads through the
// signed link and /v1/files/{id}/content. One warm-up run, then --runs runs, alternating which
// server goes first; MiB/s and CPU are medians. Servers on core 1, the client on core 0 (taskset).
// Per transfer: the server's CPU time (/proc/<pid>/stat) and its peak RSS (VmHWM, reset before
// each transfer through /proc/<pid>/clear_refs, and VmRSS polled every 5 ms) against its idle RSS
// after a small warm-up; one more round with a --big-mb file (0 skips) shows whether the peak
// follows the file's size.
//
// Media. The shared harness's fake upstream; chat (non-stream) through gw on --concurrency
// connections from a worker thread of this process, at --rate requests/s in all (0: back to back,
// which keeps both cores busy and measures only how the CPU is shared). Chat latency while
// nothing else runs, then while one local upscale runs (local/lanczos: a 4000x3000 photo x2, 48
// MP out, the largest factor a 12 MP picture may take since x4 would be 192 MP and the engine
// stops at 64; and a 2000x2000 one x4, 64 MP out), and while one local video render runs
// (local/kenburns, 5 s at 720p from the 12 MP photo); --media-runs windows of each, alternated
// with idle windows, percentiles over all the requests of a kind. gw runs unpinned, as it would on
// this machine (its libuv and libvips threads and ffmpeg share the cores with the event loop);
// --pinned-media puts it on core 1. gw's own event-loop delay (monitorEventLoopDelay through a
// preload of this bench, nothing in gw) is printed beside the chat figures.
import { execFileSync, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
  closeSync,
  createReadStream,
  createWriteStream,
  existsSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { cpuMs, median } from "./bench-processes.mjs";

async function main() {
  const root = path.resolve(import.meta.dirname, "..");
  const harness = process.env.GW_BENCH_HARNESS ?? path.resolve(root, "../shared/bench");
  const { values } = parseArgs({
    options: {
      part: { type: "string", default: "all" },
      "size-mb": { type: "string", default: "50" },
      runs: { type: "string", default: "5" },
      "big-mb": { type: "string", default: "200" },
      "media-runs": { type: "string", default: "3" },
      "idle-seconds": { type: "string", default: "8" },
      concurrency: { type: "string", default: "4" },
      rate: { type: "string", default: "200" },
      "pinned-media": { type: "boolean", default: false },
      works: { type: "string", default: "upscale12,upscale4,video" },
    },
  });
  const MB = 1024 * 1024;
  const sizeBytes = Math.round(Number(values["size-mb"]) * MB);
  const bigBytes = Math.round(Number(values["big-mb"]) * MB);
  const runs = Number(values.runs);
  const parts = values.part === "all" ? ["transfer", "media"] : [values.part];
  const canPin = existsSync("/usr/bin/taskset") || existsSync("/bin/taskset");
  const cores = os.availableParallelism();
  const pin = (core) => (canPin && cores > 1 ? ["taskset", "-c", String(core)] : []);
  const key = "gw_benchbenchbenchbenchbenchbenchbenchbenchbenchbe";
  const work = mkdtempSync(path.join(os.tmpdir(), "gw-bench-transfer-"));
  const children = [];

  console.log(
    `node ${process.version}, ${cores} CPUs, load average ${os
      .loadavg()
      .map((value) => value.toFixed(2))
      .join(" ")} at start`,
  );
  try {
    if (parts.includes("transfer")) await transfers();
    if (parts.includes("media")) {
      if (!existsSync(path.join(harness, "fake-upstream.mjs"))) throw new Error(`the load harness is not at ${harness} (set GW_BENCH_HARNESS)`);
      await mediaWork();
    }
  } finally {
    for (const child of children.reverse()) if (child.exitCode === null) child.kill("SIGINT");
    await Promise.all(children.map((child) => (child.exitCode === null ? new Promise((resolve) => child.once("exit", resolve)) : null)));
    rmSync(work, { recursive: true, force: true });
  }

  // ---------------------------------------------------------------------------------------------
  async function transfers() {
    const home = await makeHome("transfer", (config) => {
      config.storage = { ...config.storage, maxFileBytes: Math.max(sizeBytes, bigBytes, 50 * MB) };
    });
    const gw = await startGateway(home, pin(1));
    const baseline = await startBaseline(path.join(work, "baseline-files"), pin(1));
    // The client (this process) on core 0, away from the servers.
    if (canPin && cores > 1) execFileSync("taskset", ["-a", "-p", "-c", "0", String(process.pid)], { stdio: "ignore" });
    const agent = new http.Agent({ keepAlive: false });
    const source = path.join(work, "payload.bin");
    writeRandomFile(source, sizeBytes);
    const target = path.join(work, "download.bin");
    const client = transferClient(gw.url, baseline.url, key, agent);

    // Warm both up (JIT, lazy imports: busboy, the blob store) with a small file.
    const warm = path.join(work, "warm.bin");
    writeRandomFile(warm, 1 * MB);
    for (let index = 0; index < 2; index++) {
      await client.baselineUpload(warm, "warm");
      await client.baselineDownload("warm", path.join(work, "warm.out"));
      await client.baselineDelete("warm");
      const id = await client.gwMultipart(warm);
      await client.gwSignedDownload(id, path.join(work, "warm.out"));
      await client.gwFilesDownload(id, path.join(work, "warm.out"));
      await client.gwDelete(id);
      await client.gwDelete(await client.gwPresigned(warm));
    }
    await settle();
    const idle = { gw: rssKb(gw.pid), baseline: rssKb(baseline.pid) };

    const rows = new Map();
    // Run -1 warms the full-size paths up (JIT): its time is not counted, its memory is.
    let run = -1;
    const record = (name, server, result) => {
      if (!rows.has(name)) rows.set(name, { server, results: [], peakKb: 0 });
      const row = rows.get(name);
      row.peakKb = Math.max(row.peakKb, result.peakKb);
      if (run >= 0) row.results.push(result);
    };
    const loads = [];
    let checked = false;
    for (; run < runs; run++) {
      loads.push(os.loadavg()[0]);
      const baselineSide = async () => {
        const name = `run-${run}`;
        record("baseline PUT (stream to file)", "baseline", await measured(baseline.pid, () => client.baselineUpload(source, name)));
        record("baseline GET (createReadStream)", "baseline", await measured(baseline.pid, () => client.baselineDownload(name, target)));
        // For scale only: what the fsync gw makes before it answers costs a plain copy.
        record("baseline PUT + fsync (reference)", "baseline", await measured(baseline.pid, () => client.baselineUpload(source, `${name}-synced`, true)));
        await client.baselineDelete(name);
        await client.baselineDelete(`${name}-synced`);
      };
      const gwSide = async () => {
        let id;
        record(
          "gw multipart upload",
          "gw",
          await measured(gw.pid, async () => {
            id = await client.gwMultipart(source);
          }),
        );
        let presignedId;
        record(
          "gw presigned PUT",
          "gw",
          await measured(gw.pid, async () => {
            presignedId = await client.gwPresigned(source);
          }),
        );
        record("gw signed-link GET", "gw", await measured(gw.pid, () => client.gwSignedDownload(id, target)));
        if (!checked) {
          if (sha256(target) !== sha256(source)) throw new Error("the file downloaded from gw differs from the one uploaded");
          checked = true;
        }
        record("gw /v1/files/{id}/content GET", "gw", await measured(gw.pid, () => client.gwFilesDownload(id, target)));
        await client.gwDelete(id);
        await client.gwDelete(presignedId);
      };
      if (run % 2 === 0) {
        await baselineSide();
        await gwSide();
      } else {
        await gwSide();
        await baselineSide();
      }
    }

    const size = sizeBytes / MB;
    console.log("");
    console.log(
      `Transfers of a ${size} MiB random file, median of ${runs} alternated runs (load average ${Math.min(...loads).toFixed(2)}-${Math.max(...loads).toFixed(2)} during them)`,
    );
    console.log(`idle RSS: gw ${mib(idle.gw)} MiB, baseline ${mib(idle.baseline)} MiB`);
    console.log("");
    console.log("| transfer | MiB/s | share of the plain copy | server CPU ms | CPU ms / MiB | peak RSS MiB | peak - idle MiB |");
    console.log("|---|---|---|---|---|---|---|");
    const rate = (results) => median(results.map((result) => sizeBytes / MB / result.seconds));
    const baselineUp = rate(rows.get("baseline PUT (stream to file)").results);
    const baselineDown = rate(rows.get("baseline GET (createReadStream)").results);
    let lowestShare = Number.POSITIVE_INFINITY;
    let largestGrowth = 0;
    for (const [name, { server, results, peakKb }] of rows) {
      const mbs = rate(results);
      const reference = /PUT|upload/.test(name) ? baselineUp : baselineDown;
      const cpu = median(results.map((result) => result.cpuMs));
      if (server === "gw") {
        lowestShare = Math.min(lowestShare, mbs / reference);
        largestGrowth = Math.max(largestGrowth, peakKb - idle.gw);
      }
      console.log(
        `| ${name} | ${mbs.toFixed(0)} | ${Math.round((mbs / reference) * 100)}% | ${cpu.toFixed(0)} | ${(cpu / size).toFixed(1)} | ${mib(peakKb)} | ${mib(peakKb - idle[server])} |`,
      );
    }
    console.log("");
    console.log(
      `gw's slowest transfer: ${Math.round(lowestShare * 100)}% of the plain copy (target: at least 80%); its RSS peak: idle + ${mib(largestGrowth)} MiB`,
    );

    if (bigBytes > 0) {
      // The same transfers once with a larger file: a peak that follows the file's size would show here.
      const big = path.join(work, "big.bin");
      writeRandomFile(big, bigBytes);
      rmSync(source, { force: true });
      await settle();
      const before = rssKb(gw.pid);
      let id;
      const up = await measured(gw.pid, async () => {
        id = await client.gwMultipart(big);
      });
      let presignedId;
      const put = await measured(gw.pid, async () => {
        presignedId = await client.gwPresigned(big);
      });
      const down = await measured(gw.pid, () => client.gwSignedDownload(id, target));
      await client.gwDelete(id);
      await client.gwDelete(presignedId);
      console.log("");
      console.log(`One more round with a ${bigBytes / MB} MiB file (gw RSS before it ${mib(before)} MiB):`);
      for (const [name, result] of [
        ["multipart upload", up],
        ["presigned PUT", put],
        ["signed-link GET", down],
      ]) {
        console.log(
          `  ${name}: ${(bigBytes / MB / result.seconds).toFixed(0)} MiB/s, peak RSS ${mib(result.peakKb)} MiB (peak - idle ${mib(result.peakKb - idle.gw)} MiB)`,
        );
      }
      rmSync(big, { force: true });
    }
    rmSync(target, { force: true });
    agent.destroy();
    await stop(gw.child);
    await stop(baseline.child);
    if (canPin && cores > 1) execFileSync("taskset", ["-a", "-p", "-c", `0-${cores - 1}`, String(process.pid)], { stdio: "ignore" });
  }

  // ---------------------------------------------------------------------------------------------
  async function mediaWork() {
    const upstream = spawn(process.execPath, [path.join(harness, "fake-upstream.mjs"), "0"], { stdio: ["ignore", "pipe", "pipe"] });
    children.push(upstream);
    const upstreamPort = Number(new URL(await firstLine(upstream, /listening on (\S+)/)).port);
    const home = await makeHome("media", (config) => {
      config.providers = {
        bench: { type: "openai", baseUrl: `http://127.0.0.1:${upstreamPort}/v1`, apiKey: "sk-bench-not-a-real-key" },
        local: { type: "local" },
      };
      config.routes = [{ prefix: "bench/", provider: "bench", priority: 1 }];
      config.models = [{ id: "bench/fake-model", name: "Bench fake model", context_length: 8192 }];
      config.tools.upscale = { default: "local/lanczos", allow: ["local/lanczos"] };
      config.tools.video = { default: "local/kenburns", allow: ["local/kenburns"] };
      config.video = { tickSeconds: 1, pollIntervalSeconds: 1 };
    });
    const probeFile = path.join(work, "event-loop.jsonl");
    const probe = path.join(work, "event-loop-probe.mjs");
    writeFileSync(probe, EVENT_LOOP_PROBE);
    const gw = await startGateway(home, values["pinned-media"] ? pin(1) : [], { NODE_OPTIONS: `--import=${probe}`, GW_BENCH_ELD_FILE: probeFile });
    const sharp = (await import("sharp")).default;
    const photo12 = await photo(sharp, 4000, 3000);
    const photo4 = await photo(sharp, 2000, 2000);
    const dataUrl = (bytes) => `data:image/jpeg;base64,${bytes.toString("base64")}`;
    const agent = new http.Agent({ keepAlive: true });
    const api = (method, route, body) => request(agent, `${gw.url}${route}`, { method, headers: { authorization: `Bearer ${key}` }, json: body });

    // Warm up: one of each piece of work, chat included (sharp and ffmpeg loaded, JIT).
    const worker = new Worker(fileURLToPath(import.meta.url), {
      workerData: { url: `${gw.url}/v1/chat/completions`, key, concurrency: Number(values.concurrency), rate: Number(values.rate) },
    });
    const ask = (message) =>
      new Promise((resolve) => {
        worker.once("message", resolve);
        worker.postMessage(message);
      });
    await ask({ type: "start" });
    const offered = {
      upscale12: ["upscale 4000x3000 x2 (48 MP out)", () => upscale(dataUrl(photo12), 2)],
      upscale4: ["upscale 2000x2000 x4 (64 MP out)", () => upscale(dataUrl(photo4), 4)],
      video: ["video kenburns 5 s 720p (12 MP photo)", () => video(dataUrl(photo12))],
    };
    const works = Object.fromEntries(
      values.works.split(",").map((name) => offered[name.trim()] ?? fail(`no work "${name}": ${Object.keys(offered).join(", ")}`)),
    );
    await upscale(dataUrl(photo4), 2);
    if (values.works.includes("video")) await video(dataUrl(photo4));
    await settle();

    const windows = { idle: [] };
    for (const name of Object.keys(works)) windows[name] = [];
    const idleMs = Number(values["idle-seconds"]) * 1000;
    const loads = [];
    for (let run = 0; run < Number(values["media-runs"]); run++) {
      for (const [name, work] of Object.entries(works)) {
        loads.push(os.loadavg()[0]);
        windows.idle.push(await measureWindow(() => new Promise((resolve) => setTimeout(resolve, idleMs))));
        windows[name].push(await measureWindow(work));
      }
    }
    await ask({ type: "stop" });
    await worker.terminate();

    console.log("");
    console.log(
      `Chat (non-stream, fake upstream) through gw on ${values.concurrency} connections, ${Number(values.rate) > 0 ? `${values.rate} requests/s` : "back to back"}, ${values["pinned-media"] ? "gw on core 1" : "unpinned"}, ${values["media-runs"]} windows of each (load average ${Math.min(...loads).toFixed(2)}-${Math.max(...loads).toFixed(2)})`,
    );
    console.log("");
    console.log("| window | work s | chat requests | chat p50 ms | chat p99 ms | p99 / idle p99 | gw loop delay p99 / max ms | gw CPU s |");
    console.log("|---|---|---|---|---|---|---|---|");
    // Percentiles over every request of the windows of a kind; the rest, medians of the windows.
    const pooled = (list) => list.flatMap((window) => window.latencies).sort((a, b) => a - b);
    const idleP99 = percentile(pooled(windows.idle), 0.99);
    const verdicts = [];
    for (const [name, list] of Object.entries(windows)) {
      const latencies = pooled(list);
      const p99 = percentile(latencies, 0.99);
      if (name !== "idle") verdicts.push(`${name.split(" (")[0]} ${(p99 / idleP99).toFixed(2)}x`);
      console.log(
        `| ${name} | ${median(list.map((window) => window.seconds)).toFixed(1)} | ${latencies.length} | ${percentile(latencies, 0.5).toFixed(2)} | ${p99.toFixed(2)} | ${(p99 / idleP99).toFixed(2)}x | ${median(list.map((window) => window.loopP99)).toFixed(1)} / ${median(list.map((window) => window.loopMax)).toFixed(1)} | ${median(list.map((window) => window.cpuS)).toFixed(1)} |`,
      );
    }
    console.log("");
    console.log(`chat p99 during the work against idle (target: at most 2x): ${verdicts.join(", ")}`);
    agent.destroy();
    await stop(gw.child);

    async function measureWindow(work) {
      const cpuBefore = cpuMs(gw.pid);
      await ask({ type: "window" });
      process.kill(gw.pid, "SIGUSR2");
      const started = performance.now();
      await work();
      const seconds = (performance.now() - started) / 1000;
      const { latencies } = await ask({ type: "collect" });
      const loop = await probeReading(gw.pid, probeFile);
      return {
        seconds,
        latencies,
        loopP99: loop.p99,
        loopMax: loop.max,
        cpuS: (cpuMs(gw.pid) - cpuBefore) / 1000,
      };
    }

    async function upscale(image, scale) {
      const answer = await api("POST", "/v1/image/upscale", { image, scale });
      if (answer.status !== 200) throw new Error(`upscale answered ${answer.status}: ${answer.text.slice(0, 300)}`);
    }

    async function video(image) {
      const answer = await api("POST", "/v1/video/generations", { prompt: "a slow pan", image_url: image, duration_seconds: 5 });
      if (answer.status !== 200 && answer.status !== 201 && answer.status !== 202)
        throw new Error(`video answered ${answer.status}: ${answer.text.slice(0, 300)}`);
      const id = JSON.parse(answer.text).id;
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        const job = JSON.parse((await api("GET", `/v1/video/jobs/${id}`)).text);
        if (job.status === "SUCCEEDED") return;
        if (job.status === "FAILED" || job.status === "CANCELLED") throw new Error(`the video job ended ${job.status}: ${JSON.stringify(job)}`);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  async function makeHome(name, edit) {
    const home = path.join(work, `home-${name}`);
    execFileSync(process.execPath, [path.join(root, "bin/run.js"), "init", "--home", home], { stdio: "ignore" });
    const file = path.join(home, "config.json");
    const config = JSON.parse(readFileSync(file, "utf8"));
    config.plans = { max: { requestsPerMinute: 100_000_000, monthlyCredits: 1_000_000_000_000, storageOperationsPerPeriod: 1_000_000 } };
    edit(config);
    writeFileSync(file, JSON.stringify(config, null, 2));
    const { importKey } = await import(path.join(root, "dist/src/store/provisioning.js"));
    const { MetadataStore } = await import(path.join(root, "dist/src/store/metadata-store.js"));
    const store = await MetadataStore.open(path.join(home, "data/metadata.json"));
    await importKey(store, "bench", "max", key);
    store.close();
    return home;
  }

  async function startGateway(home, prefix, env = {}) {
    const command = [...prefix, process.execPath, ...(process.env.GW_NODE_FLAGS ? process.env.GW_NODE_FLAGS.split(" ") : []), path.join(root, "bin/run.js")];
    const child = spawn(command[0], [...command.slice(1), "serve", "--home", home, "--host", "127.0.0.1", "--port", "0"], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...env },
    });
    children.push(child);
    const url = await firstLine(child, /listening on (\S+)/);
    return { child, pid: serverPid(child), url };
  }

  async function startBaseline(directory, prefix) {
    const command = [...prefix, process.execPath, "--input-type=module", "-e", BASELINE_SERVER, directory];
    const child = spawn(command[0], command.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
    children.push(child);
    const url = await firstLine(child, /listening on (\S+)/);
    return { child, pid: serverPid(child), url };
  }

  function settle() {
    return new Promise((resolve) => setTimeout(resolve, 1000));
  }

  async function measured(pid, transfer) {
    resetPeak(pid);
    let peak = rssKb(pid);
    const poller = setInterval(() => {
      peak = Math.max(peak, rssKb(pid));
    }, 5);
    const cpuBefore = cpuMs(pid);
    const started = performance.now();
    await transfer();
    const seconds = (performance.now() - started) / 1000;
    clearInterval(poller);
    return { seconds, cpuMs: cpuMs(pid) - cpuBefore, peakKb: Math.max(peak, hwmKb(pid) ?? 0) };
  }

  function writeRandomFile(file, bytes) {
    const fd = openSync(file, "w");
    for (let written = 0; written < bytes; written += MB) writeSync(fd, randomBytes(Math.min(MB, bytes - written)));
    closeSync(fd);
  }
}

/** The value at `share` of sorted numbers (nearest rank). */
function percentile(sorted, share) {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))];
}

function fail(message) {
  throw new Error(message);
}

/** The transfers, each from or to a file through plain node:http. */
function transferClient(gwUrl, baselineUrl, key, agent) {
  const auth = { authorization: `Bearer ${key}` };
  const upload = async (url, method, headers, file, pieces = {}) => {
    const answer = await streamRequest(agent, url, { method, headers, file, ...pieces });
    if (answer.status >= 300) throw new Error(`${method} ${url} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
    return answer.text;
  };
  const download = async (url, headers, file) => {
    const response = await new Promise((resolve, reject) => {
      const sent = http.request(url, { agent, headers }, resolve);
      sent.on("error", reject);
      sent.end();
    });
    if (response.statusCode !== 200) throw new Error(`GET ${url} answered ${response.statusCode}`);
    await pipeline(response, createWriteStream(file));
  };
  const fileSize = (file) => statSync(file).size;
  return {
    /** Each upload to a new file (as gw's), removed again by baselineDelete outside the timing. */
    baselineUpload: (file, name, fsync = false) =>
      upload(`${baselineUrl}/${name}${fsync ? "?fsync" : ""}`, "PUT", { "content-length": String(fileSize(file)) }, file),
    baselineDownload: (name, file) => download(`${baselineUrl}/${name}`, {}, file),
    async baselineDelete(name) {
      const answer = await request(agent, `${baselineUrl}/${name}`, { method: "DELETE" });
      if (answer.status !== 200) throw new Error(`the baseline's delete answered ${answer.status}`);
    },
    async gwMultipart(file) {
      const boundary = `----gw-bench-${randomBytes(8).toString("hex")}`;
      const head = Buffer.from(
        `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="payload.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`,
      );
      const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
      const text = await upload(
        `${gwUrl}/v1/storage/upload`,
        "POST",
        { ...auth, "content-type": `multipart/form-data; boundary=${boundary}`, "content-length": String(head.length + fileSize(file) + tail.length) },
        file,
        { head, tail },
      );
      return JSON.parse(text).data.id;
    },
    /** Presign, then PUT the bytes to the link (the presign's small call is part of the time). */
    async gwPresigned(file) {
      const size = fileSize(file);
      const signed = await request(agent, `${gwUrl}/v1/storage/presigned-upload`, {
        method: "POST",
        headers: auth,
        json: { filename: "payload.bin", contentType: "application/octet-stream", sizeBytes: size },
      });
      if (signed.status !== 200) throw new Error(`presign answered ${signed.status}: ${signed.text}`);
      const { id, uploadUrl } = JSON.parse(signed.text).data;
      await upload(uploadUrl, "PUT", { "content-type": "application/octet-stream", "content-length": String(size) }, file);
      return id;
    },
    async gwSignedDownload(id, file) {
      const link = await request(agent, `${gwUrl}/v1/storage/files/${id}/url`, { method: "GET", headers: auth });
      if (link.status !== 200) throw new Error(`the link answered ${link.status}: ${link.text}`);
      await download(JSON.parse(link.text).data.url, {}, file);
    },
    gwFilesDownload: (id, file) => download(`${gwUrl}/v1/files/${id}/content`, auth, file),
    async gwDelete(id) {
      const answer = await request(agent, `${gwUrl}/v1/storage/files/${id}`, { method: "DELETE", headers: auth });
      if (answer.status !== 200) throw new Error(`delete answered ${answer.status}: ${answer.text}`);
    },
  };
}

/** `head`, the file's bytes and `tail` as the request's body, streamed from disk with backpressure (one code path for every upload). */
function streamRequest(agent, url, { method, headers, file, head, tail }) {
  return new Promise((resolve, reject) => {
    const sent = http.request(url, { method, agent, headers }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk) => (text += chunk));
      response.on("end", () => resolve({ status: response.statusCode, text }));
      response.on("error", reject);
    });
    sent.on("error", reject);
    if (head) sent.write(head);
    const bytes = createReadStream(file);
    bytes.once("error", reject);
    bytes.once("end", () => (tail ? sent.end(tail) : sent.end()));
    bytes.pipe(sent, { end: false });
  });
}

function request(agent, url, { method, headers = {}, json }) {
  return new Promise((resolve, reject) => {
    const body = json === undefined ? undefined : JSON.stringify(json);
    const sent = http.request(
      url,
      {
        method,
        agent,
        headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(body) }) },
      },
      (response) => {
        // Large answers (an upscaled picture's base64) are only counted, not kept: this process measures.
        let text = "";
        let length = 0;
        response.setEncoding("utf8");
        response.on("data", (chunk) => {
          length += chunk.length;
          if (text.length < 64 * 1024) text += chunk;
        });
        response.on("end", () => resolve({ status: response.statusCode, text, length }));
        response.on("error", reject);
      },
    );
    sent.on("error", reject);
    sent.end(body);
  });
}

function sha256(file) {
  return createHash("sha256").update(readFileSync(file)).digest("hex");
}

function firstLine(child, pattern) {
  return new Promise((resolve, reject) => {
    let output = "";
    const onData = (chunk) => {
      output += chunk;
      const match = pattern.exec(output);
      if (match) {
        child.stdout.off("data", onData);
        child.stdout.resume();
        child.stderr.resume();
        resolve(match[1]);
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", (chunk) => {
      if (output.length < 100_000) output += chunk;
    });
    child.once("exit", (code) => reject(new Error(`exited ${code} before listening: ${output}`)));
  });
}

/** The pid of the node process itself (under taskset it is the same process: taskset execs). */
function serverPid(child) {
  return child.pid;
}

function stop(child) {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", resolve);
    child.kill("SIGINT");
  });
}

function status(pid) {
  try {
    return readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return "";
  }
}

function rssKb(pid) {
  return Number(/VmRSS:\s+(\d+) kB/.exec(status(pid))?.[1] ?? 0);
}

function hwmKb(pid) {
  const value = /VmHWM:\s+(\d+) kB/.exec(status(pid))?.[1];
  return value === undefined ? undefined : Number(value);
}

/** Reset VmHWM to the current RSS (Linux: writing 5 to clear_refs), so it holds this transfer's peak. */
function resetPeak(pid) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
  } catch {
    // Not Linux, or not ours: the 5 ms poll alone.
  }
}

function mib(kb) {
  return (kb / 1024).toFixed(1);
}

/** A photo-like JPEG: gradients, shapes and grain (4000x3000 is about 4 MB, like a camera's). */
async function photo(sharp, width, height) {
  const noise = await sharp({ create: { width, height, channels: 3, noise: { type: "gaussian", mean: 128, sigma: 40 } } })
    .blur(0.6)
    .raw()
    .toBuffer();
  const shapes = Buffer.from(
    `<svg width="${width}" height="${height}"><defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#2a6fb0"/><stop offset="1" stop-color="#f3c16b"/></linearGradient></defs><rect width="100%" height="100%" fill="url(#g)"/><circle cx="${width * 0.3}" cy="${height * 0.4}" r="${height * 0.2}" fill="#c0392b" opacity="0.8"/><rect x="${width * 0.55}" y="${height * 0.5}" width="${width * 0.3}" height="${height * 0.3}" fill="#27ae60" opacity="0.7"/></svg>`,
  );
  return sharp(shapes)
    .composite([{ input: noise, raw: { width, height, channels: 3 }, blend: "overlay" }])
    .jpeg({ quality: 88 })
    .toBuffer();
}

/** SIGUSR2 to the gateway: it appends its event-loop delay since the last signal to the file, then resets. */
async function probeReading(pid, file) {
  const before = existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean).length : 0;
  process.kill(pid, "SIGUSR2");
  for (let waited = 0; waited < 10_000; waited += 20) {
    const lines = existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
    if (lines.length > before) return JSON.parse(lines.at(-1));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("the gateway's event-loop probe did not answer");
}

// Preloaded into the gateway for the media part only (NODE_OPTIONS=--import): no gw code involved.
const EVENT_LOOP_PROBE = `
import { appendFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";
const histogram = monitorEventLoopDelay({ resolution: 5 });
histogram.enable();
process.on("SIGUSR2", () => {
  appendFileSync(process.env.GW_BENCH_ELD_FILE, JSON.stringify({ p99: histogram.percentile(99) / 1e6, max: histogram.max / 1e6 }) + "\\n");
  histogram.reset();
});
`;

// The baseline: a bare node:http server. PUT /<name> streams the body to a new file (with ?fsync,
// fsynced before the answer, as gw does), GET /<name> streams it back, DELETE /<name> removes it.
const BASELINE_SERVER = `
import { createReadStream, createWriteStream, mkdirSync, promises as fs, statSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { pipeline } from "node:stream/promises";
const directory = process.argv[1];
mkdirSync(directory, { recursive: true });
const server = http.createServer(async (request, response) => {
  const url = new URL(request.url, "http://x");
  const file = path.join(directory, path.basename(url.pathname));
  try {
    if (request.method === "PUT") {
      const output = createWriteStream(file);
      await pipeline(request, output);
      if (url.searchParams.has("fsync")) {
        const handle = await fs.open(file, "r+");
        await handle.sync();
        await handle.close();
      }
      response.writeHead(201, { "content-type": "application/json" }).end("{}");
    } else if (request.method === "DELETE") {
      await fs.rm(file, { force: true });
      response.writeHead(200).end();
    } else {
      const size = statSync(file).size;
      response.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(size) });
      await pipeline(createReadStream(file), response);
    }
  } catch (error) {
    if (!response.headersSent) response.writeHead(500).end(String(error));
    else response.destroy();
  }
});
server.listen(0, "127.0.0.1", () => console.log("listening on http://127.0.0.1:" + server.address().port));
process.on("SIGINT", () => process.exit(0));
`;

/** The chat load, in a worker thread so that this process's own work (big answers) does not delay it. */
async function chatLoadWorker({ url, key, concurrency, rate }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const body = JSON.stringify({ model: "bench/fake-model", max_tokens: 64, messages: [{ role: "user", content: "Say something short." }] });
  let running = false;
  let collecting = null;
  const one = () =>
    new Promise((resolve, reject) => {
      const sent = http.request(
        url,
        {
          method: "POST",
          agent,
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), authorization: `Bearer ${key}` },
        },
        (response) => {
          response.resume();
          response.on("end", () => (response.statusCode === 200 ? resolve() : reject(new Error(`chat answered ${response.statusCode}`))));
        },
      );
      sent.on("error", reject);
      sent.end(body);
    });
  // Each connection sends one request every concurrency / rate seconds (at once when the last
  // one took longer): a steady load that leaves the gateway idle time, unlike a closed loop that
  // keeps both cores busy and measures only how the CPU is shared.
  const interval = rate > 0 ? (1000 * concurrency) / rate : 0;
  const loop = async (index) => {
    let next = performance.now() + (interval * index) / concurrency;
    while (running) {
      const wait = next - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const window = collecting;
      const started = performance.now();
      await one();
      if (window && window === collecting) window.push(performance.now() - started);
      next = Math.max(next + interval, performance.now());
    }
  };
  let loops = [];
  parentPort.on("message", async (message) => {
    if (message.type === "start") {
      running = true;
      loops = Array.from({ length: concurrency }, (_, index) => loop(index));
      parentPort.postMessage({});
    } else if (message.type === "window") {
      collecting = [];
      parentPort.postMessage({});
    } else if (message.type === "collect") {
      const latencies = collecting ?? [];
      collecting = null;
      parentPort.postMessage({ latencies });
    } else if (message.type === "stop") {
      running = false;
      await Promise.all(loops);
      agent.destroy();
      parentPort.postMessage({});
    }
  });
}

// Last: main() reads the constants above.
if (isMainThread) await main();
else await chatLoadWorker(workerData);
