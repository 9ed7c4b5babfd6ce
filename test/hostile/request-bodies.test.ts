// Hostile request bodies: a chunked body that never ends, sent on a raw socket to routes that
// refuse it at once (401 without a key, 404 on an unknown path, 405, a GET) and to routes that read
// it (chat's JSON, a storage upload, a transcription form, garbage or one endless file part), each
// capped well below what the client offers.
// The answer must arrive, carry `Connection: close`, and the server must close the connection
// instead of reading (and dropping) the rest: the client counts the bytes it got to write before
// the socket closed, and stops at WRITE_CAP, far above any limit, if the server keeps reading.
// A body that stops arriving is cut off with 408 after `server.bodyTimeoutMs`, in the endpoint's
// error dialect, while an answer that is merely slow (body complete) is not.
import { once } from "node:events";
import net from "node:net";
import test from "ava";
import OpenAI, { APIError } from "openai";
import { eventually, storedPaths } from "../_storage.js";
import { type FakeOpenAI, startFakeOpenAI } from "../fakes/openai.js";
import { accessOf, addKey, makeHome, quietLogger, spawnServe, startTestGateway, type TestGateway } from "../helpers/gateway-harness.js";

const MB = 1024 * 1024;
/** The configured caps (JSON body, stored file, audio upload), small so that the test is quick. */
const CAP_BYTES = 1 * MB;
/** What the client gives up at: the server read on and on. */
const WRITE_CAP = 512 * MB;
/**
 * What a closed connection may have taken from the client: the caps (a transcription form may hold
 * a file plus its fields, about 3.5 MB here) plus the socket buffers of both ends on loopback
 * (a few MB each).
 */
const MOST_ACCEPTED = 32 * MB;
/** Short, yet far above what a loaded machine takes to parse a request's headers. */
const BODY_TIMEOUT_MS = 2000;

let fake: FakeOpenAI;
/** The body limits small, the body timeout at its default (a loaded machine may take seconds to send the capped bytes). */
let gateway: TestGateway;
/** The same, with a body timeout of BODY_TIMEOUT_MS. */
let impatient: TestGateway;
let key: string;
let gatewayHome: string;
let impatientKey: string;
let impatientHome: string;

test.before(async () => {
  fake = await startFakeOpenAI();
  const home = await makeHome((config) => {
    config.server.maxJsonBodyBytes = CAP_BYTES;
    config.storage = { driver: "fs", maxFileBytes: CAP_BYTES };
    config.providers = { fake: { type: "openai", baseUrl: fake.url, apiKey: "sk-fake" } };
    config.routes = [{ prefix: "fake/", provider: "fake" }];
  });
  key = await addKey(home, "hostile-bodies", "pro");
  gatewayHome = home;
  gateway = await startTestGateway(home);
  impatientHome = await makeHome((config) => {
    config.server.bodyTimeoutMs = BODY_TIMEOUT_MS;
    config.providers = { fake: { type: "openai", baseUrl: fake.url, apiKey: "sk-fake" } };
    config.routes = [{ prefix: "fake/", provider: "fake" }];
  });
  impatient = await startTestGateway(impatientHome);
  impatientKey = await addKey(impatientHome, "hostile-bodies", "pro");
});

test.after.always(async () => {
  await gateway?.shutdown();
  await impatient?.shutdown();
  await fake?.close();
});

test.after("no hostile body made the gateway log a failure of its own", (t) => {
  t.deepEqual(
    quietLogger.lines.filter((line) => line.startsWith("error")),
    [],
  );
});

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Bytes of body the client handed to its socket before the server closed it (or WRITE_CAP). */
  written: number;
  /** The server stopped taking bytes or closed the connection (rather than the client giving up at WRITE_CAP). */
  closedByServer: boolean;
}

/**
 * A raw connection to the gateway. A server that closes while the client still sends makes the
 * client's next write fail (EPIPE, ECONNRESET), and Node would then destroy the socket before the
 * answer already received is read; like gw's own upload client (src/client/upload-connections.ts)
 * this one drops writes the peer no longer takes and reads on (the kernel keeps what arrived).
 */
interface RawConnection {
  socket: net.Socket;
  /** Everything received so far. */
  received(): Buffer;
  /** The server stopped taking bytes (a write failed) or the connection closed. */
  stopped(): boolean;
  closed: Promise<void>;
}

async function connect(server: TestGateway = gateway): Promise<RawConnection> {
  const { hostname, port } = new URL(server.url);
  const socket = net.connect(Number(port), hostname);
  let peerStopped = false;
  let isClosed = false;
  const write = socket._write.bind(socket);
  socket._write = (chunk, encoding, callback) =>
    peerStopped
      ? callback()
      : write(chunk, encoding, (error) => {
          if (error) peerStopped = true;
          callback();
        });
  socket.on("error", () => undefined);
  const chunks: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => chunks.push(chunk));
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  void closed.then(() => (isClosed = true));
  await once(socket, "connect");
  return { socket, received: () => Buffer.concat(chunks), stopped: () => peerStopped || isClosed, closed };
}

function requestHead(method: string, path: string, headers: Record<string, string>): string {
  return [`${method} ${path} HTTP/1.1`, "Host: gw.test", ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`), "", ""].join("\r\n");
}

/** The first answer in `bytes`: status, headers (lower-case names), body (by Content-Length, else the rest). */
function parseAnswer(bytes: Buffer): Pick<RawAnswer, "status" | "headers" | "body"> & { length: number } {
  const text = bytes.toString("latin1");
  const end = text.indexOf("\r\n\r\n");
  if (end < 0) throw new Error(`no complete answer: ${JSON.stringify(text.slice(0, 200))}`);
  const [statusLine, ...lines] = text.slice(0, end).split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const bodyLength = headers["content-length"] === undefined ? text.length - end - 4 : Number(headers["content-length"]);
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? "")?.[1]),
    headers,
    body: text.slice(end + 4, end + 4 + bodyLength),
    length: end + 4 + bodyLength,
  };
}

/** Resolves when the socket can take more, or is gone (`once` would reject on an error). */
function drainedOrClosed(connection: RawConnection): Promise<void> {
  const { socket } = connection;
  return new Promise((resolve) => {
    const done = () => {
      socket.off("drain", done);
      socket.off("close", done);
      resolve();
    };
    socket.on("drain", done);
    socket.on("close", done);
  });
}

/** Send `frame` until the server stops taking bytes or closes, or WRITE_CAP; the bytes handed to the socket. */
async function writeUntilStopped(connection: RawConnection, frame: Buffer, payloadBytes: number): Promise<number> {
  let written = 0;
  while (!connection.stopped() && written < WRITE_CAP) {
    const flowing = connection.socket.write(frame);
    written += payloadBytes;
    if (!flowing) await drainedOrClosed(connection);
  }
  return written;
}

/** `method` `path` with a chunked body that never ends, until the server stops taking it; then the answer once the connection closed. */
async function sendEndlessBody(path: string, headers: Record<string, string>, method = "POST", start = ""): Promise<RawAnswer> {
  const connection = await connect();
  connection.socket.write(requestHead(method, path, { "transfer-encoding": "chunked", ...headers }));
  if (start) connection.socket.write(`${Buffer.byteLength(start).toString(16)}\r\n${start}\r\n`);
  const chunk = Buffer.alloc(64 * 1024, "x");
  const frame = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n")]);
  const written = await writeUntilStopped(connection, frame, chunk.length);
  const closedByServer = connection.stopped();
  if (!closedByServer) connection.socket.destroy();
  await connection.closed;
  return { ...parseAnswer(connection.received()), written, closedByServer };
}

const MULTIPART = "multipart/form-data; boundary=gw-hostile-boundary";

/** The head of a form's file part, whose content is then the endless body. */
const FILE_PART_START = '--gw-hostile-boundary\r\nContent-Disposition: form-data; name="file"; filename="endless.wav"\r\nContent-Type: audio/wav\r\n\r\n';

const endlessCases: Array<{ name: string; path: string; headers: () => Record<string, string>; status: number; body: RegExp; start?: string }> = [
  { name: "chat without a key", path: "/v1/chat/completions", headers: () => ({ "content-type": "application/json" }), status: 401, body: /invalid_api_key/ },
  {
    name: "chat with a key, past the JSON limit",
    path: "/v1/chat/completions",
    headers: () => ({ "content-type": "application/json", authorization: `Bearer ${key}` }),
    status: 413,
    body: /payload_too_large/,
  },
  {
    name: "storage upload, past the file limit",
    path: "/v1/storage/upload",
    headers: () => ({ "content-type": MULTIPART, authorization: `Bearer ${key}` }),
    status: 413,
    body: /"message":".*larger than/,
  },
  {
    name: "transcription form, past the form's limit",
    path: "/v1/audio/transcriptions",
    headers: () => ({ "content-type": MULTIPART, authorization: `Bearer ${key}` }),
    status: 413,
    body: /payload_too_large/,
  },
  {
    name: "storage upload, a file part past the file limit",
    path: "/v1/storage/upload",
    headers: () => ({ "content-type": MULTIPART, authorization: `Bearer ${key}` }),
    status: 413,
    body: /"message":".*larger than/,
    start: FILE_PART_START,
  },
  {
    name: "transcription form, a file part past the file limit",
    path: "/v1/audio/transcriptions",
    headers: () => ({ "content-type": MULTIPART, authorization: `Bearer ${key}` }),
    status: 413,
    body: /payload_too_large/,
    start: FILE_PART_START,
  },
  { name: "an unknown path", path: "/v1/no-such-endpoint", headers: () => ({ "content-type": "application/json" }), status: 404, body: /not_found/ },
  { name: "POST to a GET-only endpoint (/health)", path: "/health", headers: () => ({}), status: 405, body: /method_not_allowed/ },
];

for (const endless of endlessCases) {
  test(`an endless chunked body: ${endless.name} is answered ${endless.status}, then the connection is closed without reading on`, async (t) => {
    const answer = await sendEndlessBody(endless.path, endless.headers(), "POST", endless.start);
    t.is(answer.status, endless.status, answer.body);
    t.regex(answer.body, endless.body);
    t.is(answer.headers.connection, "close");
    t.truthy(answer.headers["x-request-id"]);
    t.true(answer.closedByServer, `the server read ${WRITE_CAP} bytes and did not close the connection`);
    t.true(answer.written < MOST_ACCEPTED, `the client got to write ${answer.written} bytes`);
    t.log(`${answer.written} bytes written before the server stopped taking them`);
    // The server's own record of the request: answered (not 499, a client gone first).
    t.is((await accessOf(answer.headers["x-request-id"]!)).status, endless.status);
  });
}

test("a client still sending its body gets the refusal, not a connection reset: the official OpenAI SDK posting 30 MB is told 413", async (t) => {
  // The close lingers (connection-policy.ts): closing at once, with the client's bytes still
  // arriving, made the kernel reset the connection before the SDK read the 413 it had been sent
  // (half the attempts or more). A `gw serve` process, as users run it: in one process with the
  // client, the event loop's order hides the race.
  const serve = await spawnServe(gatewayHome);
  try {
    const client = new OpenAI({ apiKey: key, baseURL: `${serve.url}/v1`, maxRetries: 0 });
    const content = "a".repeat(30 * MB);
    for (let attempt = 1; attempt <= 10; attempt += 1) {
      const error = await t.throwsAsync(() => client.chat.completions.create({ model: "fake/gpt-4o-mini", messages: [{ role: "user", content }] }));
      t.true(error instanceof APIError && error.status === 413, `attempt ${attempt}: ${String(error)}`);
    }
  } finally {
    serve.child.kill("SIGTERM");
    await serve.exited;
  }
});

test("a GET that sends an endless body to a route that takes none is answered 200 and the connection closed", async (t) => {
  const answer = await sendEndlessBody("/health", {}, "GET");
  t.is(answer.status, 200);
  t.is(answer.headers.connection, "close");
  t.true(answer.closedByServer, `the server read ${WRITE_CAP} bytes and did not close the connection`);
  t.true(answer.written < MOST_ACCEPTED, `the client got to write ${answer.written} bytes`);
});

test("answers to a request without a body, and to one whose body was read whole, keep the connection open", async (t) => {
  const connection = await connect();
  const answers = async (count: number) => {
    for (;;) {
      const parsed = [];
      let rest = connection.received();
      try {
        while (parsed.length < count) {
          const answer = parseAnswer(rest);
          if (rest.length < answer.length) throw new Error("partial");
          parsed.push(answer);
          rest = rest.subarray(answer.length);
        }
        return parsed;
      } catch {
        await once(connection.socket, "data");
      }
    }
  };
  connection.socket.write(requestHead("GET", "/health", {}));
  const body = JSON.stringify({ model: "unrouted/x", messages: [{ role: "user", content: "hi" }] });
  connection.socket.write(
    requestHead("POST", "/v1/chat/completions", { "content-type": "application/json", authorization: `Bearer ${key}`, "content-length": String(body.length) }) +
      body,
  );
  const [health, chat] = await answers(2);
  t.is(health!.status, 200);
  t.is(health!.headers.connection, "keep-alive");
  t.is(chat!.status, 404, chat!.body);
  t.regex(chat!.body, /model_not_found/);
  t.is(chat!.headers.connection, "keep-alive");
  t.false(connection.stopped());
  connection.socket.destroy();
});

/**
 * Send the head of a request with a body of `declared` bytes, and once the server has taken the
 * request (its 100 Continue), `sent` of it, then nothing: the final answer, once the server has
 * closed the connection. (Without the wait, a loaded machine could time out the headers instead.)
 */
async function sendStalledBody(path: string, headers: Record<string, string>, declared: number, sent: string): Promise<Omit<RawAnswer, "written">> {
  const connection = await connect(impatient);
  connection.socket.write(requestHead("POST", path, { ...headers, "content-length": String(declared), expect: "100-continue" }));
  const interim = "HTTP/1.1 100 Continue\r\n\r\n";
  while (!connection.received().toString("latin1").startsWith(interim)) await once(connection.socket, "data");
  connection.socket.write(sent);
  await connection.closed;
  return { ...parseAnswer(connection.received().subarray(interim.length)), closedByServer: true };
}

test("a body that stops arriving is cut off: 408 in the gateway envelope, Connection: close, after server.bodyTimeoutMs", async (t) => {
  const answer = await sendStalledBody(
    "/v1/chat/completions",
    { "content-type": "application/json", authorization: `Bearer ${impatientKey}` },
    10_000,
    '{"model":"fake/x","messa',
  );
  t.is(answer.status, 408, answer.body);
  t.is(answer.headers.connection, "close");
  const body = JSON.parse(answer.body) as { error: { code: string; type: string; message: string } };
  t.is(body.error.code, "request_timeout");
  t.is(body.error.type, "invalid_request_error");
  t.regex(body.error.message, new RegExp(`${BODY_TIMEOUT_MS} ms`));
  t.is((await accessOf(answer.headers["x-request-id"]!)).status, 408);
});

test("a stalled storage upload gets the 408 in the storage dialect ({message})", async (t) => {
  const answer = await sendStalledBody(
    "/v1/storage/upload",
    { "content-type": MULTIPART, authorization: `Bearer ${impatientKey}` },
    50_000,
    '--gw-hostile-boundary\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nthe start of it',
  );
  t.is(answer.status, 408, answer.body);
  t.is(answer.headers.connection, "close");
  t.deepEqual(Object.keys(JSON.parse(answer.body) as object), ["message"]);
  // The upload was ended like one the client abandoned: no temp file, no record stays.
  t.true(await eventually(() => storedPaths(impatientHome).blobs.length === 0 && storedPaths(impatientHome).records.length === 0));
});

test("the body timeout bounds receiving the request, not answering it: a slow upstream answer is not cut off", async (t) => {
  fake.enqueue({ firstByteDelayMs: BODY_TIMEOUT_MS * 1.5 });
  const response = await fetch(`${impatient.v1}/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${impatientKey}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "fake/x", max_tokens: 5, messages: [{ role: "user", content: "slow" }] }),
  });
  t.is(response.status, 200, await response.clone().text());
  t.regex(((await response.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content, /slow/);
});

test("headers that stop arriving get the 408 too, in the gateway envelope, and the connection is closed", async (t) => {
  const connection = await connect(impatient);
  connection.socket.write("POST /v1/chat/completions HTTP/1.1\r\nHost: gw.test\r\ncontent-type: appl");
  await connection.closed;
  const answer = parseAnswer(connection.received());
  t.is(answer.status, 408);
  t.is(answer.headers.connection, "close");
  t.truthy(answer.headers["x-request-id"]);
  t.is((JSON.parse(answer.body) as { error: { code: string } }).error.code, "request_timeout");
});
