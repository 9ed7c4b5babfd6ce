// Server-Sent Events responses. Frames are written as each batch arrives, straight into the
// socket: srvx calls `pipe` on a body that has one and is not a Node stream, which avoids what a
// web stream or stream.pipeline costs per request (a transferable ReadableStream; an
// AbortController that pipeline aborts, with a DOMException, at every end). When the client goes
// away, the request's abort signal aborts the upstream call; the generator then finishes and
// bills what was produced.
//
// Frames written during one turn of the event loop leave in one socket write: the socket is
// corked at the first and uncorked in that turn's check phase, after the I/O callbacks that may
// bring more. The uncork is handed to `flushAt`, which for metered streams runs it after the
// turn's usage rows are written (UsageLog.afterTurnWrites): the closing frame, which waits for
// the stream's row, then leaves with the last batch, in the write that ends the response.
// The socket is corked, not the response: on Node 22 and 24 a corked response that ends with a
// last chunk sends the chunked terminator before that chunk (seen on 22.23.3 and 24.9.0).
import type { ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Writable } from "node:stream";
import { HTTPResponse } from "h3";
import { streamBroke } from "./sse-frames.js";

/** Responses whose stream broke after its first byte: an error frame or event ended it, or a failure cut it. */
const brokenAnswers = new WeakSet<object>();

/** Whether this response's stream broke (its 200 was sent long before): traces mark the request failed. */
export function answerBroke(response: object): boolean {
  return brokenAnswers.has(response);
}

/** Runs a task in the check phase of the current turn of the event loop. */
export type TurnEndScheduler = (task: () => void) => void;

/** `frames` may return a closing frame: it goes out with the end of the response, in one write. */
export function sseResponse(
  frames: AsyncGenerator<string, string | undefined>,
  headers: Record<string, string>,
  flushAt: TurnEndScheduler = setImmediate,
): HTTPResponse {
  return new HTTPResponse(new SseBody(frames, flushAt) as unknown as BodyInit, {
    headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", ...headers },
  });
}

class SseBody {
  constructor(
    private readonly frames: AsyncGenerator<string, string | undefined>,
    private readonly flushAt: TurnEndScheduler,
  ) {}

  pipe(destination: Writable): Writable {
    void this.pump(destination);
    return destination;
  }

  private async pump(destination: Writable): Promise<void> {
    let closed = false;
    let corked: Socket | null = null;
    destination.once("close", () => (closed = true));
    const uncork = () => {
      const socket = corked;
      corked = null;
      // end() uncorks fully itself; after it the socket may already serve the next request.
      if (socket && !destination.writableEnded && !closed) socket.uncork();
    };
    try {
      for (;;) {
        const next = await this.frames.next();
        if (closed) break;
        if (next.done) {
          if (streamBroke(this.frames)) brokenAnswers.add(destination);
          if (next.value) destination.end(next.value);
          else destination.end();
          return;
        }
        // A pipelined response has no socket until the one before it ends: it is not corked.
        const socket = (destination as Partial<ServerResponse>).socket ?? null;
        if (!corked && socket) {
          corked = socket;
          socket.cork();
          this.flushAt(uncork);
        }
        if (!destination.write(next.value)) await drained(destination);
      }
      await this.frames.return(undefined);
    } catch {
      brokenAnswers.add(destination);
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
