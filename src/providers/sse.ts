// Read a vendor's Server-Sent Events body as parsed events, using eventsource-parser.
import { createParser, type EventSourceMessage } from "eventsource-parser";

export async function* readServerSentEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<EventSourceMessage> {
  const decoder = new TextDecoder();
  let queue: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => queue.push(event) });
  for await (const bytes of body) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    if (queue.length > 0) {
      const ready = queue;
      queue = [];
      yield* ready;
    }
  }
  parser.feed(decoder.decode());
  yield* queue;
}
