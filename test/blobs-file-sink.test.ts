// Streamed blob writes (src/blobs/file-sink.ts): every byte lands in order through batched writes,
// a file larger than a flush step is written back while it streams and ends fsynced, a short
// write is completed, and a failing source or disk fails the write without leaving a datasync
// running under a handle about to be closed.
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import test from "ava";
import { FLUSH_STEP_BYTES, SINK_BUFFER_BYTES, writeStreamSynced } from "../src/blobs/file-sink.js";
import { tempDir } from "./helpers/temp-dirs.js";

/** `count` random chunks of `size` bytes, and their concatenation's hash. */
function source(count: number, size: number): { stream: Readable; sha256: string; bytes: number } {
  const chunks = Array.from({ length: count }, () => randomBytes(size));
  const hash = createHash("sha256");
  for (const chunk of chunks) hash.update(chunk);
  return { stream: Readable.from(chunks, { objectMode: false }), sha256: hash.digest("hex"), bytes: count * size };
}

test("a stream larger than several flush steps is written whole, in order, and fsynced", async (t) => {
  const file = path.join(tempDir("gw-file-sink-"), "blob");
  const handle = await open(file, "wx");
  // Odd-sized chunks, so batches never line up with the steps.
  const { stream, sha256, bytes } = source(Math.ceil((3 * FLUSH_STEP_BYTES) / 65_521) + 1, 65_521);
  await writeStreamSynced(handle, stream);
  await handle.close();
  const written = readFileSync(file);
  t.is(written.length, bytes);
  t.is(createHash("sha256").update(written).digest("hex"), sha256);
  t.true(SINK_BUFFER_BYTES < FLUSH_STEP_BYTES);
});

test("a source that fails mid-way rejects with its error", async (t) => {
  const handle = await open(path.join(tempDir("gw-file-sink-"), "blob"), "wx");
  async function* failing(): AsyncGenerator<Buffer> {
    yield randomBytes(FLUSH_STEP_BYTES);
    yield randomBytes(FLUSH_STEP_BYTES);
    throw new Error("the client went away");
  }
  await t.throwsAsync(writeStreamSynced(handle, Readable.from(failing(), { objectMode: false })), { message: "the client went away" });
  await handle.close();
});

/** A FileHandle that writes at most `maxPerCall` bytes a call and records the datasyncs, failing them when told. */
function fakeHandle(options: { maxPerCall: number; failDatasync?: boolean }) {
  const received: Buffer[] = [];
  const calls = { datasync: 0, sync: 0, datasyncsRunning: 0, mostRunning: 0 };
  const handle = {
    async writev(buffers: Buffer[]) {
      const all = Buffer.concat(buffers);
      const part = all.subarray(0, Math.min(all.length, options.maxPerCall));
      received.push(Buffer.from(part));
      return { bytesWritten: part.length, buffers };
    },
    async datasync() {
      calls.datasync += 1;
      calls.datasyncsRunning += 1;
      calls.mostRunning = Math.max(calls.mostRunning, calls.datasyncsRunning);
      await new Promise((resolve) => setImmediate(resolve));
      calls.datasyncsRunning -= 1;
      if (options.failDatasync) throw Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO" });
    },
    async sync() {
      calls.sync += 1;
    },
  };
  return { handle: handle as unknown as FileHandle, received, calls };
}

test("short writes are completed; datasyncs run one at a time, and the last fsync follows them", async (t) => {
  const { handle, received, calls } = fakeHandle({ maxPerCall: 100_003 });
  const { stream, sha256, bytes } = source(40, 300_000);
  await writeStreamSynced(handle, stream);
  const all = Buffer.concat(received);
  t.is(all.length, bytes);
  t.is(createHash("sha256").update(all).digest("hex"), sha256);
  t.true(calls.datasync >= 1);
  t.is(calls.mostRunning, 1);
  t.is(calls.datasyncsRunning, 0);
  t.is(calls.sync, 1);
});

test("a failed datasync fails the write with the disk's error", async (t) => {
  const { handle, calls } = fakeHandle({ maxPerCall: Number.MAX_SAFE_INTEGER, failDatasync: true });
  const { stream } = source(20, 1024 * 1024);
  await t.throwsAsync(writeStreamSynced(handle, stream), { code: "EIO" });
  t.is(calls.datasyncsRunning, 0);
});
