// How gateway answers and errors become MCP tool results (MCP specification 2025-11-25, Tools:
// https://modelcontextprotocol.io/specification/2025-11-25/server/tools): pictures as image
// content (base64 + mimeType) beside structured content that carries each picture's asset_id, and
// failures as tool errors (`isError`) whose one text block is the HTTP error envelope as JSON,
// `{"error":{message,type,code,param?,status}}`, so a client sees the same codes over MCP as over
// HTTP. A tool error has no structured content: a client that listed the tools validates any
// structured content against the tool's outputSchema, error or not (the official SDK's callTool
// throws -32602 on a mismatch), and the envelope is not a picture or description result.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { GatewayError, InternalError, UpstreamPassthroughError } from "../../gateway/errors.js";
import type { ImageOutcome } from "../../gateway/images/image-results.js";

/** The image result without the bytes (they travel as image content), plus the storage warning. */
export function imageToolResult(outcome: ImageOutcome): CallToolResult {
  const { data, ...rest } = outcome.body;
  const structured: Record<string, unknown> = {
    ...rest,
    data: data.map(({ b64_json: _bytes, ...picture }) => picture),
  };
  if (outcome.assetWarning) structured.asset_warning = outcome.assetWarning;
  return {
    content: [
      ...data.map((picture) => ({ type: "image" as const, data: picture.b64_json, mimeType: picture.media_type })),
      { type: "text", text: JSON.stringify(structured) },
    ],
    structuredContent: structured,
  };
}

/** A JSON answer as text and structured content. */
export function jsonToolResult(value: Record<string, unknown>, text?: string): CallToolResult {
  return { content: [{ type: "text", text: text ?? JSON.stringify(value) }], structuredContent: value };
}

export function toolError(error: unknown, log: (error: unknown) => void): CallToolResult {
  let envelope: { message: string; type: string; code: string; param?: string; provider?: string; status?: number };
  if (error instanceof GatewayError) {
    envelope = { ...error.toBody().error, status: error.status };
  } else if (error instanceof UpstreamPassthroughError) {
    envelope = { ...upstreamEnvelope(error), status: error.status };
  } else {
    log(error);
    const internal = new InternalError("The gateway failed to handle this tool call.");
    envelope = { ...internal.toBody().error, status: internal.status };
  }
  return { isError: true, content: [{ type: "text", text: JSON.stringify({ error: envelope }) }] };
}

/** An upstream's own error about a value, as the HTTP endpoint passes it through. */
function upstreamEnvelope(error: UpstreamPassthroughError): { message: string; type: string; code: string; param?: string } {
  try {
    const parsed = JSON.parse(error.body) as { error?: { message?: unknown; type?: unknown; code?: unknown; param?: unknown } };
    const inner = parsed.error;
    if (inner && typeof inner.message === "string") {
      const envelope: { message: string; type: string; code: string; param?: string } = {
        message: inner.message,
        type: typeof inner.type === "string" ? inner.type : "upstream_error",
        code: typeof inner.code === "string" ? inner.code : "upstream_error",
      };
      if (typeof inner.param === "string") envelope.param = inner.param;
      return envelope;
    }
  } catch {
    // not JSON: described from the status below
  }
  return { message: `The upstream answered HTTP ${error.status}.`, type: "upstream_error", code: "upstream_error" };
}
