// A pass-through HTTP proxy to put between the gateway and a fake upstream, to observe and steer
// concurrency without timing: it counts requests in flight (and the most at once), and can hold
// requests until a number of them are in flight together, or until the test releases them.
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface UpstreamGate {
  /** Base URL with the target's path (e.g. http://127.0.0.1:PORT/v1). */
  url: string;
  inFlight(): number;
  maxInFlight(): number;
  /** Requests held now. */
  held(): number;
  /** Hold requests until `count` are held together, then let them and all later ones through. */
  holdUntil(count: number): void;
  /** Hold every request until release(). */
  holdAll(): void;
  release(): void;
  resetCounts(): void;
  close(): Promise<void>;
}

export function startUpstreamGate(target: string): Promise<UpstreamGate> {
  const targetUrl = new URL(target);
  let inFlight = 0;
  let max = 0;
  let holdCount: number | undefined;
  const waiting: Array<() => void> = [];

  const release = (): void => {
    holdCount = undefined;
    for (const go of waiting.splice(0)) go();
  };

  const server = http.createServer((request, response) => {
    inFlight += 1;
    max = Math.max(max, inFlight);
    response.on("close", () => (inFlight -= 1));
    const forward = (): void => {
      const upstream = http.request(
        { host: targetUrl.hostname, port: targetUrl.port, method: request.method, path: request.url, headers: request.headers },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      upstream.on("error", () => response.destroy());
      request.pipe(upstream);
    };
    if (holdCount === undefined) return forward();
    request.pause();
    waiting.push(forward);
    if (holdCount !== Number.POSITIVE_INFINITY && waiting.length >= holdCount) release();
  });

  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}${targetUrl.pathname.replace(/\/+$/, "")}`,
        inFlight: () => inFlight,
        maxInFlight: () => max,
        held: () => waiting.length,
        holdUntil: (count) => (holdCount = count),
        holdAll: () => (holdCount = Number.POSITIVE_INFINITY),
        release,
        resetCounts: () => (max = inFlight),
        close: () =>
          new Promise<void>((done) => {
            release();
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
