// The stream path (src/server/sse-response.ts) hands srvx a response body that is not a Node
// stream but has a `pipe` method, and relies on srvx calling it with Node's response (instead of
// wrapping the body in a web stream): that is what lets a turn's frames leave in one socket write.
// srvx is pinned (package.json) because this is duck typing, not an API; if an upgrade changes
// it, this test fails before the stream path silently degrades.

import { createServer, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Writable } from "node:stream";
import test from "ava";
import { H3, HTTPResponse, toNodeHandler } from "h3";

test("srvx pipes a body with a `pipe` method straight into Node's response", async (t) => {
  let destination: unknown;
  const body = {
    pipe(target: Writable): Writable {
      destination = target;
      target.write("data: one\n\n");
      target.end("data: [DONE]\n\n");
      return target;
    },
  };
  const app = new H3().get("/", () => new HTTPResponse(body as unknown as BodyInit, { headers: { "content-type": "text/event-stream" } }));
  const server = createServer(toNodeHandler(app));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    t.is(await response.text(), "data: one\n\ndata: [DONE]\n\n");
    t.is(response.headers.get("content-type"), "text/event-stream");
    t.true(destination instanceof ServerResponse, "piped into Node's own response, not a web stream");
  } finally {
    server.close();
  }
});
