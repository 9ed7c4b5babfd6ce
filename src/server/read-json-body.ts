// Read a JSON request body with the checks every JSON endpoint needs: content type (415),
// size (413), empty or malformed body, a non-object body and nesting deeper than any real
// request needs (400).
import type { IncomingMessage } from "node:http";
import type { H3Event } from "h3";
import { InvalidJsonError, MalformedRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from "../gateway/errors.js";
import { MAX_JSON_DEPTH, nestingDepthExceeds } from "../json/json-nesting.js";
import { exactSize } from "../text/byte-sizes.js";
import { nodeRequestOf } from "./request-context.js";

/** Told the JSON object a request's route read, as read (traces: the model asked, the prompt when the operator opted in). */
export type JsonBodyWatch = (body: Record<string, unknown>) => void;

interface WatchedContext {
  jsonBodyWatch?: JsonBodyWatch;
}

/** Hear this request's JSON body once its route has read it. */
export function watchJsonBody(event: H3Event, watch: JsonBodyWatch): void {
  (event.context as WatchedContext).jsonBodyWatch = watch;
}

export async function readJsonObject(event: H3Event, maxBytes: number): Promise<Record<string, unknown>> {
  const value = await readJsonValue(event, maxBytes);
  if (!value || typeof value !== "object" || Array.isArray(value)) throw new InvalidJsonError("The request body must be a JSON object.");
  (event.context as WatchedContext).jsonBodyWatch?.(value as Record<string, unknown>);
  return value as Record<string, unknown>;
}

/** Any JSON value (MCP's JSON-RPC may be a batch array), with every check but the object one. */
export async function readJsonValue(event: H3Event, maxBytes: number): Promise<unknown> {
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
  // JSON.parse takes any depth, but JSON.stringify, zod and the converters recurse: a 20 KB body
  // nested 10,000 deep would be a RangeError (a 500) wherever it is read next.
  if (nestingDepthExceeds(value, MAX_JSON_DEPTH)) {
    throw new InvalidJsonError(`The request body is nested more than ${MAX_JSON_DEPTH} levels deep.`);
  }
  return value;
}

/** The body as UTF-8 text, 413 past `maxBytes` (the console reads its forms with it). */
export async function readLimitedText(event: H3Event, maxBytes: number): Promise<string> {
  // On Node, read the IncomingMessage directly with listeners: no web-stream wrapper and no
  // async iterator on the hot path.
  const nodeRequest = nodeRequestOf(event);
  if (nodeRequest) return readNodeBody(nodeRequest, maxBytes);
  const body = event.req.body;
  if (!body) return "";
  const chunks: Uint8Array[] = [];
  let received = 0;
  for await (const chunk of body) {
    received += chunk.byteLength;
    if (received > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function readNodeBody(request: IncomingMessage, maxBytes: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > maxBytes) {
        cleanup();
        // Read no further: the 413 closes the connection (connection-policy.ts).
        request.pause();
        reject(tooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8"));
    };
    // The connection went away mid-body (the client, or a 408 for a body too slow): nobody hears
    // this answer, but it is the request's fault, not a failure of the gateway to log.
    const onError = () => {
      cleanup();
      reject(new MalformedRequestError(400, "The request body ended before it was complete."));
    };
    const cleanup = () => {
      request.off("data", onData);
      request.off("end", onEnd);
      request.off("error", onError);
    };
    request.on("data", onData);
    request.on("end", onEnd);
    request.on("error", onError);
  });
}

function tooLarge(maxBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`The request body is larger than the ${exactSize(maxBytes)} limit.`);
}
