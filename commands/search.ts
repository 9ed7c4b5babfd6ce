import { Args, Flags } from "@oclif/core";
import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../src/cli/flags.js";
import { gatewayClient } from "../src/cli/gateway-client.js";
import { GwCommand } from "../src/cli/gw-command.js";
import { note, printLine } from "../src/cli/output.js";
import { outputWidth, resultLines, resultsHeader } from "../src/cli/search-output.js";
import { textArgument } from "../src/cli/stdin.js";
import type { SearchRequest } from "../src/client/search-types.js";

export default class Search extends GwCommand {
  static override description =
    "Search the web through the gateway's search provider (POST /v1/search): a numbered list of results, each its title, address, date and snippet, wrapped to the terminal's width ($COLUMNS, else 80 off a terminal).";
  static override examples = [
    '<%= config.bin %> search "sqlite write-ahead log"',
    'echo "rust async runtimes" | <%= config.bin %> search - --max-results 5',
    `<%= config.bin %> search "node 22 release notes" --json | jq -r '.data.results[].url'`,
  ];
  static override args = { query: Args.string({ description: "what to search for (1 to 500 characters); - reads it from stdin", required: true }) };
  static override enableJsonFlag = true;
  static override flags = {
    "max-results": Flags.integer({ description: "how many results, 1 to 20 [default: 10]" }),
    json: Flags.boolean({ ...jsonFlag, description: "print exactly the API body ({success, data: {query, provider, results}})" }),
    "api-key": apiKeyFlag,
    "base-url": baseUrlFlag,
  };

  async run() {
    const { args, flags } = await this.parse(Search);
    const client = gatewayClient(flags);
    const request: SearchRequest = { query: (await textArgument(args.query, "query")).trim() };
    // The gateway checks the range and says what it takes; the client keeps no copy of its limits.
    if (flags["max-results"] !== undefined) request.max_results = flags["max-results"];
    const body = await client.search.search(request);
    return this.shown(body, () => {
      const { provider, results } = body.data;
      if (results.length === 0) return note(`no results for "${body.data.query}" (from ${provider})`);
      note(resultsHeader(results.length, provider));
      for (const line of resultLines(results, outputWidth())) printLine(line);
    });
  }
}
