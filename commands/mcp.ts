import { Flags } from "@oclif/core";
import { CliError } from "../src/cli/cli-error.js";
import { baseUrlFlag, homeFlag, jsonFlag } from "../src/cli/flags.js";
import { homeServerUrl } from "../src/cli/gateway-client.js";
import { GwCommand } from "../src/cli/gw-command.js";
import { printJson } from "../src/cli/output.js";

export default class Mcp extends GwCommand {
  static override description =
    "Print the gateway's MCP endpoint (Streamable HTTP at /mcp, Bearer key auth) and a client config snippet for MCP clients (Claude Desktop, Cursor, VS Code ...). The key stays a ${GW_API_KEY} placeholder unless --with-key.";
  static override examples = ["<%= config.bin %> mcp", "<%= config.bin %> mcp --with-key --json > mcp.json"];
  static override flags = {
    "with-key": Flags.boolean({ description: "put the key from $GW_API_KEY (or --api-key) into the snippet instead of a placeholder", default: false }),
    "api-key": Flags.string({ description: "the key to embed with --with-key [default: $GW_API_KEY]", helpGroup: "GATEWAY" }),
    name: Flags.string({ description: "the server's name in the snippet", default: "gw" }),
    json: { ...jsonFlag, description: "print {endpoint, config} as JSON" },
    home: homeFlag,
    "base-url": baseUrlFlag,
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(Mcp);
    const base = (flags["base-url"] ?? process.env.GW_BASE_URL ?? homeServerUrl(flags.home)).replace(/\/+$/, "");
    if (!URL.canParse(base)) throw new CliError(`gateway address "${base}" is not a URL (GW_BASE_URL or --base-url)`);
    const endpoint = `${base}/mcp`;
    let key = "${GW_API_KEY}";
    if (flags["with-key"]) {
      const given = flags["api-key"] ?? process.env.GW_API_KEY;
      if (!given) throw new CliError("--with-key needs a key: set GW_API_KEY or pass --api-key");
      key = given;
    }
    const config = { mcpServers: { [flags.name]: { type: "http", url: endpoint, headers: { Authorization: `Bearer ${key}` } } } };
    if (flags.json) return printJson({ endpoint, config });
    process.stdout.write(
      `MCP endpoint: ${endpoint}\n` +
        "Tools: image_generate, image_edit, image_upscale, image_background_remove, image_describe\n\n" +
        `Client config:\n${JSON.stringify(config, null, 2)}\n`,
    );
  }
}
