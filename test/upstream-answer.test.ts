// How an upstream answer is read (src/net/dispatched-answer.ts, upstream-body.ts): a reader that
// stops reading pauses the connection, so a large answer never piles up in gw's memory; a stream
// read to its end gives every byte in order; an answer dropped unread closes its connection; a
// call whose caller has already gone never reaches the upstream.
import http from "node:http";
import type { AddressInfo } from "node:net";
import test, { type ExecutionContext } from "ava";
import { type UpstreamSettings, upstreamSchema } from "../src/config/config-schema.js";
import { UpstreamHttp, upstreamTarget } from "../src/net/upstream-http.js";

const settings: UpstreamSettings = { ...upstreamSchema.parse({}), retries: 0 };
const MIB = 1024 * 1024;

interface Upstream {
  url: string;
  requests: number;
  /** Bytes the last request's answer has handed to its socket so far. */
  written: number;
  closed: Promise<void>;
  stop(): Promise<void>;
}

/** An upstream that writes `total` bytes in 64 KiB pieces, as fast as the connection takes them. */
async function startUpstream(total: number): Promise<Upstream> {
  let closedOnce: () => void = () => {};
  const upstream: Upstream = {
    url: "",
    requests: 0,
    written: 0,
    closed: new Promise<void>((resolve) => {
      closedOnce = resolve;
    }),
    stop: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const piece = Buffer.alloc(64 * 1024, "a");
  const server = http.createServer((request, response) => {
    upstream.requests += 1;
    request.resume();
    response.socket?.once("close", closedOnce);
    response.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(total) });
    upstream.written = 0;
    const write = () => {
      while (upstream.written < total) {
        const size = Math.min(piece.length, total - upstream.written);
        upstream.written += size;
        if (!response.write(size === piece.length ? piece : piece.subarray(0, size))) {
          response.once("drain", write);
          return;
        }
      }
      response.end();
    };
    write();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  upstream.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/files/big/content`;
  return upstream;
}

/** The value once it has stopped changing over `polls` polls in a row, or reached `until` (polled, no fixed wait: the suite runs on loaded machines). */
async function settledValue(read: () => number, until: number, polls = 10): Promise<number> {
  let last = read();
  let same = 0;
  while (same < polls && last < until) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const now = read();
    same = now === last ? same + 1 : 0;
    last = now;
  }
  return last;
}

/** An upstream of `total` bytes and a GET of it through gw's client; both are stopped when the test ends. */
async function fileUpstream(t: ExecutionContext, total: number) {
  const upstream = await startUpstream(total);
  t.teardown(upstream.stop);
  const client = new UpstreamHttp();
  t.teardown(() => client.close());
  const get = (signal = new AbortController().signal) =>
    client.send({ provider: "big", target: upstreamTarget(upstream.url), method: "GET", signal, answer: "file" }, settings);
  return { upstream, get };
}

test("a reader that stops reading pauses the upstream: a 256 MiB answer is not read ahead into memory", async (t) => {
  const { upstream, get } = await fileUpstream(t, 256 * MIB);
  const response = await get();
  t.is(response.status, 200);
  const reads = response.body[Symbol.asyncIterator]();
  const first = await reads.next();
  t.false(first.done);
  // Nothing reads now: the upstream stalls on the push back long before its 256 MiB are out
  // (gw's 64 KiB and the sockets' buffers); read ahead, it would send them all.
  const written = await settledValue(() => upstream.written, 256 * MIB);
  t.true(written < 64 * MIB, `the upstream wrote ${written} bytes to a reader that stopped`);
  await reads.return?.();
  await upstream.closed;
});

test("an answer read to its end gives every byte, in order, and its connection serves the next call", async (t) => {
  const { upstream, get } = await fileUpstream(t, 3 * MIB + 17);
  for (let call = 0; call < 2; call += 1) {
    const response = await get();
    let bytes = 0;
    let onlyA = true;
    for await (const chunk of response.body) {
      bytes += chunk.length;
      if (onlyA && Buffer.from(chunk).some((byte) => byte !== 0x61)) onlyA = false;
    }
    t.is(bytes, 3 * MIB + 17);
    t.true(onlyA);
  }
  t.is(upstream.requests, 2);
});

test("an answer dropped unread closes its connection", async (t) => {
  const { upstream, get } = await fileUpstream(t, 64 * MIB);
  const response = await get();
  response.body.discard();
  await upstream.closed;
  t.true(upstream.written < 64 * MIB, `the upstream wrote all ${upstream.written} bytes to an answer that was dropped`);
});

test("a call whose caller has already gone fails with the caller's reason and never reaches the upstream", async (t) => {
  const { upstream, get } = await fileUpstream(t, 10);
  const gone = new AbortController();
  const reason = new Error("the client went away");
  gone.abort(reason);
  const error = await t.throwsAsync(get(gone.signal));
  t.is(error, reason);
  t.is(upstream.requests, 0);
});
