// The two SSE dialects the gateway speaks, one frame (one socket write) per upstream batch.
import type { NativeMessagesEvent } from "../providers/messages-types.js";
import { GatewayError } from "../gateway/errors.js";

/** OpenAI chat: `data: <json>` per chunk, `data: [DONE]` at the end (riding with the last batch). */
export async function* chatFrames(batches: AsyncGenerator<string[]>, log: (error: unknown) => void): AsyncGenerator<string> {
  let pending = "";
  try {
    for await (const batch of batches) {
      if (pending) yield pending;
      pending = batch.length === 1 ? `data: ${batch[0]}\n\n` : batch.map((json) => `data: ${json}\n\n`).join("");
    }
    yield `${pending}data: [DONE]\n\n`;
  } catch (error) {
    // After the first byte a failure can only be reported in the stream: the SDK raises it.
    const body = error instanceof GatewayError
      ? error.toBody()
      : { error: { message: "The upstream stream failed before it finished.", type: "upstream_error", code: "stream_interrupted" } };
    if (!(error instanceof GatewayError)) log(error);
    yield `${pending}data: ${JSON.stringify(body)}\n\n`;
  }
}

/** Anthropic messages: `event: <name>` and `data: <json>` per event; no terminator. */
export async function* messagesFrames(batches: AsyncGenerator<NativeMessagesEvent[]>): AsyncGenerator<string> {
  for await (const batch of batches) yield batch.map((event) => `event: ${event.event}\ndata: ${event.data}\n\n`).join("");
}
