// The two SSE dialects the gateway speaks: one frame per upstream batch, yielded as soon as the
// batch arrives, never held back waiting for the next one (sse-response.ts decides the writes).

import { GatewayError } from "../gateway/errors.js";
import type { NativeMessagesEvent } from "../providers/messages-types.js";

/**
 * OpenAI chat: `data: <json>` per chunk, each batch written the moment it arrives. The closing
 * `data: [DONE]` (or the error event) is the generator's return value, which the response
 * writes together with its end (one write).
 */
export async function* chatFrames(batches: AsyncGenerator<string[]>, log: (error: unknown) => void): AsyncGenerator<string, string> {
  try {
    for await (const batch of batches) yield batch.length === 1 ? `data: ${batch[0]}\n\n` : batch.map((json) => `data: ${json}\n\n`).join("");
    return "data: [DONE]\n\n";
  } catch (error) {
    // After the first byte a failure can only be reported in the stream: the SDK raises it.
    const body =
      error instanceof GatewayError
        ? error.toBody()
        : { error: { message: "The upstream stream failed before it finished.", type: "upstream_error", code: "stream_interrupted" } };
    // A client that went away aborted the upstream call: nothing to report, nobody to tell.
    if (!(error instanceof GatewayError) && !(error instanceof Error && error.name === "AbortError")) log(error);
    return `data: ${JSON.stringify(body)}\n\n`;
  }
}

/** Anthropic messages: `event: <name>` and `data: <json>` per event; no terminator. */
export async function* messagesFrames(batches: AsyncGenerator<NativeMessagesEvent[]>): AsyncGenerator<string> {
  for await (const batch of batches) yield batch.map((event) => `event: ${event.event}\ndata: ${event.data}\n\n`).join("");
}
