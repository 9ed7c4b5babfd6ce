// Read a vendor's Server-Sent Events body with eventsource-parser. Events are yielded in the
// batches they arrived in (one network read), so a relay can forward each batch in one write
// instead of one write and one promise hop per event.
//
// Bytes become text through node:string_decoder, which keeps a UTF-8 character split across two
// reads whole, as TextDecoder does, at a fifth of its cost per read on Node 20 (2 against 10 µs
// for a 4 KB read). Unlike TextDecoder it keeps a leading byte order mark, which SSE says to
// ignore, so that is dropped here.
import { StringDecoder } from "node:string_decoder";
import { createParser, type EventSourceMessage } from "eventsource-parser";

const BYTE_ORDER_MARK = "\uFEFF";

export async function* readServerSentEventBatches(body: AsyncIterable<Uint8Array>): AsyncGenerator<EventSourceMessage[]> {
  const decoder = new StringDecoder("utf8");
  let batch: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => batch.push(event) });
  let first = true;
  for await (const bytes of body) {
    let text = decoder.write(bytes);
    if (first && text) {
      first = false;
      if (text.startsWith(BYTE_ORDER_MARK)) text = text.slice(1);
    }
    parser.feed(text);
    if (batch.length > 0) {
      const ready = batch;
      batch = [];
      yield ready;
    }
  }
  parser.feed(decoder.end());
  if (batch.length > 0) yield batch;
}
