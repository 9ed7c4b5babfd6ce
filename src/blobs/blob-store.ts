// The blob store: bytes by key, nothing else. Keys are built by the gateway only, never from
// user input (`<agent id>:<file id>`), and are checked again here before they reach a driver.
import { finished, type Readable, type Writable } from "node:stream";

export interface BlobStore {
  /**
   * Store every byte of `body` under `key`. Resolves with the byte count once the blob is
   * complete; when `body` fails or ends early nothing is left under `key` (no partial blob).
   */
  write(key: string, body: Readable): Promise<number>;
  /** The stored bytes as a stream, or null when there is no blob under `key`. */
  read(key: string): Promise<{ body: Readable; sizeBytes: number } | null>;
  /** Remove the blob; a missing blob is not an error, one that cannot be removed is. */
  remove(key: string): Promise<void>;
  has(key: string): Promise<boolean>;
  /** Every key in the store (startup housekeeping only: it lists the whole backend). */
  keys(): Promise<string[]>;
  /**
   * Remove the temp files no live write owns, when the driver keeps any: those of processes that
   * are gone whatever their age; another live process's only once unwritten for `quietForMs`.
   */
  sweepPartials?(quietForMs: number): Promise<number>;
  /** Whether `write` streams to the backend (true) or has to collect the bytes first. */
  readonly streams: boolean;
  close(): Promise<void>;
}

/**
 * The store behind the blobs failed a call (refused it, or did not answer): the gateway answers
 * 503 naming `reason`, which says what failed and why in words safe to show a client (no bucket,
 * host, key or credential); the message, with those, is for the log.
 */
export class BlobStoreFailure extends Error {
  constructor(
    message: string,
    /** `S3 PutObject: InvalidAccessKeyId`, `S3 GetObject: ECONNREFUSED` ... */
    readonly reason: string,
  ) {
    super(message);
    this.name = "BlobStoreFailure";
  }
}

const KEY_PATTERN = /^[A-Za-z0-9_-]{1,64}(?::[A-Za-z0-9_-]{1,64}){0,3}$/;

/** `agent:file` for the gateway's own ids; anything else is a programming error. */
export function blobKey(...segments: string[]): string {
  return assertBlobKey(segments.join(":"));
}

export function assertBlobKey(key: string): string {
  if (!KEY_PATTERN.test(key)) throw new Error(`invalid blob key ${JSON.stringify(key)}`);
  return key;
}

/**
 * `source.pipe(destination)`, plus what pipe leaves out: a source that fails or closes before its
 * end fails the destination, so whoever consumes the destination sees the error. The consumer
 * may start reading only later (after opening a file ...): async iteration still reports an error
 * that happened before it started, so the event itself needs no listener of its own meanwhile.
 */
export function forwardStream<T extends Writable>(source: Readable, destination: T): T {
  destination.on("error", () => undefined);
  source.pipe(destination);
  finished(source, { writable: false }, (error) => {
    if (error) destination.destroy(error);
  });
  return destination;
}
