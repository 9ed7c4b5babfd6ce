/**
 * Fake OpenAI-compatible upstream used by the gateway's tests.
 *
 * Wire format follows /work/shared/reference/openai-chat.md:
 *  - POST /v1/chat/completions (JSON or SSE), POST /v1/embeddings (fakes/openai-embeddings.ts),
 *    POST /v1/responses (fakes/openai-responses.ts: JSON or SSE, reasoning items with
 *    encrypted_content), GET /v1/models, everything else 404. Behaviours apply to every POST.
 *  - Errors: {error:{message,type,param,code}}; `x-request-id` on every response.
 *  - Streaming: role chunk, one chunk per content piece, finish_reason chunk with an
 *    empty delta, usage chunk (`choices: []`) only with stream_options.include_usage,
 *    then `data: [DONE]`.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { answerEmbeddings } from "./openai-embeddings.js";
import { serveResponses } from "./openai-responses.js";
import { type AnswerMeter, type AnswerPacing, PAD_MARKER, sendPaced, writeEndlessEvents } from "./paced-answers.js";

export interface FakeBehaviour {
  status?: number; // non-200: respond with an OpenAI error body with this status
  errorBody?: unknown; // override the error JSON body
  retryAfter?: string; // value of Retry-After header on error responses
  firstByteDelayMs?: number; // wait before writing response headers
  chunkDelayMs?: number; // wait between SSE events when streaming
  dropAfterChunks?: number; // streaming: destroy the socket after N content events were written (no [DONE])
  dropConnection?: boolean; // destroy the socket immediately without any response
  holdAfterEvents?: number; // streaming: after N events were written, wait for releaseHeld() before the rest
  content?: string; // reply text; default: `echo: <text of the last user message>`
  omitUsage?: boolean; // never send usage (simulates a server that ignores include_usage / omits usage)
  omitRole?: boolean; // streaming: first delta without role
  toolCalls?: Array<{ id: string; name: string; arguments: string }>; // reply with tool calls (finish_reason "tool_calls")
  finishReason?: string; // override finish_reason
  usage?: { prompt_tokens: number; completion_tokens: number }; // override reported usage
  rawUsage?: unknown; // the usage object exactly as given (odd values: "ten", 1e308, -5), in the answer and the stream's usage chunk
  rawBody?: string; // non-streaming 200: this text as the body, verbatim (null, 123, [], an object without choices)
  rawEvents?: string[]; // streaming 200: these `data:` payloads, as given, in one write, then [DONE]
  pacing?: AnswerPacing; // non-streaming 200 (chat, embeddings) written paced (paced-answers.ts); chat pads where `content` holds PAD_MARKER, embeddings in the first vector
  endless?: { everyMs?: number; meter?: AnswerMeter }; // streaming: after the role chunk, chunks of 1 KB of text until the client goes away
  writeToCapIn?: "max_tokens" | "max_completion_tokens"; // a server that reads only this field as its output cap: it writes that many words (3000 when the field is absent) and reports them
  capReading?: CapReadingServer; // a server that reads its output cap by that server's own rule (outputCapReadBy), writes that many words and reports them
}

/**
 * OpenAI-compatible servers that read the output cap from more top-level fields than OpenAI's two:
 * - llama.cpp's server: `n_predict`, else `max_completion_tokens`, else `max_tokens`
 *   (tools/server/server-task.cpp, params_from_json_cmpl);
 * - text-generation-webui: `max_tokens`, but `auto_max_new_tokens: true` writes to the end of the
 *   context instead (extensions/openai: the request's GenerationOptions reach generate_reply);
 * - TabbyAPI: `max_tokens`, else its alias `max_length` (common/sampling.py, AliasChoices).
 */
export type CapReadingServer = "llama.cpp" | "text-generation-webui" | "tabbyAPI";

function outputCapReadBy(server: CapReadingServer, body: Record<string, unknown>): unknown {
  switch (server) {
    case "llama.cpp":
      return body.n_predict ?? body.max_completion_tokens ?? body.max_tokens;
    case "text-generation-webui":
      return body.auto_max_new_tokens === true ? undefined : body.max_tokens;
    case "tabbyAPI":
      return body.max_tokens ?? body.max_length;
  }
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

export interface FakeOpenAI {
  url: string; // base URL including /v1, e.g. http://127.0.0.1:PORT/v1
  port: number;
  requests: RecordedRequest[]; // every request received, in order (chat, responses, embeddings and models)
  set(behaviour: FakeBehaviour): void; // persistent default behaviour (merged over the defaults)
  enqueue(...behaviours: FakeBehaviour[]): void; // one-shot behaviours, consumed in order by the next chat requests
  reset(): void; // clears requests, queue and persistent behaviour
  activeStreams(): number; // streaming responses currently open
  aborted(): number; // responses whose client closed the connection before the response finished
  held(): number; // streams waiting (holdAfterEvents) for releaseHeld()
  releaseHeld(): void; // let held streams go on
  close(): Promise<void>;
}

const FAKE_MODELS = [
  { id: "gpt-4o-mini", object: "model", created: 1721172741, owned_by: "system", shutdown_date: null },
  { id: "gpt-4o", object: "model", created: 1715367049, owned_by: "system", shutdown_date: null },
  { id: "o4-mini", object: "model", created: 1744225351, owned_by: "system", shutdown_date: null },
];

const SYSTEM_FINGERPRINT = "fp_fake0001";

interface ErrorPayload {
  error: { message: string; type: string; param: string | null; code: string | null };
}

function errorPayload(message: string, type: string, code: string | null, param: string | null = null): ErrorPayload {
  return { error: { message, type, param, code } };
}

/** Error body chosen sensibly from an HTTP status. */
function errorForStatus(status: number, model: string | undefined): ErrorPayload {
  switch (status) {
    case 400:
      return errorPayload("Invalid value in request (fake upstream).", "invalid_request_error", "invalid_value");
    case 401:
      return errorPayload("Incorrect API key provided: sk-****fake.", "invalid_request_error", "invalid_api_key");
    case 403:
      return errorPayload("Country, region, or territory not supported", "invalid_request_error", "unsupported_country_region_territory");
    case 404:
      return errorPayload(`The model \`${model ?? "unknown"}\` does not exist or you do not have access to it.`, "invalid_request_error", "model_not_found");
    case 408:
      return errorPayload("Request timed out.", "invalid_request_error", "request_timeout");
    case 409:
      return errorPayload("Conflict (fake upstream).", "invalid_request_error", "conflict");
    case 422:
      return errorPayload("Unprocessable entity (fake upstream).", "invalid_request_error", "unprocessable_entity");
    case 429:
      return errorPayload(`Rate limit reached for ${model ?? "model"} (fake upstream). Please try again later.`, "requests", "rate_limit_exceeded");
    case 500:
      return errorPayload("The server had an error while processing your request. Sorry about that!", "server_error", "server_error");
    case 502:
      return errorPayload("Bad gateway.", "server_error", "bad_gateway");
    case 503:
      return errorPayload("The engine is currently overloaded, please try again later.", "server_error", "server_is_overloaded");
    case 504:
      return errorPayload("Gateway timeout.", "server_error", "gateway_timeout");
    default:
      if (status >= 500) return errorPayload(`Upstream error ${status} (fake upstream).`, "server_error", "server_error");
      return errorPayload(`Request failed with status ${status} (fake upstream).`, "invalid_request_error", null);
  }
}

/** Text of one message's content: a string, or the text parts of an array. */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    const texts: string[] = [];
    for (const part of content) {
      if (part && typeof part === "object" && typeof (part as { text?: unknown }).text === "string") {
        texts.push((part as { text: string }).text);
      }
    }
    return texts.join(" ");
  }
  return "";
}

/** As many words as the output cap a server read (3000, a server's own default, when it read none): one token each. */
function wordsUpTo(cap: unknown): string {
  const count = typeof cap === "number" && Number.isInteger(cap) && cap > 0 ? cap : 3000;
  return Array.from({ length: count }, () => "tok").join(" ");
}

function countWords(text: string): number {
  return text.split(/\s+/).filter((w) => w.length > 0).length;
}

function promptTokens(messages: unknown[]): number {
  let total = 0;
  for (const m of messages) {
    const content = m && typeof m === "object" ? (m as { content?: unknown }).content : undefined;
    total += countWords(contentText(content)) + 3;
  }
  return total;
}

function lastUserText(messages: unknown[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as { role?: unknown; content?: unknown } | undefined;
    if (m && typeof m === "object" && m.role === "user") return contentText(m.content);
  }
  return "";
}

/**
 * Split into word-ish pieces, each starting with its leading whitespace
 * ("echo: hi there" -> ["echo:", " hi", " there"]). Concatenation gives back the text exactly.
 */
function splitPieces(text: string): string[] {
  if (text.length === 0) return [];
  return text.split(/(?<=\S)(?=\s)/).filter((p) => p.length > 0);
}

/** Argument strings are streamed in fixed-size fragments, like real tool-call streams. */
function splitArguments(args: string, size = 8): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i += size) out.push(args.slice(i, i + size));
  return out;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted || ms <= 0) return resolve();
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

interface StreamEvent {
  data: unknown;
  /** counts towards dropAfterChunks */
  content: boolean;
}

export function startFakeOpenAI(initial?: FakeBehaviour): Promise<FakeOpenAI> {
  const requests: RecordedRequest[] = [];
  const queue: FakeBehaviour[] = [];
  let persistent: FakeBehaviour = { ...(initial ?? {}) };
  let active = 0;
  let abortedCount = 0;
  const heldStreams: Array<() => void> = [];
  const holdUntilReleased = (signal: AbortSignal): Promise<void> =>
    new Promise((resolve) => {
      if (signal.aborted) return resolve();
      heldStreams.push(resolve);
      signal.addEventListener("abort", () => resolve(), { once: true });
    });
  let completionCounter = 0;
  let requestCounter = 0;
  let closing = false;

  const server = http.createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent && !res.destroyed) {
        sendJson(res, 500, errorPayload(`fake upstream crashed: ${String(err)}`, "server_error", "server_error"));
      } else {
        res.destroy();
      }
    });
  });

  function sendJson(res: http.ServerResponse, status: number, body: unknown, extraHeaders: Record<string, string> = {}): void {
    const text = typeof body === "string" ? body : JSON.stringify(body);
    res.writeHead(status, {
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(text)),
      ...extraHeaders,
    });
    res.end(text);
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    requestCounter += 1;
    res.setHeader("x-request-id", `req_fake_${requestCounter}`);

    // Connection bookkeeping: `serverDropped` marks destroys we did on purpose, so they do not
    // count as the client aborting.
    let serverDropped = false;
    const closed = new AbortController();
    res.on("close", () => {
      closed.abort();
      if (!res.writableEnded && !serverDropped && !closing) abortedCount += 1;
    });
    const drop = () => {
      serverDropped = true;
      req.socket.destroy();
    };

    const rawBody = await readBody(req);
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const method = req.method ?? "GET";
    let body: any;
    let jsonOk = true;
    if (rawBody.length > 0) {
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = rawBody;
        jsonOk = false;
      }
    }
    requests.push({ method, path: url.pathname, headers: { ...req.headers }, body });
    if (closed.signal.aborted) return;

    const path = url.pathname.replace(/\/+$/, "");

    if (method === "GET" && path === "/v1/models") {
      sendJson(res, 200, { object: "list", data: FAKE_MODELS });
      return;
    }
    if (method !== "POST" || (path !== "/v1/chat/completions" && path !== "/v1/embeddings" && path !== "/v1/responses")) {
      sendJson(res, 404, errorPayload(`Invalid URL (${method} ${url.pathname})`, "invalid_request_error", null));
      return;
    }

    // Chat completion: pick the behaviour (one-shot first, else persistent).
    const b: FakeBehaviour = queue.length > 0 ? (queue.shift() as FakeBehaviour) : persistent;
    const model: string | undefined = jsonOk && body && typeof body.model === "string" ? body.model : undefined;

    if (b.firstByteDelayMs && b.firstByteDelayMs > 0) {
      await sleep(b.firstByteDelayMs, closed.signal);
      if (closed.signal.aborted) return;
    }
    if (b.dropConnection) {
      drop();
      return;
    }

    const errorHeaders: Record<string, string> = {};
    if (b.retryAfter !== undefined) errorHeaders["retry-after"] = b.retryAfter;

    if (b.status !== undefined && b.status !== 200) {
      sendJson(res, b.status, b.errorBody !== undefined ? b.errorBody : errorForStatus(b.status, model), errorHeaders);
      return;
    }

    // Light validation, like the real API.
    if (!jsonOk || body === undefined || body === null || typeof body !== "object" || Array.isArray(body)) {
      sendJson(
        res,
        400,
        errorPayload(
          "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
          "invalid_request_error",
          null,
        ),
        errorHeaders,
      );
      return;
    }
    if (typeof body.model !== "string" || body.model.length === 0) {
      sendJson(res, 400, errorPayload("you must provide a model parameter", "invalid_request_error", null), errorHeaders);
      return;
    }
    if (path === "/v1/responses") {
      await serveResponses(body, b, { res, closed: closed.signal, drop, sendJson: (status, answer) => sendJson(res, status, answer) });
      return;
    }
    if (path === "/v1/embeddings") {
      const answer = answerEmbeddings(body, b);
      if (answer.status === 200 && b.pacing) {
        const list = answer.body as { data: Array<{ embedding: unknown }> };
        if (b.pacing.padTo !== undefined) list.data[0]!.embedding = PAD_MARKER;
        await sendPaced(res, "application/json", JSON.stringify(list), b.pacing, "A");
        return;
      }
      sendJson(res, answer.status, answer.body);
      return;
    }
    if (body.messages === undefined) {
      sendJson(
        res,
        400,
        errorPayload("Missing required parameter: 'messages'.", "invalid_request_error", "missing_required_parameter", "messages"),
        errorHeaders,
      );
      return;
    }
    if (!Array.isArray(body.messages)) {
      sendJson(
        res,
        400,
        errorPayload(
          `Invalid type for 'messages': expected an array, but got ${typeof body.messages} instead.`,
          "invalid_request_error",
          "invalid_type",
          "messages",
        ),
        errorHeaders,
      );
      return;
    }
    if (body.messages.length === 0) {
      sendJson(
        res,
        400,
        errorPayload(
          "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
          "invalid_request_error",
          "empty_array",
          "messages",
        ),
        errorHeaders,
      );
      return;
    }

    const messages: unknown[] = body.messages;
    const requestModel: string = body.model;
    const toolCalls = b.toolCalls && b.toolCalls.length > 0 ? b.toolCalls : undefined;
    const content: string | null =
      b.writeToCapIn !== undefined
        ? wordsUpTo(body[b.writeToCapIn])
        : b.capReading !== undefined
          ? wordsUpTo(outputCapReadBy(b.capReading, body))
          : b.content !== undefined
            ? b.content
            : toolCalls
              ? null
              : `echo: ${lastUserText(messages)}`;
    const pieces = content === null ? [] : splitPieces(content);
    const argPieces = (toolCalls ?? []).map((tc) => splitArguments(tc.arguments));
    const computedCompletion = pieces.length + argPieces.reduce((n, p) => n + 1 + p.length, 0);
    const promptT = b.usage ? b.usage.prompt_tokens : promptTokens(messages);
    const completionT = b.usage ? b.usage.completion_tokens : computedCompletion;
    const usage =
      b.rawUsage !== undefined
        ? b.rawUsage
        : {
            prompt_tokens: promptT,
            completion_tokens: completionT,
            total_tokens: promptT + completionT,
            prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
            completion_tokens_details: {
              reasoning_tokens: 0,
              audio_tokens: 0,
              accepted_prediction_tokens: 0,
              rejected_prediction_tokens: 0,
            },
          };
    const finishReason = b.finishReason ?? (toolCalls ? "tool_calls" : "stop");
    completionCounter += 1;
    const id = `chatcmpl-${completionCounter}`;
    const created = Math.floor(Date.now() / 1000);

    if (body.stream !== true && b.rawBody !== undefined) {
      sendJson(res, 200, b.rawBody);
      return;
    }
    if (body.stream === true && b.rawEvents !== undefined) {
      res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
      res.end(`${b.rawEvents.map((data) => `data: ${data}\n\n`).join("")}data: [DONE]\n\n`);
      return;
    }

    if (body.stream !== true) {
      const message: Record<string, unknown> = { role: "assistant", content, refusal: null, annotations: [] };
      if (toolCalls) {
        message.tool_calls = toolCalls.map((tc) => ({
          id: tc.id,
          type: "function",
          function: { name: tc.name, arguments: tc.arguments },
        }));
      }
      const completion: Record<string, unknown> = {
        id,
        object: "chat.completion",
        created,
        model: requestModel,
        choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
      };
      if (!b.omitUsage) completion.usage = usage;
      completion.service_tier = "default";
      completion.system_fingerprint = SYSTEM_FINGERPRINT;
      if (b.pacing) return sendPaced(res, "application/json", JSON.stringify(completion), b.pacing);
      sendJson(res, 200, completion);
      return;
    }

    // ---- Streaming ----
    const includeUsage = !b.omitUsage && body.stream_options !== null && typeof body.stream_options === "object" && body.stream_options.include_usage === true;

    const chunk = (delta: Record<string, unknown>, finish: string | null): Record<string, unknown> => {
      const c: Record<string, unknown> = {
        id,
        object: "chat.completion.chunk",
        created,
        model: requestModel,
        service_tier: "default",
        system_fingerprint: SYSTEM_FINGERPRINT,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      };
      if (includeUsage) c.usage = null;
      return c;
    };

    const events: StreamEvent[] = [];
    const withRole = (delta: Record<string, unknown>): Record<string, unknown> => (b.omitRole ? delta : { role: "assistant", ...delta });
    const toolHeader = (i: number) => {
      const tc = (toolCalls ?? [])[i]!;
      return { index: i, id: tc.id, type: "function", function: { name: tc.name, arguments: "" } };
    };

    let roleSent = false;
    if (content !== null || !toolCalls) {
      // Text reply: role chunk with empty content, then one chunk per piece.
      events.push({ data: chunk(withRole({ content: "" }), null), content: false });
      roleSent = true;
      for (const p of pieces) events.push({ data: chunk({ content: p }, null), content: true });
    }
    (toolCalls ?? []).forEach((_tc, i) => {
      if (!roleSent) {
        // Tool-only reply: role arrives together with the first tool call's id/name.
        events.push({ data: chunk(withRole({ content: null, tool_calls: [toolHeader(i)] }), null), content: true });
        roleSent = true;
      } else {
        events.push({ data: chunk({ tool_calls: [toolHeader(i)] }, null), content: true });
      }
      for (const a of argPieces[i] ?? []) {
        events.push({ data: chunk({ tool_calls: [{ index: i, function: { arguments: a } }] }, null), content: true });
      }
    });
    const finishIndex = events.length;
    events.push({ data: chunk({}, finishReason), content: false });
    if (includeUsage) {
      const u: Record<string, unknown> = {
        id,
        object: "chat.completion.chunk",
        created,
        model: requestModel,
        service_tier: "default",
        system_fingerprint: SYSTEM_FINGERPRINT,
        choices: [],
        usage,
      };
      events.push({ data: u, content: false });
    }

    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    res.flushHeaders();
    active += 1;
    let counted = true;
    const release = () => {
      if (counted) {
        counted = false;
        active -= 1;
      }
    };
    res.on("finish", release);
    res.on("close", release);

    const write = (text: string): Promise<void> =>
      new Promise((resolve) => {
        if (res.destroyed || closed.signal.aborted) return resolve();
        // resolve on flush, or when the connection goes away mid-write
        const done = () => {
          closed.signal.removeEventListener("abort", done);
          resolve();
        };
        closed.signal.addEventListener("abort", done, { once: true });
        res.write(text, done);
      });
    if (b.endless) {
      const text = "x".repeat(1024);
      await write(`data: ${JSON.stringify(events[0]!.data)}\n\n`);
      await writeEndlessEvents(res, () => `data: ${JSON.stringify(chunk({ content: text }, null))}\n\n`, b.endless);
      return;
    }

    // With dropAfterChunks the finish_reason chunk, usage chunk and [DONE] are never written:
    // the socket is destroyed before the (N+1)th content event, or after the last one.
    const dropAfter = b.dropAfterChunks;
    const limit = dropAfter !== undefined ? finishIndex : events.length;
    let contentWritten = 0;
    for (let i = 0; i < limit; i++) {
      const ev = events[i]!;
      if (dropAfter !== undefined && ev.content && contentWritten >= dropAfter) break;
      if (i > 0 && b.chunkDelayMs && b.chunkDelayMs > 0) await sleep(b.chunkDelayMs, closed.signal);
      if (i > 0 && i === b.holdAfterEvents) await holdUntilReleased(closed.signal);
      if (closed.signal.aborted) return;
      await write(`data: ${JSON.stringify(ev.data)}\n\n`);
      if (closed.signal.aborted) return;
      if (ev.content) contentWritten += 1;
    }
    if (dropAfter !== undefined) {
      drop();
      return;
    }
    if (b.chunkDelayMs && b.chunkDelayMs > 0) {
      await sleep(b.chunkDelayMs, closed.signal);
      if (closed.signal.aborted) return;
    }
    res.end("data: [DONE]\n\n");
  }

  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      const port = (server.address() as AddressInfo).port;
      const fake: FakeOpenAI = {
        url: `http://127.0.0.1:${port}/v1`,
        port,
        requests,
        set(behaviour: FakeBehaviour) {
          persistent = { ...behaviour };
        },
        enqueue(...behaviours: FakeBehaviour[]) {
          queue.push(...behaviours.map((x) => ({ ...x })));
        },
        reset() {
          requests.length = 0;
          queue.length = 0;
          persistent = {};
        },
        activeStreams: () => active,
        aborted: () => abortedCount,
        held: () => heldStreams.length,
        releaseHeld() {
          for (const go of heldStreams.splice(0)) go();
        },
        close() {
          closing = true;
          return new Promise<void>((res) => {
            server.close(() => res());
            server.closeAllConnections();
          });
        },
      };
      resolve(fake);
    });
  });
}
