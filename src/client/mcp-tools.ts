// The tools a gateway's MCP server offers, asked as any MCP client asks: `tools/list` over
// Streamable HTTP with the official SDK's client. `gw mcp` shows that answer rather than a list of
// its own, so it names exactly what the server it points at registers (another gw version
// included), and nothing outside the server has to be kept in step with it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";

export interface McpToolSummary {
  name: string;
  title?: string;
  description?: string;
}

export interface McpToolsRequest {
  /** The MCP endpoint, e.g. http://127.0.0.1:8787/mcp. */
  endpoint: string;
  apiKey: string;
  /** This client's name and version, as MCP's initialize handshake sends them. */
  clientVersion: string;
}

/**
 * After the handshake a client MAY open a GET stream for messages the server sends on its own; a
 * one-off listing has no use for one, and gw's stateless server answers it 405 (docs/decisions.md
 * §17), which the SDK takes as "no stream". It is answered so here instead of being sent: no
 * refused request in the gateway's log for a `gw mcp`.
 */
const withoutEventStream: FetchLike = (url, init) =>
  (init?.method ?? "GET").toUpperCase() === "GET" ? Promise.resolve(new Response(null, { status: 405 })) : fetch(url, init);

/** Every tool the server lists, page after page, in the server's order. */
export async function listMcpTools({ endpoint, apiKey, clientVersion }: McpToolsRequest): Promise<McpToolSummary[]> {
  const client = new Client({ name: "gw-cli", version: clientVersion });
  const transport = new StreamableHTTPClientTransport(new URL(endpoint), {
    requestInit: { headers: { authorization: `Bearer ${apiKey}` } },
    fetch: withoutEventStream,
  });
  await client.connect(transport);
  try {
    const tools: McpToolSummary[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? undefined : { cursor });
      for (const tool of page.tools) tools.push({ name: tool.name, title: tool.title ?? tool.annotations?.title, description: tool.description });
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return tools;
  } finally {
    await client.close();
  }
}
