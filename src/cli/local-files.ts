// Local files for `gw storage`: uploads checked before the first is sent and read from disk as
// they are sent, downloads written to a temp file beside the target and renamed into place once
// complete (a failed download leaves nothing behind under the target's name).
import { constants, createWriteStream, promises as fs } from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import type { UploadSource } from "../client/storage-types.js";
import { replaceControlCharacters } from "../text/control-characters.js";
import { CliError } from "./cli-error.js";
import { contentTypeOf } from "./content-types.js";
import { humanBytes, type TransferProgress } from "./transfer-progress.js";

const CHUNK_BYTES = 256 * 1024;

/** A file to upload, checked on disk. */
export interface LocalFile {
  path: string;
  sizeBytes: number;
}

/**
 * Every argument of an upload, checked before anything is sent (exists, a regular file, readable),
 * so a bad one never leaves the files before it uploaded. All problems are named, one a line.
 */
export async function checkLocalFiles(files: readonly string[]): Promise<LocalFile[]> {
  const checked = await Promise.all(files.map(inspectLocalFile));
  refuseProblems(
    checked.flatMap((entry) => (typeof entry === "string" ? [entry] : [])),
    files.length,
  );
  return checked.filter((entry): entry is LocalFile => typeof entry !== "string");
}

/** Files over the gateway's per-file limit (when it said one) are refused before any is sent. */
export function checkFileSizes(files: readonly LocalFile[], maxFileBytes: number | undefined): void {
  if (maxFileBytes === undefined) return;
  const limit = `the gateway's limit of ${humanBytes(maxFileBytes)} per file (${maxFileBytes} bytes)`;
  refuseProblems(
    files
      .filter((file) => file.sizeBytes > maxFileBytes)
      .map((file) => `${file.path}: ${humanBytes(file.sizeBytes)} (${file.sizeBytes} bytes) is over ${limit}`),
    files.length,
  );
}

function refuseProblems(problems: string[], fileCount: number): void {
  if (problems.length === 0) return;
  throw new CliError(fileCount > 1 ? `${problems.join("\n")}\nnothing was uploaded` : problems.join("\n"));
}

/** The file's size, or what is wrong with it as `FILE: problem`. */
async function inspectLocalFile(file: string): Promise<LocalFile | string> {
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile()) return `${file}: not a regular file`;
    await fs.access(file, constants.R_OK);
    return { path: file, sizeBytes: stat.size };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return `${file}: no such file`;
    if (code === "EACCES" || code === "EPERM") return `${file}: not readable (permission denied)`;
    return `${file}: ${(error as Error).message}`;
  }
}

export function fileSource(file: LocalFile, contentType: string | undefined, progress: (sizeBytes: number) => TransferProgress): UploadSource {
  return {
    filename: path.basename(file.path),
    contentType: contentType ?? contentTypeOf(file.path),
    sizeBytes: file.sizeBytes,
    open: () => readFileStream(file.path, progress(file.sizeBytes)),
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
  const name =
    replaceControlCharacters(filename ?? "", "")
      .split(/[\\/]/)
      .pop()
      ?.trim() ?? "";
  return name === "" || name === "." || name === ".." ? id : name;
}
