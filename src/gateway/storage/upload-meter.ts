// Counts an upload's bytes as they pass and takes quota space for each chunk before it is
// written, so parallel uploads of one agent can never together go past the quota.
//
// When the file turns out too large or over quota the meter stops passing bytes on and gives
// its reservation back at once, but keeps reading (and dropping) the rest of the file: the
// client is still sending it, the error must state the file's size, and the multipart parser
// has already capped a file part at the size limit + 1. The error is raised when the input
// ends, which fails the blob write and discards the partial blob. Past `hardCapBytes` (a body
// with no such cap: a chunked PUT) it fails at once instead. Whoever owns the upload settles the
// reservation: `takeReservation` when the file is stored, `giveBack` when it is not.
import { Transform, type TransformCallback } from "node:stream";

export type MeterFailure = "too-large" | "over-quota";

export interface UploadMeterOptions {
  maxBytes: number;
  /** Stop reading at once past this many bytes. */
  hardCapBytes: number;
  /** Take `bytes` of quota; false when they do not fit. */
  reserve: (bytes: number) => boolean;
  /** Give back quota taken through `reserve`. */
  release: (bytes: number) => void;
  /** The error for a failure, given the bytes seen in all. */
  errorFor: (failure: MeterFailure, totalBytes: number) => Error;
}

export class UploadMeter extends Transform {
  /** Every byte seen, dropped ones included. */
  totalBytes = 0;
  /** Bytes passed on, and reserved, so far. */
  reservedBytes = 0;
  failure: MeterFailure | null = null;

  constructor(private readonly options: UploadMeterOptions) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.totalBytes += chunk.length;
    if (this.totalBytes > this.options.hardCapBytes) {
      this.fail("too-large");
      callback(this.options.errorFor("too-large", this.totalBytes));
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
    if (!this.options.reserve(chunk.length)) {
      this.fail("over-quota");
      callback();
      return;
    }
    this.reservedBytes += chunk.length;
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    callback(this.failure ? this.options.errorFor(this.failure, this.totalBytes) : null);
  }

  /** Hand the reservation over (the upload is stored and its bytes are now counted as used). */
  takeReservation(): number {
    const bytes = this.reservedBytes;
    this.reservedBytes = 0;
    return bytes;
  }

  /** Release whatever is still reserved (failure, abort). Safe to call more than once. */
  giveBack(): void {
    if (this.reservedBytes > 0) this.options.release(this.reservedBytes);
    this.reservedBytes = 0;
  }

  private fail(failure: MeterFailure): void {
    this.failure ??= failure;
    this.giveBack();
  }
}
