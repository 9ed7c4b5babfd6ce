// What every tool of one MCP request shares: the gateway, the caller, the request id, and `run`,
// which charges the tool call to the key's rate limit and turns any failure into a tool error.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Caller } from "../../gateway/auth/key-authenticator.js";
import type { Gateway } from "../../gateway/gateway.js";
import type { ImageCallContext } from "../../gateway/images/image-results.js";
import { toolError } from "./tool-results.js";

export interface McpToolContext {
  gateway: Gateway;
  run(work: (call: ImageCallContext) => Promise<CallToolResult>): Promise<CallToolResult>;
}

export function mcpToolContext(
  gateway: Gateway,
  caller: Caller,
  requestId: string,
  signal: AbortSignal,
  log: (error: unknown) => void,
  tags?: readonly string[],
): McpToolContext {
  return {
    gateway,
    async run(work) {
      try {
        const plan = gateway.planOf(caller);
        // A tool call is a request like any other: initialize and tools/list are not counted.
        await gateway.takeRateLimit(caller, plan.limits);
        return await work({ caller, planName: plan.name, plan: plan.limits, requestId, signal, ...(tags ? { tags } : {}) });
      } catch (error) {
        return toolError(error, log);
      }
    },
  };
}
