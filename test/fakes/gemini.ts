/**
 * Fake Gemini Developer API upstream used by the gateway's tests.
 *
 * Wire format follows /work/shared/reference/gemini.md:
 *  - POST /v1beta/models/{model}:generateContent (JSON), :streamGenerateContent?alt=sse (SSE,
 *    `data:` lines separated by \r\n\r\n, no event names, no [DONE]; without alt=sse a JSON
 *    array), :embedContent and :batchEmbedContents (fakes/gemini-embeddings.ts), GET /v1beta/models;
 *    everything else 404.
 *  - Auth: `x-goog-api-key` header or `?key=`; a missing key is 403, a wrong one (when the fake
 *    was given `validKey`) 400 API_KEY_INVALID, as Google does.
 *  - Errors: {error:{code, message, status, details?}}; 429 carries google.rpc.RetryInfo.
 *  - Validates like the real API where it matters: unknown fields are refused ("Unknown name"),
 *    contents roles user/model only and alternating, non-empty parts with one data field each,
 *    object args/response in function parts, function-call and function-response turn order,
 *    temperature 0..2.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { answerGeminiEmbeddings } from "./gemini-embeddings.js";

export interface GeminiFakeBehaviour {
  status?: number; // non-200: respond with a Google error body with this status
  errorBody?: unknown; // override the error JSON body
  retryAfter?: string; // Retry-After header on errors (Google usually sends RetryInfo instead)
  retryDelay?: string; // RetryInfo.retryDelay in a 429 body, e.g. "2s"
  firstByteDelayMs?: number;
  chunkDelayMs?: number;
  dropAfterChunks?: number; // streaming: destroy the socket after N content chunks
  dropConnection?: boolean;
  content?: string; // reply text; default `echo: <text of the last user turn>`
  functionCalls?: Array<{ name: string; args: Record<string, unknown>; id?: string }>;
  thoughtSignature?: string; // attached to the first functionCall part
  thought?: string; // a thought-summary part first (a client must not see it)
  finishReason?: string;
  blockReason?: string; // prompt blocked: no candidates, promptFeedback.blockReason
  usage?: { promptTokenCount?: number; candidatesTokenCount?: number; cachedContentTokenCount?: number; thoughtsTokenCount?: number };
  omitUsage?: boolean;
  omitCandidatesTokenCount?: boolean; // usageMetadata without candidatesTokenCount (proto3 JSON leaves a zero count out; here the answer still has text)
  streamError?: { code: number; status: string; message: string; afterChunks?: number }; // `{"error":...}` chunk, then end
  writeToMaxOutputTokens?: boolean; // write generationConfig.maxOutputTokens words (3000 when absent), one token each
}

export interface FakeGeminiOptions {
  /** When set, any other key is refused with 400 API_KEY_INVALID. */
  validKey?: string;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

export interface FakeGemini {
  url: string; // base URL including /v1beta
  port: number;
  requests: RecordedRequest[];
  set(behaviour: GeminiFakeBehaviour): void;
  enqueue(...behaviours: GeminiFakeBehaviour[]): void;
  reset(): void;
  activeStreams(): number;
  aborted(): number;
  close(): Promise<void>;
}

const FIELDS: Record<string, Set<string>> = {
  request: new Set(["contents", "systemInstruction", "generationConfig", "tools", "toolConfig", "safetySettings", "cachedContent"]),
  generationConfig: new Set([
    "temperature",
    "topP",
    "topK",
    "candidateCount",
    "maxOutputTokens",
    "stopSequences",
    "responseMimeType",
    "responseSchema",
    "responseJsonSchema",
    "seed",
    "presencePenalty",
    "frequencyPenalty",
    "responseLogprobs",
    "logprobs",
    "responseModalities",
    "thinkingConfig",
    "speechConfig",
    "imageConfig",
    "mediaResolution",
  ]),
  part: new Set(["text", "inlineData", "fileData", "functionCall", "functionResponse", "thought", "thoughtSignature", "executableCode", "codeExecutionResult"]),
  functionDeclaration: new Set(["name", "description", "parameters", "parametersJsonSchema", "response", "responseJsonSchema"]),
  thinkingConfig: new Set(["includeThoughts", "thinkingBudget", "thinkingLevel"]),
};
const DATA_FIELDS = ["text", "inlineData", "fileData", "functionCall", "functionResponse", "executableCode", "codeExecutionResult"];
const STATUS_NAMES: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  499: "CANCELLED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
  504: "DEADLINE_EXCEEDED",
};
const MODELS = [
  {
    name: "models/gemini-2.5-flash",
    displayName: "Gemini 2.5 Flash",
    inputTokenLimit: 1048576,
    outputTokenLimit: 65536,
    supportedGenerationMethods: ["generateContent"],
  },
  {
    name: "models/gemini-2.5-pro",
    displayName: "Gemini 2.5 Pro",
    inputTokenLimit: 1048576,
    outputTokenLimit: 65536,
    supportedGenerationMethods: ["generateContent"],
  },
];

class InvalidArgument extends Error {}

export function googleError(code: number, message?: string, details?: unknown[]): unknown {
  const status = STATUS_NAMES[code] ?? (code >= 500 ? "INTERNAL" : "FAILED_PRECONDITION");
  const text =
    message ?? (code === 429 ? "You exceeded your current quota, please check your plan and billing details." : `Request failed (fake upstream, ${status}).`);
  return { error: { code, message: text, status, ...(details ? { details } : {}) } };
}

function unknownFields(object: any, kind: string, path: string): void {
  if (!object || typeof object !== "object" || Array.isArray(object)) throw new InvalidArgument(`Invalid value at '${path}': expected an object`);
  for (const key of Object.keys(object)) {
    if (!FIELDS[kind]!.has(key)) throw new InvalidArgument(`Invalid JSON payload received. Unknown name "${key}" at '${path}': Cannot find field.`);
  }
}

function isObject(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function validate(body: any): void {
  unknownFields(body, "request", "request");
  if (!Array.isArray(body.contents) || body.contents.length === 0) throw new InvalidArgument("* GenerateContentRequest.contents: contents is not specified");
  if (body.generationConfig !== undefined) {
    unknownFields(body.generationConfig, "generationConfig", "generation_config");
    const temperature = body.generationConfig.temperature;
    if (temperature !== undefined && (typeof temperature !== "number" || temperature < 0 || temperature > 2)) {
      throw new InvalidArgument("* GenerateContentRequest.generation_config.temperature: temperature must be in the range [0.0, 2.0]");
    }
    const thinking = body.generationConfig.thinkingConfig;
    if (thinking !== undefined) {
      unknownFields(thinking, "thinkingConfig", "generation_config.thinking_config");
      if (thinking.thinkingBudget !== undefined && !Number.isInteger(thinking.thinkingBudget)) {
        throw new InvalidArgument("Invalid value at 'generation_config.thinking_config.thinking_budget' (TYPE_INT32)");
      }
      if (thinking.thinkingBudget !== undefined && thinking.thinkingLevel !== undefined) {
        throw new InvalidArgument("thinking_budget and thinking_level are not supported together.");
      }
    }
  }
  if (body.systemInstruction !== undefined) validateParts(body.systemInstruction.parts, "system_instruction");
  for (const [index, tool] of (body.tools ?? []).entries()) {
    for (const declaration of tool.functionDeclarations ?? []) unknownFields(declaration, "functionDeclaration", `tools[${index}].function_declarations`);
  }
  let previous: any;
  body.contents.forEach((content: any, index: number) => {
    const path = `contents[${index}]`;
    if (content.role !== "user" && content.role !== "model") throw new InvalidArgument("Please use a valid role: user, model.");
    if (previous && previous.role === content.role) throw new InvalidArgument("Please ensure that multiturn requests alternate between user and model.");
    validateParts(content.parts, path);
    const calls = content.parts.filter((part: any) => part.functionCall).length;
    const responses = content.parts.filter((part: any) => part.functionResponse).length;
    const previousCalls = previous ? previous.parts.filter((part: any) => part.functionCall).length : 0;
    if (calls > 0 && previous && !(previous.role === "user")) {
      throw new InvalidArgument("Please ensure that function call turn comes immediately after a user turn or after a function response turn.");
    }
    if (responses > 0 && previousCalls === 0)
      throw new InvalidArgument("Please ensure that function response turn comes immediately after a function call turn.");
    if (previousCalls > 0 && responses !== previousCalls) {
      throw new InvalidArgument(
        "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.",
      );
    }
    previous = content;
  });
}

function validateParts(parts: unknown, path: string): void {
  if (!Array.isArray(parts) || parts.length === 0) throw new InvalidArgument(`* GenerateContentRequest.${path}.parts: contents.parts must not be empty.`);
  parts.forEach((part: any, index: number) => {
    const partPath = `${path}.parts[${index}]`;
    unknownFields(part, "part", partPath);
    const data = DATA_FIELDS.filter((field) => part[field] !== undefined);
    if (data.length !== 1) throw new InvalidArgument(`* GenerateContentRequest.${partPath}.data: required oneof field 'data' must have one initialized field`);
    if (part.text !== undefined && typeof part.text !== "string") throw new InvalidArgument(`Invalid value at '${partPath}.text': expected a string`);
    if (part.inlineData && (typeof part.inlineData.mimeType !== "string" || typeof part.inlineData.data !== "string" || !part.inlineData.data)) {
      throw new InvalidArgument(`* GenerateContentRequest.${partPath}.inline_data: mime_type and data are required`);
    }
    if (part.fileData && typeof part.fileData.fileUri !== "string")
      throw new InvalidArgument(`* GenerateContentRequest.${partPath}.file_data.file_uri: required`);
    if (part.functionCall && (typeof part.functionCall.name !== "string" || (part.functionCall.args !== undefined && !isObject(part.functionCall.args)))) {
      throw new InvalidArgument(`Invalid value at '${partPath}.function_call.args' (type.googleapis.com/google.protobuf.Struct): expected an object`);
    }
    if (part.functionResponse && (typeof part.functionResponse.name !== "string" || !isObject(part.functionResponse.response))) {
      throw new InvalidArgument(`Invalid value at '${partPath}.function_response.response' (type.googleapis.com/google.protobuf.Struct): expected an object`);
    }
  });
}

function lastUserText(contents: any[]): string {
  const last = [...contents].reverse().find((content) => content.role === "user");
  return (last?.parts ?? [])
    .map((part: any) => (typeof part.text === "string" ? part.text : part.functionResponse ? JSON.stringify(part.functionResponse.response) : ""))
    .filter((text: string) => text.length > 0)
    .join(" ");
}

function words(text: string): number {
  return text.split(/\s+/).filter((word) => word.length > 0).length;
}

function pieces(text: string): string[] {
  return text.length === 0 ? [] : text.split(/(?<=\S)(?=\s)/);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted || ms <= 0) return resolve();
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function readBody(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    request.on("error", reject);
  });
}

interface Reply {
  candidates: any[] | undefined;
  usage: any;
  responseId: string;
  modelVersion: string;
  promptFeedback?: any;
}

/** The stream as partial responses: one per text piece, one per function call, finish + usage last. */
function streamChunks(b: GeminiFakeBehaviour, reply: Reply, text: string | null): Array<{ data: any; content: boolean }> {
  const base = { modelVersion: reply.modelVersion, responseId: reply.responseId };
  if (!reply.candidates) return [{ data: { promptFeedback: reply.promptFeedback, usageMetadata: reply.usage, ...base }, content: false }];
  const partChunks: any[][] = [];
  if (b.thought) partChunks.push([{ text: b.thought, thought: true }]);
  for (const piece of pieces(text ?? "")) partChunks.push([{ text: piece }]);
  (b.functionCalls ?? []).forEach((call, index) => {
    partChunks.push([functionCallPart(b, call, index)]);
  });
  const chunks = partChunks.map((parts) => ({ data: { candidates: [{ content: { role: "model", parts }, index: 0 }], ...base }, content: true }));
  const finalParts = b.thoughtSignature && !b.functionCalls?.length ? [{ text: "", thoughtSignature: b.thoughtSignature }] : [{ text: "" }];
  const last: any = { candidates: [{ content: { role: "model", parts: finalParts }, finishReason: reply.candidates[0].finishReason, index: 0 }], ...base };
  if (reply.usage) last.usageMetadata = reply.usage;
  chunks.push({ data: last, content: false });
  return chunks;
}

function functionCallPart(b: GeminiFakeBehaviour, call: NonNullable<GeminiFakeBehaviour["functionCalls"]>[number], index: number): any {
  const part: any = { functionCall: { name: call.name, args: call.args, ...(call.id ? { id: call.id } : {}) } };
  if (index === 0 && b.thoughtSignature) part.thoughtSignature = b.thoughtSignature;
  return part;
}

export function startFakeGemini(initial: GeminiFakeBehaviour = {}, options: FakeGeminiOptions = {}): Promise<FakeGemini> {
  const requests: RecordedRequest[] = [];
  const queue: GeminiFakeBehaviour[] = [];
  let persistent: GeminiFakeBehaviour = { ...initial };
  let active = 0;
  let abortedCount = 0;
  let counter = 0;
  let closing = false;

  const server = http.createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) sendJson(response, 500, googleError(500, `fake upstream crashed: ${String(error)}`));
      else response.destroy();
    });
  });

  function sendJson(response: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = typeof body === "string" ? body : JSON.stringify(body);
    response.writeHead(status, { "content-type": "application/json; charset=UTF-8", "content-length": String(Buffer.byteLength(text)), ...headers });
    response.end(text);
  }

  async function handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    counter += 1;
    let serverDropped = false;
    const closed = new AbortController();
    response.on("close", () => {
      closed.abort();
      if (!response.writableEnded && !serverDropped && !closing) abortedCount += 1;
    });
    const drop = () => {
      serverDropped = true;
      request.socket.destroy();
    };
    const raw = await readBody(request);
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    const method = request.method ?? "GET";
    let body: any;
    let parsed = true;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = raw;
      parsed = false;
    }
    requests.push({ method, path: url.pathname, query: Object.fromEntries(url.searchParams), headers: { ...request.headers }, body });
    if (closed.signal.aborted) return;

    const key = request.headers["x-goog-api-key"] ?? url.searchParams.get("key");
    if (!key) {
      return sendJson(
        response,
        403,
        googleError(
          403,
          "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
        ),
      );
    }
    if (options.validKey !== undefined && key !== options.validKey) {
      const details = [
        {
          "@type": "type.googleapis.com/google.rpc.ErrorInfo",
          reason: "API_KEY_INVALID",
          domain: "googleapis.com",
          metadata: { service: "generativelanguage.googleapis.com" },
        },
      ];
      return sendJson(response, 400, googleError(400, "API key not valid. Please pass a valid API key.", details));
    }
    if (method === "GET" && url.pathname === "/v1beta/models") return sendJson(response, 200, { models: MODELS });
    const match = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|embedContent|batchEmbedContents)$/.exec(url.pathname);
    if (method !== "POST" || !match) return sendJson(response, 404, googleError(404, `Not found: ${method} ${url.pathname}`));
    const model = decodeURIComponent(match[1]!);
    const streaming = match[2] === "streamGenerateContent";

    const b = queue.length > 0 ? queue.shift()! : persistent;
    if (b.firstByteDelayMs) {
      await sleep(b.firstByteDelayMs, closed.signal);
      if (closed.signal.aborted) return;
    }
    if (b.dropConnection) return drop();
    if (b.status !== undefined && b.status !== 200) {
      const details = b.status === 429 && b.retryDelay ? [{ "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: b.retryDelay }] : undefined;
      return sendJson(
        response,
        b.status,
        b.errorBody ?? googleError(b.status, undefined, details),
        b.retryAfter !== undefined ? { "retry-after": b.retryAfter } : {},
      );
    }
    if (match[2] === "embedContent" || match[2] === "batchEmbedContents") {
      if (!parsed) return sendJson(response, 400, googleError(400, "Invalid JSON payload received."));
      const answer = answerGeminiEmbeddings(model, match[2], body);
      return sendJson(response, answer.status, answer.status === 200 ? answer.body : googleError(answer.status, answer.message));
    }
    try {
      if (!parsed) throw new InvalidArgument("Invalid JSON payload received.");
      validate(body);
    } catch (error) {
      if (error instanceof InvalidArgument) return sendJson(response, 400, googleError(400, error.message));
      throw error;
    }

    const cap = body.generationConfig?.maxOutputTokens;
    const text = b.writeToMaxOutputTokens
      ? Array.from({ length: Number.isInteger(cap) && cap > 0 ? cap : 3000 }, () => "tok").join(" ")
      : b.content !== undefined
        ? b.content
        : b.functionCalls?.length
          ? null
          : `echo: ${lastUserText(body.contents)}`;
    const promptTokens = b.usage?.promptTokenCount ?? words(JSON.stringify(body.contents)) + words(JSON.stringify(body.systemInstruction ?? ""));
    const candidatesTokens = b.usage?.candidatesTokenCount ?? pieces(text ?? "").length + (b.functionCalls?.length ?? 0) * 5;
    const thoughts = b.usage?.thoughtsTokenCount;
    const usage = b.omitUsage
      ? undefined
      : {
          promptTokenCount: promptTokens,
          ...(b.omitCandidatesTokenCount ? {} : { candidatesTokenCount: candidatesTokens }),
          totalTokenCount: promptTokens + candidatesTokens + (thoughts ?? 0),
          promptTokensDetails: [{ modality: "TEXT", tokenCount: promptTokens }],
          ...(b.usage?.cachedContentTokenCount !== undefined ? { cachedContentTokenCount: b.usage.cachedContentTokenCount } : {}),
          ...(thoughts !== undefined ? { thoughtsTokenCount: thoughts } : {}),
        };
    const parts: any[] = [];
    if (b.thought) parts.push({ text: b.thought, thought: true });
    if (text) parts.push({ text });
    (b.functionCalls ?? []).forEach((call, index) => {
      parts.push(functionCallPart(b, call, index));
    });
    const count = body.generationConfig?.candidateCount ?? 1;
    const finishReason = b.finishReason ?? "STOP";
    const reply: Reply = {
      candidates: b.blockReason
        ? undefined
        : Array.from({ length: count }, (_, index) => ({ content: { role: "model", parts }, finishReason, index, safetyRatings: [] })),
      usage,
      responseId: `resp_fake_${counter}`,
      modelVersion: model,
      promptFeedback: b.blockReason ? { blockReason: b.blockReason } : undefined,
    };
    if (!streaming) {
      const json: any = {
        ...(reply.candidates ? { candidates: reply.candidates } : { promptFeedback: reply.promptFeedback }),
        modelVersion: reply.modelVersion,
        responseId: reply.responseId,
      };
      if (usage) json.usageMetadata = usage;
      return sendJson(response, 200, json);
    }
    const chunks = streamChunks(b, reply, text);
    if (url.searchParams.get("alt") !== "sse")
      return sendJson(
        response,
        200,
        chunks.map((chunk) => chunk.data),
      );

    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    response.flushHeaders();
    active += 1;
    let counted = true;
    const release = () => {
      if (counted) {
        counted = false;
        active -= 1;
      }
    };
    response.on("close", release);
    const write = (data: string): Promise<void> =>
      new Promise((resolve) => {
        if (response.destroyed || closed.signal.aborted) return resolve();
        response.write(data, () => resolve());
      });
    let written = 0;
    for (const [index, chunk] of chunks.entries()) {
      if (b.dropAfterChunks !== undefined && written >= b.dropAfterChunks) return drop();
      if (b.streamError && written >= (b.streamError.afterChunks ?? 0)) {
        const { code, status, message } = b.streamError;
        await write(`data: ${JSON.stringify({ error: { code, message, status } })}\r\n\r\n`);
        response.end();
        return release();
      }
      if (index > 0 && b.chunkDelayMs) await sleep(b.chunkDelayMs, closed.signal);
      if (closed.signal.aborted) return;
      await write(`data: ${JSON.stringify(chunk.data)}\r\n\r\n`);
      if (chunk.content) written += 1;
    }
    response.end();
    release();
  }

  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      const port = (server.address() as AddressInfo).port;
      resolve({
        url: `http://127.0.0.1:${port}/v1beta`,
        port,
        requests,
        set(behaviour) {
          persistent = { ...behaviour };
        },
        enqueue(...behaviours) {
          queue.push(...behaviours.map((behaviour) => ({ ...behaviour })));
        },
        reset() {
          requests.length = 0;
          queue.length = 0;
          persistent = {};
        },
        activeStreams: () => active,
        aborted: () => abortedCount,
        close() {
          closing = true;
          return new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          });
        },
      });
    });
  });
}
