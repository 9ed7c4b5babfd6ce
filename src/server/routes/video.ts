// The video endpoints: the public catalog (no key), POST /v1/video/generations (202 with the
// queued job), GET /v1/video/jobs/{id} (the job; its clip's signed link once it succeeded),
// DELETE /v1/video/jobs/{id} (cancel; 409 once finished) and GET /v1/video/jobs (the agent's
// recent jobs, newest first). Errors render in the gateway envelope.
import type { H3 } from "h3";
import { InvalidRequestError } from "../../gateway/errors.js";
import type { Gateway } from "../../gateway/gateway.js";
import { parseVideoGeneration } from "../../gateway/video/video-request.js";
import { readJsonObject } from "../read-json-body.js";
import { admitCaller } from "../request-context.js";
import { linkBaseUrl } from "./storage.js";
import { toolCallContext } from "./tool-call-context.js";

export const VIDEO_PATHS = ["/v1/public/video-models", "/v1/video/generations", "/v1/video/jobs"];

const LIST_LIMIT = { default: 20, max: 100 };

export function registerVideo(app: H3, gateway: Gateway): void {
  app.get("/v1/public/video-models", () => gateway.videoCatalog());

  app.post("/v1/video/generations", async (event) => {
    const context = await toolCallContext(event, gateway);
    const body = parseVideoGeneration(await readJsonObject(event, gateway.config.server.maxJsonBodyBytes));
    const job = await gateway.video.submit(body, context);
    event.res.status = 202;
    event.res.headers.set("location", `/v1/video/jobs/${job.id}`);
    return job;
  });

  // Reading and cancelling bill nothing: no tags are read.
  app.get("/v1/video/jobs", async (event) => {
    const { caller } = await admitCaller(event, gateway);
    const limit = listLimit(event.url.searchParams.get("limit"));
    return { data: await gateway.video.list(caller.agent.id, limit, linkBaseUrl(event, gateway)) };
  });

  app.get("/v1/video/jobs/:id", async (event) => {
    const { caller } = await admitCaller(event, gateway);
    return gateway.video.get(caller.agent.id, jobIdOf(event.context), linkBaseUrl(event, gateway));
  });

  app.delete("/v1/video/jobs/:id", async (event) => {
    const { caller } = await admitCaller(event, gateway);
    return gateway.video.cancel(caller.agent.id, jobIdOf(event.context), linkBaseUrl(event, gateway));
  });
}

function jobIdOf(context: unknown): string {
  return (context as { params?: Record<string, string> }).params?.id ?? "";
}

function listLimit(value: string | null): number {
  if (value === null) return LIST_LIMIT.default;
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > LIST_LIMIT.max) {
    throw new InvalidRequestError(`limit must be a whole number from 1 to ${LIST_LIMIT.max}.`, { param: "limit" });
  }
  return limit;
}
