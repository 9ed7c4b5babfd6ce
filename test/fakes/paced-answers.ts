/**
 * How a fake upstream writes a hostile 200 answer, for tests of what gw reads from upstreams:
 *  - `drip`: the answer's bytes a few at a time on an interval (the idle timeout never fires);
 *  - `padTo`: the answer padded to a huge size inside one of its strings (a picture's base64, a
 *    completion's text), generated while it is written and never held whole, written only as fast
 *    as the reader takes it (backpressure);
 *  - `chunked`: no Content-Length (chunked transfer), so the reader learns the size only by
 *    reading; otherwise the answer announces its true length.
 * Endless streams (`writeEndlessEvents`) write events until the reader goes away.
 * An AnswerMeter given in the behaviour counts the bytes written and sees the connection close:
 * how far a reader read before it stopped, without a clock.
 */
import type http from "node:http";

export class AnswerMeter {
  /** Body bytes handed to the socket so far. */
  written = 0;
  /** The whole answer was written. */
  finished = false;
  /** The reader closed the connection before the answer was all written. */
  closedEarly = false;
  private readonly done: Promise<void>;
  private settle!: () => void;

  constructor() {
    this.done = new Promise((resolve) => (this.settle = resolve));
  }

  /** Resolves once the answer was written to its end or the connection closed. */
  ended(): Promise<void> {
    return this.done;
  }

  end(early: boolean): void {
    if (this.finished || this.closedEarly) return;
    if (early) this.closedEarly = true;
    else this.finished = true;
    this.settle();
  }
}

export interface AnswerPacing {
  /** Write `bytes` bytes every `everyMs` ms. */
  drip?: { bytes: number; everyMs: number };
  /** The answer's length in bytes, reached by repeating a filler character where the answer holds PAD_MARKER. */
  padTo?: number;
  /** Announce no Content-Length (chunked transfer encoding). */
  chunked?: boolean;
  meter?: AnswerMeter;
}

/** Put this string where the padding goes (inside a JSON string, or as the whole of a binary answer). */
export const PAD_MARKER = "@@pad@@";

const CHUNK = 64 * 1024;

/** Writes `body` (a text holding PAD_MARKER once when padded, or bytes) as a 200 answer, paced as asked. */
export async function sendPaced(response: http.ServerResponse, contentType: string, body: string | Buffer, pacing: AnswerPacing, filler = "a"): Promise<void> {
  const at = typeof body === "string" ? body.indexOf(PAD_MARKER) : -1;
  const head = typeof body === "string" ? Buffer.from(at < 0 ? body : body.slice(0, at)) : body;
  const tail = Buffer.from(typeof body === "string" && at >= 0 ? body.slice(at + PAD_MARKER.length) : "");
  const padding = pacing.padTo === undefined || at < 0 ? 0 : Math.max(0, pacing.padTo - head.length - tail.length);
  const length = head.length + padding + tail.length;
  const meter = pacing.meter ?? new AnswerMeter();
  response.on("close", () => meter.end(!response.writableFinished));
  response.writeHead(200, pacing.chunked ? { "content-type": contentType } : { "content-type": contentType, "content-length": String(length) });
  const fill = Buffer.alloc(CHUNK, filler);
  const pieces = function* (): Generator<Buffer> {
    yield head;
    for (let left = padding; left > 0; left -= CHUNK) yield left >= CHUNK ? fill : fill.subarray(0, left);
    yield tail;
  };
  for (const piece of pieces()) {
    for (let offset = 0; offset < piece.length; ) {
      if (response.destroyed) return;
      const size = pacing.drip ? pacing.drip.bytes : piece.length;
      const part = piece.subarray(offset, offset + size);
      offset += part.length;
      if (pacing.drip && meter.written > 0) await pause(pacing.drip.everyMs, response);
      if (!(await write(response, part, meter))) return;
    }
  }
  response.end();
}

/** Writes `next()` as long as the reader takes it, every `everyMs` (default: as fast as it reads), until the connection closes. */
export async function writeEndlessEvents(response: http.ServerResponse, next: () => string, options: { everyMs?: number; meter?: AnswerMeter }): Promise<void> {
  const meter = options.meter ?? new AnswerMeter();
  response.on("close", () => meter.end(true));
  while (!response.destroyed) {
    if (options.everyMs) await pause(options.everyMs, response);
    if (!(await write(response, Buffer.from(next()), meter))) return;
  }
}

/** False when the connection closed; waits for the reader when the socket's buffer is full. */
async function write(response: http.ServerResponse, bytes: Buffer, meter: AnswerMeter): Promise<boolean> {
  if (response.destroyed) return false;
  meter.written += bytes.length;
  if (response.write(bytes)) return !response.destroyed;
  await new Promise<void>((resolve) => {
    const done = () => {
      response.off("drain", done);
      response.off("close", done);
      resolve();
    };
    response.on("drain", done);
    response.on("close", done);
  });
  return !response.destroyed;
}

function pause(milliseconds: number, response: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, milliseconds);
    function done() {
      clearTimeout(timer);
      response.off("close", done);
      resolve();
    }
    response.on("close", done);
  });
}
