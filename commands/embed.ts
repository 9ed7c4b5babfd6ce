import { Args, Flags } from "@oclif/core";
import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../src/cli/flags.js";
import { gatewayClient } from "../src/cli/gateway-client.js";
import { GwCommand } from "../src/cli/gw-command.js";
import { printLine } from "../src/cli/output.js";
import { textArgument } from "../src/cli/stdin.js";
import type { EmbeddingsRequest } from "../src/client/embeddings-client.js";

/** OpenAI's cheapest embedding model, which `gw init`'s `openai/` route serves. */
const DEFAULT_MODEL = "openai/text-embedding-3-small";

export default class Embed extends GwCommand {
  static override description =
    "Embed a text through the gateway (POST /v1/embeddings) and print its vector as one JSON array; --json prints the whole answer.";
  static override examples = [
    '<%= config.bin %> embed "the quick brown fox"',
    "cat notes.txt | <%= config.bin %> embed - --model gemini/gemini-embedding-001 --dimensions 768",
    `<%= config.bin %> embed "hello" --json | jq '.usage.prompt_tokens'`,
  ];
  static override args = { text: Args.string({ description: "the text to embed; - reads it from stdin", required: true }) };
  static override enableJsonFlag = true;
  static override flags = {
    model: Flags.string({ description: "embedding model id (routed by prefix, like chat models)", default: DEFAULT_MODEL }),
    dimensions: Flags.integer({ description: "a shorter vector, for models that can cut theirs" }),
    json: Flags.boolean({ ...jsonFlag, description: "print exactly the API body ({object, data, model, usage})" }),
    "api-key": apiKeyFlag,
    "base-url": baseUrlFlag,
  };

  async run() {
    const { args, flags } = await this.parse(Embed);
    const client = gatewayClient(flags);
    const request: EmbeddingsRequest = { model: flags.model, input: await textArgument(args.text, "text"), encoding_format: "float" };
    if (flags.dimensions !== undefined) request.dimensions = flags.dimensions;
    const body = await client.embeddings.create(request);
    return this.shown(body, () => {
      // One line: a vector is read by programs, and a 1536-line listing helps no person.
      printLine(JSON.stringify(body.data[0]?.embedding));
    });
  }
}
