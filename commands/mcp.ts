import { Flags } from "@oclif/core";
import { CliError } from "../src/cli/cli-error.js";
import { baseUrlFlag, homeFlag, jsonFlag } from "../src/cli/flags.js";
import { homeServerUrl } from "../src/cli/gateway-client.js";
import { GwCommand } from "../src/cli/gw-command.js";
import { note } from "../src/cli/output.js";
import { networkReason } from "../src/client/gw-api-error.js";
import { listMcpTools, type McpToolSummary } from "../src/client/mcp-tools.js";

export default class Mcp extends GwCommand {
  static override description =
    "Print the gateway's MCP endpoint (Streamable HTTP at /mcp, Bearer key auth), the tools it offers (asked from the running gateway with MCP's tools/list, so a key is needed to list them) and a client config snippet for MCP clients (Claude Desktop, Cursor, VS Code ...). The key stays a ${GW_API_KEY} placeholder unless --with-key.";
  static override examples = ["<%= config.bin %> mcp", "<%= config.bin %> mcp --with-key --json > mcp.json"];
  static override enableJsonFlag = true;
  static override flags = {
    "with-key": Flags.boolean({ description: "put the key from $GW_API_KEY (or --api-key) into the snippet instead of a placeholder", default: false }),
    "api-key": Flags.string({ description: "the key to list the tools with, and to embed with --with-key [default: $GW_API_KEY]", helpGroup: "GATEWAY" }),
    name: Flags.string({ description: "the server's name in the snippet", default: "gw" }),
    json: { ...jsonFlag, description: "print {endpoint, tools, config} as JSON (tools: [] when they could not be listed)" },
    home: homeFlag,
    "base-url": baseUrlFlag,
  };

  async run() {
    const { flags } = await this.parse(Mcp);
    const base = (flags["base-url"] ?? process.env.GW_BASE_URL ?? homeServerUrl(flags.home)).replace(/\/+$/, "");
    if (!URL.canParse(base)) throw new CliError(`gateway address "${base}" is not a URL (GW_BASE_URL or --base-url)`);
    const endpoint = `${base}/mcp`;
    const given = flags["api-key"] ?? process.env.GW_API_KEY;
    let key = "${GW_API_KEY}";
    if (flags["with-key"]) {
      if (!given) throw new CliError("--with-key needs a key: set GW_API_KEY or pass --api-key");
      key = given;
    }
    const config = { mcpServers: { [flags.name]: { type: "http", url: endpoint, headers: { Authorization: `Bearer ${key}` } } } };
    const tools = await this.offeredTools(endpoint, given);
    return this.shown({ endpoint, tools, config }, () => {
      const width = Math.max(0, ...tools.map((tool) => tool.name.length));
      const toolLines = tools.map((tool) => `  ${tool.name.padEnd(width)}  ${tool.title ?? firstSentence(tool.description)}`.trimEnd());
      process.stdout.write(
        `MCP endpoint: ${endpoint}\n` +
          (tools.length > 0 ? `Tools (${tools.length}):\n${toolLines.join("\n")}\n` : "") +
          `\nClient config:\n${JSON.stringify(config, null, 2)}\n`,
      );
    });
  }

  /** The server's tools, or none (and a note on stderr saying why) when it cannot be asked: the snippet is still right. */
  private async offeredTools(endpoint: string, apiKey: string | undefined): Promise<McpToolSummary[]> {
    if (!apiKey) {
      note("note: set GW_API_KEY (or --api-key) to list the tools the gateway offers");
      return [];
    }
    try {
      return await listMcpTools({ endpoint, apiKey, clientVersion: this.config.version });
    } catch (error) {
      note(`note: cannot list the tools at ${endpoint} (${networkReason(error)}); is \`gw serve\` running, and is the key valid?`);
      return [];
    }
  }
}

/** A tool's description up to its first full stop, for the one-line listing. */
function firstSentence(description: string | undefined): string {
  return (description ?? "").split(/(?<=\.)\s/)[0] ?? "";
}
