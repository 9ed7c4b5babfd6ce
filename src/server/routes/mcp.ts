// /mcp: the MCP server over Streamable HTTP (POST; GET and DELETE answer 405 in stateless mode),
// behind the same Bearer keys as every endpoint. Tool failures come back inside the MCP answer;
// only a missing or bad key is an HTTP error (401, in the gateway envelope).
import type { H3 } from "h3";
import { gwVersion } from "../../config/project-root.js";
import type { Gateway } from "../../gateway/gateway.js";
import { handleMcpRequest } from "../mcp/mcp-server.js";
import type { ServerLogger } from "../server-logger.js";
import { authenticateBearer, requestIdOf } from "../request-context.js";

export const MCP_PATH = "/mcp";

export function registerMcp(app: H3, gateway: Gateway, logger: ServerLogger): void {
  app.all(MCP_PATH, async (event) => {
    const requestId = requestIdOf(event);
    const caller = await authenticateBearer(event, gateway);
    const response = await handleMcpRequest(gateway, gwVersion(), { request: event.req, caller, requestId, log: (error) => logger.error(error, requestId) });
    response.headers.set("x-request-id", requestId);
    return response;
  });
}
