// The CLI's JSON GETs to a gateway on plain http (TransportOptions.plainGets; gatewayClient and
// remoteAdmin ask for it, a program using GwClient stays on fetch), sent with node:http rather
// than fetch. Node's fetch is undici inside Node: its first request loads ~40 ms of modules and
// compiles undici's HTTP parser (WebAssembly), whose optimising compile Node then waits for at
// exit, ~150 ms more on Node 20 and 22 (docs/benchmarks.md, "CLI start-up"); node:http parses in
// C++ and costs neither. The request carries the headers fetch would send (it asks for no
// compression), and any answer or failure this path does not read as fetch would (a redirect, a
// compressed body, an error or timeout, an abort) gives undefined: the caller asks again through
// fetch, as a GET allows, and that answer or error is the one reported.
import type { IncomingMessage } from "node:http";

// Not `import ... from "node:http"`: on Node 22 the ESM face of node:http reads every export,
// its lazy WebSocket among them, which loads undici (~25 ms) and undoes the point of this module.
const { request } = process.getBuiltinModule("node:http");

export interface AnswerHeaders {
  get(name: string): string | null;
  has(name: string): boolean;
}

/** What the transport reads of an answer: a fetch Response has it, and so has PlainAnswer. */
export interface Answer {
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  readonly headers: AnswerHeaders;
  text(): Promise<string>;
}

/** The request headers Node's fetch adds to a GET, but compression, which it would decode. */
const FETCH_HEADERS: Readonly<Record<string, string>> = { "accept-language": "*", "sec-fetch-mode": "cors", "user-agent": "node" };

/** undici's own headers and body timeouts, after which fetch fails too. */
const FETCH_TIMEOUT_MS = 300_000;

/** The answer to GET `url`, or undefined when it must be asked through fetch instead (see above). */
export function plainGet(url: URL, headers: Readonly<Record<string, string>>, signal?: AbortSignal): Promise<Answer | undefined> {
  return new Promise((resolve) => {
    if (url.protocol !== "http:" || signal?.aborted) return resolve(undefined);
    const sent = request(url, { method: "GET", headers: { ...FETCH_HEADERS, ...headers }, signal, timeout: FETCH_TIMEOUT_MS }, (answer) => {
      const status = answer.statusCode ?? 0;
      const encoding = answer.headers["content-encoding"];
      if (status < 200 || (status >= 300 && status < 400) || (encoding !== undefined && encoding !== "identity")) {
        answer.destroy();
        return resolve(undefined);
      }
      const chunks: Buffer[] = [];
      answer.on("data", (chunk: Buffer) => chunks.push(chunk));
      answer.on("error", () => resolve(undefined));
      answer.on("end", () => resolve(new PlainAnswer(answer, Buffer.concat(chunks))));
    });
    sent.on("timeout", () => sent.destroy());
    sent.on("error", () => resolve(undefined));
    sent.end();
  });
}

class PlainAnswer implements Answer {
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  readonly headers: AnswerHeaders;

  constructor(
    answer: IncomingMessage,
    private readonly body: Buffer,
  ) {
    this.status = answer.statusCode ?? 0;
    this.ok = this.status >= 200 && this.status < 300;
    this.statusText = answer.statusMessage ?? "";
    const received = answer.headers;
    this.headers = {
      get: (name) => {
        const value = received[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
      },
      has: (name) => received[name.toLowerCase()] !== undefined,
    };
  }

  /** As fetch's text(): UTF-8, a byte-order mark dropped. */
  async text(): Promise<string> {
    return new TextDecoder().decode(this.body);
  }
}
