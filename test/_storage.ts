// Helpers for the storage tests: a small HTTP caller that returns status, headers and parsed
// body, hand-built multipart bodies (for the malformed and hostile cases no client library
// would produce), and large files made sparse on disk and read as streams.
import { closeSync, existsSync, ftruncateSync, openSync, readdirSync, readFileSync } from "node:fs";
import { open } from "node:fs/promises";
import path from "node:path";
import type { UploadSource } from "../src/client/storage-types.js";
import { homePaths } from "../src/config/paths.js";
import { tempDir } from "./helpers/temp-dirs.js";

export interface Answer<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export async function answer<T = any>(response: Response): Promise<Answer<T>> {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: the test looks at `text`
  }
  return { status: response.status, headers: response.headers, body: body as T, text };
}

export function storageApi(gateway: { url: string }, key: string) {
  const auth = { authorization: `Bearer ${key}` };
  const call = async (pathname: string, init: RequestInit = {}) =>
    answer(
      await fetch(`${gateway.url}${pathname}`, { redirect: "manual", ...init, headers: { ...auth, ...(init.headers as Record<string, string> | undefined) } }),
    );
  return {
    call,
    upload: (filename: string, content: string | Uint8Array, contentType = "application/octet-stream") => {
      const form = new FormData();
      form.append("file", new Blob([bytesOrText(content)], { type: contentType }), filename);
      return call("/v1/storage/upload", { method: "POST", body: form });
    },
    uploadRaw: (body: string | Uint8Array, contentType: string) =>
      call("/v1/storage/upload", { method: "POST", body: bytesOrText(body), headers: { "content-type": contentType } }),
    list: (query = "") => call(`/v1/storage/files${query}`),
    redirect: (id: string) => call(`/v1/storage/files/${id}`),
    url: (id: string) => call(`/v1/storage/files/${id}/url`),
    remove: (id: string) => call(`/v1/storage/files/${id}`, { method: "DELETE" }),
    presign: (body: unknown) =>
      call("/v1/storage/presigned-upload", { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
    quota: () => call("/v1/storage/quota"),
  };
}

export type StorageApi = ReturnType<typeof storageApi>;

/** A copy on a plain ArrayBuffer, which is what Blob and fetch bodies are typed to take. */
export function bytesOrText(content: string | Uint8Array): string | Uint8Array<ArrayBuffer> {
  return typeof content === "string" ? content : new Uint8Array(content);
}

export const BOUNDARY = "gwtestboundary";

/** A multipart body from raw parts: each part is its header lines and its content. */
export function multipart(parts: Array<{ headers: string[]; content: string | Uint8Array }>, options: { end?: boolean } = {}): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    chunks.push(Buffer.from(`--${BOUNDARY}\r\n${part.headers.join("\r\n")}\r\n\r\n`));
    chunks.push(Buffer.from(part.content));
    chunks.push(Buffer.from("\r\n"));
  }
  if (options.end !== false) chunks.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(chunks);
}

export const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;

export function filePart(name: string, disposition: string, content: string | Uint8Array, contentType = "application/octet-stream") {
  return { headers: [`Content-Disposition: form-data; name="${name}"; ${disposition}`, `Content-Type: ${contentType}`], content };
}

/** A file of `size` bytes that takes no room on disk (sparse: reads as zeros). */
export function sparseFile(size: number, directory = tempDir("gw-sparse-")): string {
  const file = path.join(directory, `sparse-${size}.bin`);
  const fd = openSync(file, "w");
  ftruncateSync(fd, size);
  closeSync(fd);
  return file;
}

/** An UploadSource read from disk a chunk at a time (what `gw storage upload` does). */
export function streamedFile(file: string, sizeBytes: number, contentType = "application/octet-stream", filename = path.basename(file)): UploadSource {
  return {
    filename,
    contentType,
    sizeBytes,
    open: async function* () {
      const handle = await open(file, "r");
      try {
        for (;;) {
          const buffer = Buffer.allocUnsafe(1024 * 1024);
          const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
          if (bytesRead === 0) return;
          yield buffer.subarray(0, bytesRead);
        }
      } finally {
        await handle.close();
      }
    },
  };
}

/** Every file under the home's blob directory and storage records, as relative paths. */
export function storedPaths(home: string): { blobs: string[]; records: string[] } {
  const paths = homePaths(home);
  return { blobs: walk(paths.blobsDir), records: walk(path.join(paths.dataDir, "storage", "records")) };
}

function walk(directory: string, prefix = ""): string[] {
  if (!existsSync(directory)) return [];
  const found: string[] = [];
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const relative = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) found.push(...walk(path.join(directory, entry.name), relative));
    else found.push(relative);
  }
  return found.sort();
}

export { eventually } from "./helpers/eventually.js";

export function agentIdOf(home: string, name: string): string {
  const metadata = JSON.parse(readFileSync(homePaths(home).metadata, "utf8")) as { agents: Array<{ id: string; name: string }> };
  const agent = metadata.agents.find((candidate) => candidate.name === name);
  if (!agent) throw new Error(`no agent ${name}`);
  return agent.id;
}

/** Plans for tests: generous rate limits, small quotas. */
export function testPlan(storageBytes: number, storageOperationsPerPeriod = 10_000) {
  return { requestsPerMinute: 100_000, storageBytes, storageOperationsPerPeriod };
}
