// Where every tool endpoint (image, audio, video, search) starts: the caller authenticated and
// charged to its key's rate limit, with its plan, the request's id, abort signal and tags.
import type { H3Event } from "h3";
import type { Gateway } from "../../gateway/gateway.js";
import type { ToolCallContext } from "../../gateway/upstream-calls/tool-provider-call.js";
import { admitCaller, headerTagsOf, requestIdOf } from "../request-context.js";

/** Authenticated, rate-limited, its `x-gw-tags` read (400 when malformed): every tool call starts here. */
export async function toolCallContext(event: H3Event, gateway: Gateway): Promise<ToolCallContext> {
  const requestId = requestIdOf(event);
  const { caller, plan } = await admitCaller(event, gateway);
  const tags = headerTagsOf(event);
  return { caller, planName: plan.name, plan: plan.limits, requestId, signal: event.req.signal, ...(tags ? { tags } : {}) };
}
