// Counts an upload's bytes as they pass and takes quota space before they are written, so
// parallel uploads of one agent (on any instance) can never together go past the quota. With
// shared state every grant is a round trip, so space is asked for in steps (`grantStepBytes`, or
// as much as still fits), not per chunk: a 50 MB upload asks about 13 times. Whatever was granted
// and not written is given back when the file is stored (the record takes its size, in the same
// step) or when it is not.
//
// When the file turns out too large or over quota the meter stops passing bytes on and gives
// its grant back at once, but keeps reading (and dropping) the rest of the file: the client is
// still sending it, the error must state the file's size, and the multipart parser has already
// capped a file part at the size limit + 1. The error is raised when the input ends, which fails
// the blob write and discards the partial blob. Past `hardCapBytes` (a body with no such cap: a
// chunked PUT) it fails at once instead.
import { Transform, type TransformCallback } from "node:stream";

export type MeterFailure = "too-large" | "over-quota";

export interface UploadMeterOptions {
  maxBytes: number;
  /** Stop reading at once past this many bytes. */
  hardCapBytes: number;
  /** Ask for at least this much at a time (less when less fits); 0: each chunk's bytes. */
  grantStepBytes?: number;
  /**
   * Take at least `minBytes` more of the quota and up to `wantBytes`: the bytes granted, or
   * null when not even `minBytes` fit. Absent: the space was taken beforehand (a presigned upload).
   */
  grant?: (minBytes: number, wantBytes: number) => Promise<number | null>;
  /** Give back everything granted (failure, abort); called at most once. */
  giveBack?: () => Promise<void>;
  /** The error for a failure, given the bytes seen in all (asked once the space is given back). */
  errorFor: (failure: MeterFailure, totalBytes: number) => Error | Promise<Error>;
}

export class UploadMeter extends Transform {
  /** Every byte seen, dropped ones included. */
  totalBytes = 0;
  /** Bytes passed on so far. */
  passedBytes = 0;
  /** Bytes of quota granted so far (passed on, or still to be). */
  grantedBytes = 0;
  failure: MeterFailure | null = null;
  private givenBack: Promise<void> | null = null;
  private settled = false;

  constructor(private readonly options: UploadMeterOptions) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.totalBytes += chunk.length;
    if (this.totalBytes > this.options.hardCapBytes) {
      this.fail("too-large");
      this.raise(callback);
      return;
    }
    if (this.failure) {
      callback();
      return;
    }
    if (this.totalBytes > this.options.maxBytes) {
      this.fail("too-large");
      callback();
      return;
    }
    const grant = this.options.grant;
    const shortfall = this.passedBytes + chunk.length - this.grantedBytes;
    if (!grant || shortfall <= 0) {
      this.pass(chunk, callback);
      return;
    }
    const want = Math.max(shortfall, Math.min(this.options.grantStepBytes ?? 0, this.options.maxBytes - this.grantedBytes));
    grant(shortfall, want).then(
      (granted) => {
        if (granted === null) {
          this.fail("over-quota");
          callback();
          return;
        }
        this.grantedBytes += granted;
        this.pass(chunk, callback);
      },
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
    );
  }

  override _flush(callback: TransformCallback): void {
    if (this.failure) this.raise(callback);
    else callback();
  }

  /** The upload is stored: what was granted is the record's now, nothing is given back. */
  settle(): void {
    this.settled = true;
  }

  /** Give back whatever is still granted (failure, abort). Safe to call more than once. */
  giveBack(): Promise<void> {
    if (this.settled) return Promise.resolve();
    this.givenBack ??= this.options.giveBack?.() ?? Promise.resolve();
    return this.givenBack;
  }

  private pass(chunk: Buffer, callback: TransformCallback): void {
    this.passedBytes += chunk.length;
    callback(null, chunk);
  }

  private fail(failure: MeterFailure): void {
    this.failure ??= failure;
    this.giveBack().catch(() => undefined);
  }

  private raise(callback: TransformCallback): void {
    const failure = this.failure ?? "too-large";
    this.giveBack()
      .catch(() => undefined)
      .then(() => this.options.errorFor(failure, this.totalBytes))
      .then(
        (error) => callback(error),
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
      );
  }
}
