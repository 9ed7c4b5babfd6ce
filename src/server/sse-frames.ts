// The two SSE dialects the gateway speaks: one frame per upstream batch, yielded as soon as the
// batch arrives, never held back waiting for the next one (sse-response.ts decides the writes).

import { GatewayError } from "../gateway/errors.js";
import type { NativeMessagesEvent } from "../providers/messages-types.js";

/** The frame generators whose stream broke after its first byte: it ended on an error frame or event. */
const brokenStreams = new WeakSet<object>();

/** Whether these frames ended on an error (traces mark the request failed; its status is long sent). */
export function streamBroke(frames: object): boolean {
  return brokenStreams.has(frames);
}

/**
 * OpenAI chat: `data: <json>` per chunk, each batch written the moment it arrives. The closing
 * `data: [DONE]` (or the error event) is the generator's return value, which the response
 * writes together with its end (one write).
 */
export function chatFrames(batches: AsyncGenerator<string[]>, log: (error: unknown) => void): AsyncGenerator<string, string> {
  const frames = chatFrameTexts(batches, log, () => brokenStreams.add(frames));
  return frames;
}

async function* chatFrameTexts(batches: AsyncGenerator<string[]>, log: (error: unknown) => void, broke: () => void): AsyncGenerator<string, string> {
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
    broke();
    return `data: ${JSON.stringify(body)}\n\n`;
  }
}

/**
 * Anthropic messages (and the Responses API's events): `event: <name>` and `data: <json>` per
 * event; no terminator. A stream that broke says so in an event (`error`, `response.failed`).
 */
export function messagesFrames(batches: AsyncGenerator<NativeMessagesEvent[]>): AsyncGenerator<string> {
  const frames = namedEventFrames(batches, () => brokenStreams.add(frames));
  return frames;
}

async function* namedEventFrames(batches: AsyncGenerator<NativeMessagesEvent[]>, broke: () => void): AsyncGenerator<string> {
  for await (const batch of batches) {
    let text = "";
    for (const event of batch) {
      if (event.event === "error" || event.event === "response.failed") broke();
      text += `event: ${event.event}\ndata: ${event.data}\n\n`;
    }
    yield text;
  }
}
