// Writing a stream into an open file, fast and with flat memory (scripts/bench-transfer.mjs):
//
// - Chunks are written in batches: while one write is in flight the next chunks queue up (up to
//   SINK_BUFFER_BYTES, then the source is paused) and go in one writev. A write per 64 KiB chunk,
//   each waited for, cost a thread-pool round trip and two context switches per chunk.
// - Every FLUSH_STEP_BYTES a datasync starts in the background (one at a time), so the page cache
//   is written back while the stream still arrives and the fsync at the end (before the caller's
//   rename) waits only for the last step, not for the whole file (docs/decisions.md §5). The
//   datasyncs only start that fsync's work early.
import type { FileHandle } from "node:fs/promises";
import { type Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";

/** Queued while a write is in flight before the source is paused: a bound on memory per write. */
export const SINK_BUFFER_BYTES = 1024 * 1024;
/** Bytes written between two background datasyncs. */
export const FLUSH_STEP_BYTES = 4 * 1024 * 1024;

/**
 * Every byte of `source` into `handle` from its current position, then fsynced; rejects with the
 * source's or the disk's error.
 */
export async function writeStreamSynced(handle: FileHandle, source: Readable): Promise<void> {
  const flush = new BackgroundFlush(handle, FLUSH_STEP_BYTES);
  try {
    await pipeline(source, new FileSink(handle, flush));
    // Issued at once, beside a datasync still running: it covers every byte written, and waits
    // only for what that one has not yet written back.
    await handle.sync();
  } finally {
    // Never leave a datasync running under a handle the caller is about to close.
    await flush.settled();
  }
  flush.throwIfFailed();
}

class FileSink extends Writable {
  constructor(
    private readonly handle: FileHandle,
    private readonly flush: BackgroundFlush,
  ) {
    super({ highWaterMark: SINK_BUFFER_BYTES });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.writeAll([chunk]).then(() => callback(), callback);
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, callback: (error?: Error | null) => void): void {
    this.writeAll(chunks.map((entry) => entry.chunk)).then(() => callback(), callback);
  }

  /** writev may write less than asked (a full disk reports itself on the next call): the rest goes again. */
  private async writeAll(buffers: Buffer[]): Promise<void> {
    // A disk that failed a datasync fails the write now rather than at its end.
    this.flush.throwIfFailed();
    let pending = buffers;
    let total = pending.reduce((sum, buffer) => sum + buffer.length, 0);
    while (total > 0) {
      const { bytesWritten } = await this.handle.writev(pending);
      this.flush.wrote(bytesWritten);
      total -= bytesWritten;
      if (total > 0) pending = remainder(pending, bytesWritten);
    }
  }
}

function remainder(buffers: Buffer[], written: number): Buffer[] {
  const rest: Buffer[] = [];
  let skip = written;
  for (const buffer of buffers) {
    if (skip >= buffer.length) {
      skip -= buffer.length;
      continue;
    }
    rest.push(skip > 0 ? buffer.subarray(skip) : buffer);
    skip = 0;
  }
  return rest;
}

/** Starts a datasync each time `stepBytes` more have been written, never two at once; a failed one fails the write. */
class BackgroundFlush {
  private unflushed = 0;
  private running: Promise<void> | null = null;
  private failure: unknown = null;

  constructor(
    private readonly handle: FileHandle,
    private readonly stepBytes: number,
  ) {}

  wrote(bytes: number): void {
    this.unflushed += bytes;
    if (this.running || this.failure || this.unflushed < this.stepBytes) return;
    this.unflushed = 0;
    this.running = this.handle.datasync().then(
      () => {
        this.running = null;
      },
      (error: unknown) => {
        this.failure ??= error;
        this.running = null;
      },
    );
  }

  /** Resolves once no datasync runs; never rejects. */
  async settled(): Promise<void> {
    await this.running;
  }

  throwIfFailed(): void {
    if (this.failure) throw this.failure;
  }
}
