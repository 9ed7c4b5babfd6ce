// Server-Sent Events responses. Frames are written as each batch arrives, straight into the
// socket: srvx calls `pipe` on a body that has one and is not a Node stream, which avoids what a
// web stream or stream.pipeline costs per request (a transferable ReadableStream; an
// AbortController that pipeline aborts, with a DOMException, at every end). When the client goes
// away, the request's abort signal aborts the upstream call; the generator then finishes and
// bills what was produced.
//
// Frames written during one turn of the event loop leave in one socket write: the response is
// corked at the first and uncorked in that turn's check phase (setImmediate), after the I/O
// callbacks that may bring more. Typically the upstream's last events, its end and our closing
// frame arrive in one turn but a few ticks apart, and would otherwise cost two writes.
import type { Writable } from "node:stream";
import { HTTPResponse } from "h3";

/** `frames` may return a closing frame: it goes out with the end of the response, in one write. */
export function sseResponse(frames: AsyncGenerator<string, string | void>, headers: Record<string, string>): HTTPResponse {
  return new HTTPResponse(new SseBody(frames) as unknown as BodyInit, {
    headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", ...headers },
  });
}

class SseBody {
  constructor(private readonly frames: AsyncGenerator<string, string | void>) {}

  pipe(destination: Writable): Writable {
    void this.pump(destination);
    return destination;
  }

  private async pump(destination: Writable): Promise<void> {
    let closed = false;
    let corked = false;
    destination.once("close", () => (closed = true));
    const uncork = () => {
      corked = false;
      // end() uncorks fully itself; after it the socket may already serve the next request.
      if (!destination.writableEnded && !closed) destination.uncork();
    };
    try {
      for (;;) {
        const next = await this.frames.next();
        if (closed) break;
        if (next.done) {
          if (next.value) destination.end(next.value);
          else destination.end();
          return;
        }
        if (!corked) {
          corked = true;
          destination.cork();
          setImmediate(uncork);
        }
        if (!destination.write(next.value)) await drained(destination);
      }
      await this.frames.return(undefined);
    } catch {
      destination.destroy();
    }
  }
}

function drained(destination: Writable): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      destination.off("drain", done);
      destination.off("close", done);
      resolve();
    };
    destination.on("drain", done);
    destination.on("close", done);
  });
}
