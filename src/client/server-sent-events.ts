// Read an SSE response body as the JSON of each `data:` event, up to `[DONE]`.
import { createParser, type EventSourceMessage } from "eventsource-parser";

export async function* readServerSentEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<EventSourceMessage> {
  const decoder = new TextDecoder();
  let queue: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => queue.push(event) });
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
      if (queue.length > 0) {
        const ready = queue;
        queue = [];
        yield* ready;
      }
    }
    parser.feed(decoder.decode());
    parser.reset({ consume: true });
    yield* queue;
  } finally {
    // Stopping early (at [DONE], on an error event, or when the consumer breaks) closes the connection.
    await reader.cancel().catch(() => undefined);
  }
}
