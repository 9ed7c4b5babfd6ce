// BlobStore over an unstorage Storage. With the gateway's streaming fs driver (the default),
// bytes stream to and from disk and are never held whole in memory. Any other unstorage driver
// (s3, redis, memory ...) works through unstorage's value API, which in 1.x takes and returns
// whole values: such a driver holds one file (at most the per-file limit) in memory while it is
// written or read. Swapping the driver needs no change outside src/blobs (docs/decisions.md §1).
import { Readable, Transform, type TransformCallback } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { Storage } from "unstorage";
import { assertBlobKey, type BlobStore, forwardStream } from "./blob-store.js";
import { isStreamingDriver } from "./fs-stream-driver.js";

export class UnstorageBlobStore implements BlobStore {
  readonly streams: boolean;

  constructor(private readonly storage: Storage) {
    this.streams = isStreamingDriver(storage.getMount("").driver);
  }

  async write(key: string, body: Readable): Promise<number> {
    assertBlobKey(key);
    const counter = new ByteCounter();
    if (this.streams) {
      // The driver consumes the stream; a failure of the source fails the write.
      await this.storage.setItemRaw(key, forwardStream(body, counter));
      return counter.bytes;
    }
    const chunks: Buffer[] = [];
    // The last stage collects: a sink, not a generator (it yields nothing).
    await pipeline(body, counter, async (source: AsyncIterable<Buffer>) => {
      for await (const chunk of source) chunks.push(chunk);
    });
    await this.storage.setItemRaw(key, Buffer.concat(chunks, counter.bytes));
    return counter.bytes;
  }

  async read(key: string): Promise<{ body: Readable; sizeBytes: number } | null> {
    assertBlobKey(key);
    const { driver } = this.storage.getMount(key);
    if (isStreamingDriver(driver)) return driver.getItemStream(key);
    const value: unknown = await this.storage.getItemRaw(key);
    if (value === null || value === undefined) return null;
    const bytes = toBuffer(value);
    return { body: Readable.from([bytes], { objectMode: false }), sizeBytes: bytes.length };
  }

  async remove(key: string): Promise<void> {
    await this.storage.removeItem(assertBlobKey(key));
  }

  async has(key: string): Promise<boolean> {
    return this.storage.hasItem(assertBlobKey(key));
  }

  async keys(): Promise<string[]> {
    return this.storage.getKeys();
  }

  /** Temp files no live write owns (streaming fs driver only). */
  async sweepPartials(quietForMs: number): Promise<number> {
    const { driver } = this.storage.getMount("");
    return isStreamingDriver(driver) ? driver.sweepPartials(quietForMs) : 0;
  }

  async close(): Promise<void> {
    await this.storage.dispose();
  }
}

class ByteCounter extends Transform {
  bytes = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    callback(null, chunk);
  }
}

function toBuffer(value: unknown): Buffer {
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (value instanceof ArrayBuffer) return Buffer.from(value);
  if (typeof value === "string") return Buffer.from(value, "utf8");
  throw new TypeError("the blob driver returned a value that is not bytes");
}
