// An upstream answer's body, read only within its cap: bytes are counted as they arrive (whole
// answers and streams alike) and the read fails the moment they pass the cap, with nothing
// buffered past it. The count is one addition per network read, on the read the caller makes anyway.
import { Readable } from "node:stream";
import type { AnswerLimit } from "./answer-limits.js";
import type { AnswerSource } from "./dispatched-answer.js";

const BYTE_ORDER_MARK = 0xfeff;

export class UpstreamBody implements AsyncIterable<Uint8Array> {
  private received = 0;

  constructor(
    private readonly source: AnswerSource,
    /** None for a file answer, which its caller bounds. */
    private readonly limit: AnswerLimit | undefined,
    /** Ends the call with this error (the source then fails with it). */
    private readonly fail: (error: Error) => void,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
    return {
      next: () => this.source.next().then((read) => this.counted(read)),
      // A reader that stops early (a break, a client gone) leaves the rest unread: the connection is closed.
      return: () => {
        this.discard();
        return Promise.resolve({ done: true, value: undefined });
      },
    };
  }

  /** The whole answer's bytes, collected as they arrive (the hot path of every non-streamed call: no promise per read). */
  async bytes(): Promise<Buffer> {
    const { limit } = this;
    const chunks: Buffer[] = [];
    let over: Error | undefined;
    try {
      await this.source.each((chunk) => {
        if (over) return;
        this.received += chunk.length;
        if (limit && this.received > limit.maxBytes) {
          over = limit.passed();
          this.fail(over);
          return;
        }
        chunks.push(chunk);
      });
    } catch (error) {
      throw over ?? error;
    }
    if (over) throw over;
    return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
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
    this.source.abort(new Error("the answer was dropped unread"));
  }

  /** The body as a stream, for a caller that pipes it (a file answer's is not counted: its caller bounds it). */
  stream(): Readable {
    return Readable.from(this, { objectMode: false });
  }

  private counted(read: IteratorResult<Buffer, undefined>): IteratorResult<Uint8Array> {
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
