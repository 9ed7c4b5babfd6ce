// What every image endpoint (generations, edits, upscale, background removal) is called with and
// answers: the image result body `{id, created, model, data, timing}`, plus what the route turns into response headers.
import type { ImageResult } from "../../providers/image-types.js";
import { headerSafe } from "../../text/control-characters.js";
import type { ToolCallContext } from "../upstream-calls/tool-provider-call.js";

export type ImageCallContext = ToolCallContext;

export interface ImageResultItem {
  b64_json: string;
  media_type: string;
  revised_prompt?: string;
  asset_id?: string;
}

export interface ImageResultBody {
  id: string;
  created: number;
  model: string;
  data: ImageResultItem[];
  refusal?: string;
  enhanced_prompt?: string;
  timing: { total_ms: number; upstream_ms: number };
}

export interface ImageOutcome {
  body: ImageResultBody;
  /** X-Service-Upstream-Trace-Id. */
  upstreamRequestId?: string;
  /** Set when some pictures could not be stored (X-Service-Asset-Warning). */
  assetWarning?: string;
  /** X-Service-Enhanced-Prompt, when enhancement produced a rewrite. */
  enhancedPromptHeader?: string;
}

export interface FinishedImageCall {
  requestId: string;
  /** The public model id. */
  model: string;
  /** The stored pictures (image-library.ts): items, and a warning when some could not be stored. */
  stored: { data: ImageResultItem[]; warning?: string };
  result: Pick<ImageResult, "refusal" | "upstreamRequestId">;
  /** performance.now() when the call began. */
  started: number;
  upstreamMs: number;
}

/** The image result of a finished call, with the refusal, trace id and storage warning headers. */
export function imageOutcome(call: FinishedImageCall): ImageOutcome {
  const body: ImageResultBody = {
    id: call.requestId,
    created: Math.floor(Date.now() / 1000),
    model: call.model,
    data: call.stored.data,
    timing: { total_ms: Math.round(performance.now() - call.started), upstream_ms: call.upstreamMs },
  };
  if (call.result.refusal !== undefined) body.refusal = call.result.refusal;
  const outcome: ImageOutcome = { body };
  if (call.result.upstreamRequestId) outcome.upstreamRequestId = call.result.upstreamRequestId;
  if (call.stored.warning !== undefined) outcome.assetWarning = headerSafe(call.stored.warning);
  return outcome;
}
