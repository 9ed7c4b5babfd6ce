// Turn an async stream of JSON events into an OpenAI-style SSE response: `data: <json>` per
// event, `data: [DONE]` at the end, written as each event arrives. A failure after the stream
// started is sent as a `data: {"error":...}` event (what the OpenAI SDK raises).
// Cancelling the response (client gone) returns the generator, which aborts the upstream.
import { GatewayError } from "../gateway/errors.js";

const encoder = new TextEncoder();

export function sseResponse(events: AsyncGenerator<unknown>, headers: Record<string, string>, log: (error: unknown) => void): Response {
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const next = await events.next();
          if (next.done) {
            controller.enqueue(encoder.encode("data: [DONE]\n\n"));
            controller.close();
            return;
          }
          controller.enqueue(encoder.encode(`data: ${JSON.stringify(next.value)}\n\n`));
        } catch (error) {
          const body = error instanceof GatewayError
            ? error.toBody()
            : { error: { message: "The upstream stream failed before it finished.", type: "upstream_error", code: "stream_interrupted" } };
          if (!(error instanceof GatewayError)) log(error);
          controller.enqueue(encoder.encode(`data: ${JSON.stringify(body)}\n\n`));
          controller.close();
        }
      },
      async cancel() {
        await events.return(undefined);
      },
    },
    { highWaterMark: 0 },
  );
  return new Response(stream, {
    headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive", ...headers },
  });
}
