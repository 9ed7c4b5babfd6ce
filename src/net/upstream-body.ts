// An upstream answer's body, read only within its cap: bytes are counted as they arrive (whole
// answers and streams alike) and the read fails the moment they pass the cap, with nothing
// buffered past it. The count is one addition per network read, on the read the caller makes anyway.
import { Readable } from "node:stream";
import type { AnswerLimit } from "./answer-limits.js";

const BYTE_ORDER_MARK = 0xfeff;

export class UpstreamBody implements AsyncIterable<Uint8Array> {
  private received = 0;

  constructor(
    private readonly source: Readable,
    /** None for a file answer, which its caller bounds. */
    private readonly limit: AnswerLimit | undefined,
    /** Ends the call with this error (undici then destroys the source with it). */
    private readonly fail: (error: Error) => void,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    const reads = this.source[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
    if (!this.limit) return reads;
    return {
      next: () => reads.next().then((read) => this.counted(read)),
      return: (value?: unknown) => reads.return?.(value) ?? Promise.resolve({ done: true, value: undefined }),
    };
  }

  /**
   * The whole answer's bytes. Read with listeners, not the async iterator: a whole answer is the
   * hot path of every non-streamed call, and the iterator costs a promise and more per read.
   */
  bytes(): Promise<Buffer> {
    const { source, limit } = this;
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      const onData = (chunk: Buffer) => {
        this.received += chunk.length;
        if (limit && this.received > limit.maxBytes) {
          cleanup();
          // undici destroys the body with this error next; nobody listens any more.
          source.on("error", () => {});
          const error = limit.passed();
          this.fail(error);
          reject(error);
          return;
        }
        chunks.push(chunk);
      };
      const onEnd = () => {
        cleanup();
        resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
      };
      const onError = (error: Error) => {
        cleanup();
        reject(error);
      };
      const cleanup = () => {
        source.off("data", onData);
        source.off("end", onEnd);
        source.off("error", onError);
      };
      source.on("data", onData);
      source.on("end", onEnd);
      source.on("error", onError);
    });
  }

  /** The whole answer as UTF-8 text, a leading byte order mark dropped (as fetch's text() does). */
  async text(): Promise<string> {
    const text = (await this.bytes()).toString("utf8");
    return text.charCodeAt(0) === BYTE_ORDER_MARK ? text.slice(1) : text;
  }

  /** Reads the answer to its end (within its cap) and keeps nothing: the connection serves the next call. */
  async drain(): Promise<void> {
    for await (const _chunk of this);
  }

  /** Drops the answer unread: the connection is closed rather than read to its end. */
  discard(): void {
    // undici reports the abort as an error; nobody listens any more.
    this.source.on("error", () => {});
    this.source.destroy();
  }

  /** The body as a stream, for a caller that pipes it (a file answer's is not counted: its caller bounds it). */
  stream(): Readable {
    return this.limit ? Readable.from(this) : this.source;
  }

  private counted(read: IteratorResult<Uint8Array>): IteratorResult<Uint8Array> {
    if (read.done || !this.limit) return read;
    this.received += read.value.length;
    if (this.received > this.limit.maxBytes) {
      const error = this.limit.passed();
      this.fail(error);
      throw error;
    }
    return read;
  }
}
