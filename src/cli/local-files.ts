// Local files for `gw storage`: uploads read from disk as they are sent, downloads written to a
// temp file beside the target and renamed into place once complete (a failed download leaves
// nothing behind under the target's name).
import { createWriteStream, promises as fs } from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import type { UploadSource } from "../client/storage-types.js";
import { CliError } from "./cli-error.js";
import { contentTypeOf } from "./content-types.js";
import type { TransferProgress } from "./transfer-progress.js";

const CHUNK_BYTES = 256 * 1024;

export async function fileSource(file: string, contentType: string | undefined, progress: (sizeBytes: number) => TransferProgress): Promise<UploadSource> {
  let stat;
  try {
    stat = await fs.stat(file);
  } catch (error) {
    throw new CliError(`${file}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message}`);
  }
  if (!stat.isFile()) throw new CliError(`${file}: not a regular file`);
  const sizeBytes = stat.size;
  return {
    filename: path.basename(file),
    contentType: contentType ?? contentTypeOf(file),
    sizeBytes,
    open: () => readFileStream(file, progress(sizeBytes)),
  };
}

/** The file's bytes, read a chunk at a time as the request asks for them. */
async function* readFileStream(file: string, progress: TransferProgress): AsyncGenerator<Uint8Array> {
  const handle = await fs.open(file, "r");
  try {
    for (;;) {
      const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
      const { bytesRead } = await handle.read(buffer, 0, CHUNK_BYTES, null);
      if (bytesRead === 0) break;
      progress.add(bytesRead);
      yield buffer.subarray(0, bytesRead);
    }
    progress.done();
  } finally {
    await handle.close();
  }
}

/** Write a download to `target` (via a temp file) or to stdout; returns the bytes written. */
export async function saveDownload(body: ReadableStream<Uint8Array>, target: string | "-", progress: TransferProgress): Promise<number> {
  let bytes = 0;
  const source = Readable.fromWeb(body as unknown as NodeReadableStream<Uint8Array>);
  const counted = async function* (chunks: AsyncIterable<Buffer>) {
    for await (const chunk of chunks) {
      bytes += chunk.length;
      progress.add(chunk.length);
      yield chunk;
    }
  };
  if (target === "-") {
    await pipeline(source, counted, process.stdout, { end: false });
    progress.done();
    return bytes;
  }
  const temporary = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.part`);
  try {
    await pipeline(source, counted, createWriteStream(temporary, { flags: "wx" }));
    await fs.rename(temporary, target);
  } catch (error) {
    await fs.rm(temporary, { force: true });
    throw error;
  }
  progress.done();
  return bytes;
}

/**
 * Where `gw storage get` saves a file when -o is not given: the stored filename as a plain name in
 * the current directory (no path, no control characters; the id when nothing usable is left).
 */
export function localNameFor(filename: string | undefined, id: string): string {
  const name = (filename ?? "").replace(/[\u0000-\u001f\u007f]/g, "").split(/[\\/]/).pop()?.trim() ?? "";
  return name === "" || name === "." || name === ".." ? id : name;
}
