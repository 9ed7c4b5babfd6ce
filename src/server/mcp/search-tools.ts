// The MCP `web_search` tool: the HTTP endpoint's parser and service (allowlisted providers in
// order, billing, the same errors), answering the results as text a model can read and the
// endpoint's data as structured content.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { parseSearchRequest } from "../../gateway/search/search-service.js";
import type { McpToolContext } from "./mcp-context.js";
import { jsonToolResult } from "./tool-results.js";

export function registerSearchTools(server: McpServer, context: McpToolContext): void {
  server.registerTool(
    "web_search",
    {
      title: "Search the web",
      description:
        "Search the web through the gateway's search providers (tried in order). Returns titles, URLs, snippets and publication dates (YYYY-MM-DD) where known.",
      inputSchema: {
        query: z.string().describe("what to search for, at most 500 characters"),
        max_results: z.number().int().optional().describe("1 to 20 (default 10)"),
      },
      outputSchema: {
        query: z.string(),
        provider: z.string(),
        results: z.array(z.object({ title: z.string(), url: z.string(), snippet: z.string(), publishedDate: z.string().optional() })),
      },
    },
    (args) =>
      context.run(async (call) => {
        const { data } = (await context.gateway.search.search(parseSearchRequest(args), call)).body;
        const text = data.results
          .map((result, index) => `${index + 1}. ${result.title}\n${result.url}${result.publishedDate ? ` (${result.publishedDate})` : ""}\n${result.snippet}`)
          .join("\n\n");
        return jsonToolResult({ ...data }, text || `No results for "${data.query}".`);
      }),
  );
}
