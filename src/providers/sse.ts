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
import { type Redact, redactNothing } from "../net/secret-redaction.js";
import { toNetworkError } from "../net/upstream-http.js";

const BYTE_ORDER_MARK = "\uFEFF";

/**
 * `redact` runs on every event's data, whole (a secret split across two reads is still found).
 * An upstream answer's body counts its bytes against the answer's cap as this reads it (upstream-body.ts).
 */
export async function* readServerSentEventBatches(body: AsyncIterable<Uint8Array>, redact: Redact = redactNothing): AsyncGenerator<EventSourceMessage[]> {
  const decoder = new StringDecoder("utf8");
  let batch: EventSourceMessage[] = [];
  const onEvent =
    redact === redactNothing
      ? (event: EventSourceMessage) => batch.push(event)
      : (event: EventSourceMessage) => batch.push({ ...event, data: redact(event.data) });
  const parser = createParser({ onEvent });
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

/**
 * A vendor's stream converted batch by batch: `convert` turns each event into what it stands for
 * (none for a line it skips) or throws the vendor's in-stream error; a failed read is a network
 * error. What ends the stream early (a missing terminator) is the caller's to check after it.
 */
export async function* convertEventBatches<T>(
  provider: string,
  body: AsyncIterable<Uint8Array>,
  redact: Redact,
  signal: AbortSignal,
  convert: (message: EventSourceMessage) => T[],
): AsyncGenerator<T[]> {
  try {
    for await (const batch of readServerSentEventBatches(body, redact)) {
      const converted = batch.flatMap(convert);
      if (converted.length > 0) yield converted;
    }
  } catch (error) {
    throw toNetworkError(provider, error, signal);
  }
}
