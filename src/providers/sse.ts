// Read a vendor's Server-Sent Events body with eventsource-parser. Events are yielded in the
// batches they arrived in (one network read), so a relay can forward each batch in one write
// instead of one write and one promise hop per event.
import { createParser, type EventSourceMessage } from "eventsource-parser";

export async function* readServerSentEventBatches(body: AsyncIterable<Uint8Array>): AsyncGenerator<EventSourceMessage[]> {
  const decoder = new TextDecoder();
  let batch: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => batch.push(event) });
  for await (const bytes of body) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    if (batch.length > 0) {
      const ready = batch;
      batch = [];
      yield ready;
    }
  }
  parser.feed(decoder.decode());
  if (batch.length > 0) yield batch;
}
