// Read a JSON request body with the checks every JSON endpoint needs: content type (415),
// size (413), empty or malformed body and a non-object body (400).
import type { H3Event } from "h3";
import { InvalidJsonError, PayloadTooLargeError, UnsupportedMediaTypeError } from "../gateway/errors.js";

export async function readJsonObject(event: H3Event, maxBytes: number): Promise<Record<string, unknown>> {
  const contentType = event.req.headers.get("content-type") ?? "";
  if (!/^application\/(?:[\w.+-]+\+)?json\b/i.test(contentType)) {
    throw new UnsupportedMediaTypeError("Content-Type must be application/json.");
  }
  const declared = Number(event.req.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  const text = await readLimitedText(event, maxBytes);
  if (!text.trim()) throw new InvalidJsonError("The request body is empty; send a JSON object.");
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidJsonError(`The request body is not valid JSON: ${(error as Error).message}`);
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) throw new InvalidJsonError("The request body must be a JSON object.");
  return value as Record<string, unknown>;
}

async function readLimitedText(event: H3Event, maxBytes: number): Promise<string> {
  const body = event.req.body;
  if (!body) return "";
  const decoder = new TextDecoder();
  let received = 0;
  let text = "";
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.byteLength;
    if (received > maxBytes) {
      await reader.cancel();
      throw tooLarge(maxBytes);
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}

function tooLarge(maxBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`The request body is larger than the ${Math.round(maxBytes / 1024 / 1024)} MB limit.`);
}
