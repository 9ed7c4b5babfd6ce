// /mcp: the MCP server over Streamable HTTP (POST; GET and DELETE answer 405: stateless mode),
// behind the same Bearer keys as every endpoint. Tool failures come back inside the MCP answer;
// only a missing or bad key is an HTTP error (401, in the gateway envelope). The MCP SDK (and
// what it pulls in) is loaded on the first /mcp request, not at start: a gateway that never
// serves MCP does not carry it in memory.
import type { H3 } from "h3";
import { gwVersion } from "../../config/project-root.js";
import { MethodNotAllowedError } from "../../gateway/errors.js";
import type { Gateway } from "../../gateway/gateway.js";
import { readJsonValue } from "../read-json-body.js";
import type { RequestCharges } from "../request-charges.js";
import { authenticateBearer, headerTagsOf, requestIdOf } from "../request-context.js";
import type { ServerLogger } from "../server-logger.js";
import { linkBaseUrl } from "./storage.js";

export const MCP_PATH = "/mcp";

export function registerMcp(app: H3, gateway: Gateway, logger: ServerLogger, charges: RequestCharges): void {
  app.all(
    MCP_PATH,
    charges.counted(async (event) => {
      const requestId = requestIdOf(event);
      const caller = await authenticateBearer(event, gateway);
      // Stateless: no server-to-client stream to open (GET) and no session to end (DELETE).
      if (event.req.method !== "POST") {
        event.res.headers.set("allow", "POST");
        throw new MethodNotAllowedError(`${event.req.method} is not allowed on ${MCP_PATH}: this MCP server is stateless; send every message as a POST.`);
      }
      const tags = headerTagsOf(event);
      // Read here, with every JSON endpoint's checks (size, nesting depth), before the SDK sees it.
      const body = await readJsonValue(event, gateway.config.server.maxJsonBodyBytes);
      const { handleMcpRequest } = await import("../mcp/mcp-server.js");
      const response = await handleMcpRequest(gateway, gwVersion(), {
        request: event.req,
        body,
        caller,
        requestId,
        linkBaseUrl: linkBaseUrl(event, gateway),
        log: (error) => logger.error(error, requestId),
        tags,
      });
      response.headers.set("x-request-id", requestId);
      return response;
    }),
  );
}
