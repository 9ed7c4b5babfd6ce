// Refuses a tools/call whose `arguments` is not a JSON object (a string, an array, a number, null)
// before the SDK sees it. The SDK parses the request with its own schema ahead of any tool or
// input validation, and a failure there surfaces as -32603 (internal error) with the raw zod issue
// list as the message: the client's mistake reported as the server's, in a form no one can read.
// Here it becomes -32602 (invalid params) naming the tool, as a wrong argument value is.

import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ErrorCode, isJSONRPCRequest, type JSONRPCErrorResponse, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** Answer a malformed tools/call on the transport itself; pass every other message on to the server. */
export function refuseNonObjectToolArguments(transport: Transport, log: (error: unknown) => void): void {
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const refusal = nonObjectArgumentsError(message);
    if (refusal) transport.send(refusal).catch(log);
    else deliver?.(message, extra);
  };
}

function nonObjectArgumentsError(message: JSONRPCMessage): JSONRPCErrorResponse | undefined {
  if (!isJSONRPCRequest(message) || message.method !== "tools/call") return undefined;
  const args = message.params?.arguments;
  if (args === undefined || isPlainObject(args)) return undefined;
  const name = message.params?.name;
  const tool = typeof name === "string" ? `tool ${name}` : "the tool";
  return {
    jsonrpc: "2.0",
    id: message.id,
    error: {
      code: ErrorCode.InvalidParams,
      message: `Invalid arguments for ${tool}: arguments must be an object of named inputs, not ${describeValue(args)}.`,
    },
  };
}

function isPlainObject(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}
