// Turn an async stream of JSON texts into an OpenAI-style SSE response: `data: <json>` per
// event, `data: [DONE]` at the end, written as each batch arrives. A failure after the stream
// started is sent as a `data: {"error":...}` event (what the OpenAI SDK raises).
import type { Writable } from "node:stream";
import { HTTPResponse } from "h3";
import { GatewayError } from "../gateway/errors.js";

export function sseResponse(events: AsyncGenerator<string[]>, headers: Record<string, string>, log: (error: unknown) => void): HTTPResponse {
  return new HTTPResponse(new SseBody(serialize(events, log)) as unknown as BodyInit, {
    headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", ...headers },
  });
}

/**
 * A response body srvx hands the Node response to (it calls `pipe` on bodies that have one and
 * are not Node streams). Writing frames straight into the socket avoids what a web stream or
 * stream.pipeline costs per request (a transferable ReadableStream; an AbortController that
 * pipeline aborts, with a DOMException, at every end). When the client goes away the request's
 * abort signal aborts the upstream call; the generator then finishes and bills what was produced.
 */
class SseBody {
  constructor(private readonly frames: AsyncGenerator<string>) {}

  pipe(destination: Writable): Writable {
    void this.pump(destination);
    return destination;
  }

  private async pump(destination: Writable): Promise<void> {
    let closed = false;
    destination.once("close", () => (closed = true));
    try {
      for (;;) {
        const next = await this.frames.next();
        if (next.done || closed) break;
        if (!destination.write(next.value)) await drained(destination);
      }
      if (closed) await this.frames.return(undefined);
      else destination.end();
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

/** One frame per batch of JSON texts that arrived together; `[DONE]` rides with the last one. */
async function* serialize(events: AsyncGenerator<string[]>, log: (error: unknown) => void): AsyncGenerator<string> {
  let pending = "";
  try {
    for await (const batch of events) {
      if (pending) yield pending;
      pending = batch.length === 1 ? `data: ${batch[0]}\n\n` : batch.map((json) => `data: ${json}\n\n`).join("");
    }
    yield `${pending}data: [DONE]\n\n`;
  } catch (error) {
    const body = error instanceof GatewayError
      ? error.toBody()
      : { error: { message: "The upstream stream failed before it finished.", type: "upstream_error", code: "stream_interrupted" } };
    if (!(error instanceof GatewayError)) log(error);
    yield `${pending}data: ${JSON.stringify(body)}\n\n`;
  }
}
