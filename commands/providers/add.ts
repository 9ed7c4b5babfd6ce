import { Args, Flags } from "@oclif/core";
import { CliError } from "../../src/cli/cli-error.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome } from "../../src/cli/home.js";
import { editHomeConfig } from "../../src/cli/home-config.js";
import { note, printLine } from "../../src/cli/output.js";
import { assertProviderType, parseHeaders, providerView } from "../../src/cli/provider-entries.js";
import { objectAt } from "../../src/cli/raw-config.js";

export default class ProvidersAdd extends GwCommand {
  static override description = "Add an upstream provider to config.json. Pass secrets as ${ENV} references: the literal stays out of the file.";
  static override examples = [
    "<%= config.bin %> providers add groq --type openai --base-url https://api.groq.com/openai/v1 --api-key '${GROQ_API_KEY}'",
    "<%= config.bin %> providers add ollama --type openai --base-url http://127.0.0.1:11434/v1",
    "<%= config.bin %> providers add openrouter --type openai --base-url https://openrouter.ai/api/v1 --api-key '${OPENROUTER_API_KEY}' --header X-Title=gw",
  ];
  static override args = { name: Args.string({ description: "provider name (letters, digits, - and _)", required: true }) };
  static override enableJsonFlag = true;
  static override flags = {
    type: Flags.string({ description: "provider type (openai for any OpenAI-compatible server)", required: true }),
    "base-url": Flags.string({ description: "upstream base URL" }),
    "api-key": Flags.string({ description: "API key, or an environment reference such as '${OPENAI_API_KEY}' (single-quoted)" }),
    header: Flags.string({ description: "extra header sent upstream, name=value (repeatable)", multiple: true, default: [] }),
    json: jsonFlag,
  };

  async run() {
    const { args, flags } = await this.parse(ProvidersAdd);
    await assertProviderType(flags.type);
    const headers = parseHeaders(flags.header);
    const entry: Record<string, unknown> = { type: flags.type };
    if (flags["base-url"] !== undefined) entry.baseUrl = flags["base-url"];
    if (flags["api-key"] !== undefined) entry.apiKey = flags["api-key"];
    if (headers) entry.headers = headers;
    const paths = await openHome(flags.home, { create: true });
    await editHomeConfig(paths, (raw) => {
      const providers = objectAt(raw, "providers");
      if (providers[args.name] !== undefined)
        throw new CliError(`provider "${args.name}" already exists: change it with \`gw providers set ${args.name} ...\``);
      providers[args.name] = entry;
    });
    const view = providerView(args.name, entry);
    return this.shown(view, () => {
      printLine(`added provider "${args.name}" (type ${flags.type})`);
      if (view.apiKey === "****") note("note: the API key is stored literally in config.json; an ${ENV} reference keeps it out of the file");
    });
  }
}
