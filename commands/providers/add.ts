import { Args, Flags } from "@oclif/core";
import { addProvider, type NewProvider, type ProviderView, providerView } from "../../src/admin/config-edits/providers.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome } from "../../src/cli/home.js";
import { editHomeConfig } from "../../src/cli/home-config.js";
import { note, printLine } from "../../src/cli/output.js";
import { assertProviderType, listedProviderView, parseHeaders } from "../../src/cli/provider-entries.js";
import { remoteAdmin, remoteAdminFlags, remotely } from "../../src/cli/remote-admin.js";

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
    ...remoteAdminFlags,
  };

  async run() {
    const { args, flags } = await this.parse(ProvidersAdd);
    const admin = remoteAdmin(flags);
    // The gateway checks the type against the types it implements.
    if (!admin) await assertProviderType(flags.type);
    const headers = parseHeaders(flags.header);
    const provider: NewProvider = { type: flags.type };
    if (flags["base-url"] !== undefined) provider.baseUrl = flags["base-url"];
    if (flags["api-key"] !== undefined) provider.apiKey = flags["api-key"];
    if (headers) provider.headers = headers;
    let view: ProviderView;
    if (admin) view = listedProviderView(await remotely(() => admin.addProvider({ name: args.name, ...provider })));
    else {
      const paths = await openHome(flags.home, { create: true });
      const { result: entry } = await editHomeConfig(paths, (raw) => addProvider(raw, args.name, provider));
      view = providerView(args.name, entry);
    }
    return this.shown(view, () => {
      printLine(`added provider "${args.name}" (type ${flags.type})`);
      if (view.apiKey === "****") note("note: the API key is stored literally in config.json; an ${ENV} reference keeps it out of the file");
    });
  }
}
