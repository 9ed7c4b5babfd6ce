import { Args, Flags } from "@oclif/core";
import { changeProvider, type ProviderChanges, type ProviderView, providerView } from "../../src/admin/config-edits/providers.js";
import type { ProviderUpdateBody } from "../../src/admin/config-requests.js";
import { UsageError } from "../../src/cli/cli-error.js";
import { jsonFlag } from "../../src/cli/flags.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { openHome } from "../../src/cli/home.js";
import { editHomeConfig } from "../../src/cli/home-config.js";
import { note, printLine } from "../../src/cli/output.js";
import { assertProviderType, listedProviderView, parseHeaders } from "../../src/cli/provider-entries.js";
import { remoteAdmin, remoteAdminFlags, remotely } from "../../src/cli/remote-admin.js";

export default class ProvidersSet extends GwCommand {
  static override description =
    "Change a provider in config.json: only what is given changes, and a running server follows without a restart. Secrets are never printed back; pass them as ${ENV} references to keep them out of the file.";
  static override examples = [
    "<%= config.bin %> providers set openrouter --api-key '${OPENROUTER_API_KEY}'",
    "<%= config.bin %> providers set ollama --base-url http://10.0.0.5:11434/v1",
    "<%= config.bin %> providers set openrouter --header X-Title=gw --header HTTP-Referer=   # set one header, remove another",
  ];
  static override args = { name: Args.string({ description: "provider name (`gw providers list` shows them)", required: true }) };
  static override enableJsonFlag = true;
  static override flags = {
    type: Flags.string({ description: "provider type (openai for any OpenAI-compatible server)" }),
    "base-url": Flags.string({ description: "upstream base URL; '' removes it (the type's default)" }),
    "api-key": Flags.string({ description: "API key, or an environment reference such as '${OPENAI_API_KEY}' (single-quoted); '' removes it" }),
    header: Flags.string({ description: "extra header sent upstream, name=value (repeatable); name= removes that header", multiple: true, default: [] }),
    json: jsonFlag,
    ...remoteAdminFlags,
  };

  async run() {
    const { args, flags } = await this.parse(ProvidersSet);
    const admin = remoteAdmin(flags);
    // The gateway checks the type against the types it implements.
    if (flags.type !== undefined && !admin) await assertProviderType(flags.type);
    const changes: ProviderChanges = {};
    if (flags.type !== undefined) changes.type = flags.type;
    if (flags["base-url"] !== undefined) changes.baseUrl = flags["base-url"];
    if (flags["api-key"] !== undefined) changes.apiKey = flags["api-key"];
    const headers = parseHeaders(flags.header);
    if (headers) changes.headers = headers;
    if (Object.keys(changes).length === 0) throw new UsageError("nothing to change: give --base-url, --api-key, --header name=value or --type");
    let view: ProviderView;
    let changed: string[];
    if (admin) {
      const listed = await remotely(() => admin.updateProvider(args.name, updateBody(changes)));
      view = listedProviderView(listed);
      changed = listed.changed;
    } else {
      const paths = await openHome(flags.home);
      const { result } = await editHomeConfig(paths, (raw) => changeProvider(raw, args.name, changes));
      view = providerView(args.name, result.entry);
      changed = result.changed;
    }
    return this.shown(view, () => {
      printLine(`changed provider "${args.name}": ${changed.join(", ")}`);
      if (changes.apiKey && view.apiKey === "****") note("note: the API key is stored literally in config.json; an ${ENV} reference keeps it out of the file");
    });
  }
}

/** The flags as the admin API takes them: '' (remove) as null. */
function updateBody(changes: ProviderChanges): ProviderUpdateBody {
  const body: ProviderUpdateBody = {};
  if (changes.type !== undefined) body.type = changes.type;
  if (changes.baseUrl !== undefined) body.baseUrl = changes.baseUrl === "" ? null : changes.baseUrl;
  if (changes.apiKey !== undefined) body.apiKey = changes.apiKey === "" ? null : changes.apiKey;
  if (changes.headers) body.headers = Object.fromEntries(Object.entries(changes.headers).map(([header, value]) => [header, value === "" ? null : value]));
  return body;
}
