// Turn an async stream of JSON events into an OpenAI-style SSE response: `data: <json>` per
// event, `data: [DONE]` at the end, each written as it arrives. A failure after the stream
// started is sent as a `data: {"error":...}` event (what the OpenAI SDK raises).
// The body is a Node stream (srvx pipes it straight into the socket); when the client goes
// away the pipeline destroys it, which returns the generator and aborts the upstream call.
import { Readable } from "node:stream";
import { HTTPResponse } from "h3";
import { GatewayError } from "../gateway/errors.js";

export function sseResponse(events: AsyncGenerator<unknown>, headers: Record<string, string>, log: (error: unknown) => void): HTTPResponse {
  const body = Readable.from(serialize(events, log), { objectMode: false });
  return new HTTPResponse(body as unknown as BodyInit, {
    headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", ...headers },
  });
}

async function* serialize(events: AsyncGenerator<unknown>, log: (error: unknown) => void): AsyncGenerator<string> {
  try {
    for await (const event of events) yield `data: ${JSON.stringify(event)}\n\n`;
    yield "data: [DONE]\n\n";
  } catch (error) {
    const body = error instanceof GatewayError
      ? error.toBody()
      : { error: { message: "The upstream stream failed before it finished.", type: "upstream_error", code: "stream_interrupted" } };
    if (!(error instanceof GatewayError)) log(error);
    yield `data: ${JSON.stringify(body)}\n\n`;
  }
}
