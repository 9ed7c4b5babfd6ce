// One upstream answer as undici's dispatcher hands it over: the head once, then the body's chunks.
// Why not undici's request(): it wraps every body in a Readable stream and every step in an async
// scope, and the stream's machinery (buffering, events, the async iterator's promise per read) was
// the larger part of undici's cost on a chat call (docs/benchmarks.md, "The upstream answer without
// a stream"). Here a whole answer is collected as it arrives, and a stream is read in what each
// network read brought, the connection paused while more than PAUSE_AT_BYTES wait unread
// (undici's own body pauses at the same 64 KiB).
import type { IncomingHttpHeaders } from "node:http";
import type { Dispatcher } from "undici";

const PAUSE_AT_BYTES = 64 * 1024;

export interface AnswerHead {
  status: number;
  headers: IncomingHttpHeaders;
}

/** What UpstreamBody reads an answer's bytes from. */
export interface AnswerSource {
  /** The next chunk; done at the answer's end; rejects with the reason the answer failed. */
  next(): Promise<IteratorResult<Buffer, undefined>>;
  /** Hands every chunk over as it arrives (no promise per chunk); resolves at the answer's end. */
  each(onChunk: (chunk: Buffer) => void): Promise<void>;
  /** Ends the answer with this reason: the connection is closed rather than read to its end. */
  abort(reason: Error): void;
}

interface Waiting {
  resolve: (read: IteratorResult<Buffer, undefined>) => void;
  reject: (error: Error) => void;
}

const DONE: IteratorResult<Buffer, undefined> = { done: true, value: undefined };

export class DispatchedAnswer implements Dispatcher.DispatchHandler, AnswerSource {
  /** Resolves with the status and headers (a 1xx is skipped); rejects when the call fails before them. */
  readonly head: Promise<AnswerHead>;
  private resolveHead!: (head: AnswerHead) => void;
  private rejectHead!: (error: Error) => void;
  private controller: Dispatcher.DispatchController | undefined;
  /** An abort asked for before undici gave the controller. */
  private abortReason: Error | undefined;
  private started = false;
  private ended = false;
  private failure: Error | undefined;
  /** Chunks nobody has read yet, and their bytes. */
  private readonly queue: Buffer[] = [];
  private queued = 0;
  /** A next() waiting for a chunk. */
  private waiting: Waiting | undefined;
  /** A delivery to the waiting reader is scheduled. */
  private delivering = false;
  /** Set by each(): chunks go to it as they arrive. */
  private collector: ((chunk: Buffer) => void) | undefined;
  private collected: { resolve: () => void; reject: (error: Error) => void } | undefined;

  /** `settled` is told once, when the answer ended or failed. */
  constructor(private readonly settled: () => void) {
    this.head = new Promise<AnswerHead>((resolve, reject) => {
      this.resolveHead = resolve;
      this.rejectHead = reject;
    });
  }

  abort(reason: Error): void {
    if (this.ended || this.failure) return;
    if (this.controller) this.controller.abort(reason);
    else this.abortReason ??= reason;
  }

  /** What has arrived since the last read, as one chunk (as a Readable's read() gives it): a stream's events are read in batches. */
  next(): Promise<IteratorResult<Buffer, undefined>> {
    if (this.queue.length > 0) {
      const chunk = this.queue.length === 1 ? (this.queue[0] as Buffer) : Buffer.concat(this.queue, this.queued);
      this.queue.length = 0;
      this.queued = 0;
      this.resumeBelowMark();
      return Promise.resolve({ done: false, value: chunk });
    }
    if (this.failure) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve(DONE);
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }

  each(onChunk: (chunk: Buffer) => void): Promise<void> {
    for (const chunk of this.queue.splice(0)) onChunk(chunk);
    this.queued = 0;
    if (this.failure) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve();
    this.collector = onChunk;
    const done = new Promise<void>((resolve, reject) => {
      this.collected = { resolve, reject };
    });
    this.resumeBelowMark();
    return done;
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.abortReason) controller.abort(this.abortReason);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders): void {
    if (status < 200) return;
    this.started = true;
    this.resolveHead({ status, headers });
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.collector) {
      this.collector(chunk);
      return;
    }
    this.queue.push(chunk);
    this.queued += chunk.length;
    if (this.queued >= PAUSE_AT_BYTES) controller.pause();
    // A waiting reader gets what this network read brought, together, once undici is done with it.
    if (this.waiting && !this.delivering) {
      this.delivering = true;
      queueMicrotask(this.deliver);
    }
  }

  onResponseEnd(): void {
    this.ended = true;
    this.settled();
    // With chunks still to deliver, the reader gets them first and the end on its next read.
    if (this.queue.length === 0) {
      this.waiting?.resolve(DONE);
      this.waiting = undefined;
    }
    this.collected?.resolve();
    this.collected = undefined;
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    if (this.ended || this.failure) return;
    this.failure = error;
    this.settled();
    if (!this.started) this.rejectHead(error);
    this.waiting?.reject(error);
    this.waiting = undefined;
    this.collected?.reject(error);
    this.collected = undefined;
  }

  private readonly deliver = (): void => {
    this.delivering = false;
    const waiting = this.waiting;
    if (!waiting || this.failure) return;
    this.waiting = undefined;
    this.next().then(waiting.resolve, waiting.reject);
  };

  private resumeBelowMark(): void {
    const controller = this.controller;
    if (controller?.paused && this.queued < PAUSE_AT_BYTES) controller.resume();
  }
}
