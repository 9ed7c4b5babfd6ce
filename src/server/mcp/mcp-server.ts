// The MCP server (Streamable HTTP, MCP specification 2025-11-25, Transports:
// https://modelcontextprotocol.io/specification/2025-11-25/basic/transports): stateless, one McpServer per HTTP request
// bound to the caller the Bearer key names, answering in JSON. Stateless because every request
// is authenticated on its own and the tools keep no conversation state; sessions would add a
// table to expire and nothing a tool call needs.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Caller } from "../../gateway/auth/key-authenticator.js";
import type { Gateway } from "../../gateway/gateway.js";
import { registerAudioTools } from "./audio-tools.js";
import { registerImageTools } from "./image-tools.js";
import { mcpToolContext } from "./mcp-context.js";
import { registerSearchTools } from "./search-tools.js";
import { refuseNonObjectToolArguments } from "./tool-call-arguments.js";
import { registerVideoTools } from "./video-tools.js";

export const MCP_SERVER_NAME = "gw";

export interface McpRequest {
  request: Request;
  /** The JSON-RPC message(s), already read and checked by the route. */
  body: unknown;
  caller: Caller;
  requestId: string;
  /** Where signed links (a video's clip) point. */
  linkBaseUrl: string;
  log: (error: unknown) => void;
  /** The request's `x-gw-tags`, on the usage rows of its tool calls. */
  tags?: readonly string[];
}

export async function handleMcpRequest(
  gateway: Gateway,
  version: string,
  { request, body, caller, requestId, linkBaseUrl, log, tags }: McpRequest,
): Promise<Response> {
  const server = new McpServer(
    { name: MCP_SERVER_NAME, version },
    {
      instructions:
        "gw's image, audio and video tools: generate, edit, upscale, remove backgrounds and describe pictures; transcribe audio and speak text; start video jobs and follow them (video_status until SUCCEEDED, FAILED or CANCELLED); search the web. What you make is saved in your gw library.",
    },
  );
  const toolContext = mcpToolContext(gateway, caller, requestId, request.signal, log, tags);
  registerImageTools(server, toolContext);
  registerAudioTools(server, toolContext);
  registerVideoTools(server, toolContext, linkBaseUrl);
  registerSearchTools(server, toolContext);
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
    maxRequestBodySize: gateway.config.server.maxJsonBodyBytes,
  });
  await server.connect(transport);
  refuseNonObjectToolArguments(transport, log);
  try {
    return await transport.handleRequest(request, { parsedBody: body });
  } finally {
    await server.close();
  }
}
