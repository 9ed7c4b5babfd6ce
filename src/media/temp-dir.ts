// A private directory for an engine's files (ffprobe reads a file, not a pipe, so it can seek to
// an mp4's index at the end), made by the server under the OS temp directory and removed
// whatever happens. Names inside it are fixed by the callers, never taken from a request.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";

export async function withTempDir<T>(work: (directory: string) => Promise<T>): Promise<T> {
  const directory = await mkdtemp(path.join(os.tmpdir(), "gw-audio-"));
  try {
    return await work(directory);
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}
