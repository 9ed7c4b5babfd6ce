// OpenAI's Batch API under /v1/batches (gateway/batches/): the official SDK's batches.create,
// retrieve, list and cancel. Bearer key and per-key rate limit; errors in the gateway's OpenAI
// envelope. The lines run in the background (batch-runner.ts), with the key that created the batch.
import type { H3 } from "h3";
import { parseBatchCreate, parseBatchListQuery } from "../../gateway/batches/batch-request.js";
import { MethodNotAllowedError, RouteNotFoundError } from "../../gateway/errors.js";
import type { Gateway } from "../../gateway/gateway.js";
import { readJsonObject } from "../read-json-body.js";
import { admitCaller, headerTagsOf } from "../request-context.js";

const BATCHES_PATH = "/v1/batches";
/** The create body is a few small fields. */
const MAX_CREATE_BODY_BYTES = 64 * 1024;
const BATCH_PATH = /^\/v1\/batches\/[^/]+(?:\/cancel)?$/;

export function registerBatches(app: H3, gateway: Gateway): void {
  app.post(BATCHES_PATH, async (event) => {
    const { caller, plan } = await admitCaller(event, gateway);
    const tags = headerTagsOf(event);
    const request = parseBatchCreate(await readJsonObject(event, MAX_CREATE_BODY_BYTES));
    return gateway.batches.create(request, caller, plan, tags);
  });

  app.get(BATCHES_PATH, async (event) => {
    const { caller } = await admitCaller(event, gateway);
    return gateway.batches.list(caller.agent.id, parseBatchListQuery(event.url.searchParams));
  });

  app.get(`${BATCHES_PATH}/:id`, async (event) => {
    const { caller } = await admitCaller(event, gateway);
    return gateway.batches.retrieve(caller.agent.id, batchIdOf(event.context));
  });

  app.post(`${BATCHES_PATH}/:id/cancel`, async (event) => {
    const { caller } = await admitCaller(event, gateway);
    return gateway.batches.cancel(caller.agent.id, batchIdOf(event.context));
  });

  app.all(`${BATCHES_PATH}/**`, (event) => {
    const { pathname } = event.url;
    if (pathname === BATCHES_PATH || BATCH_PATH.test(pathname)) throw new MethodNotAllowedError(`${event.req.method} is not allowed on ${pathname}.`);
    throw new RouteNotFoundError(`No endpoint at ${event.req.method} ${pathname}.`);
  });
}

function batchIdOf(context: unknown): string {
  return (context as { params?: Record<string, string> }).params?.id ?? "";
}
