import { duration, usd } from "../../src/cli/audio-output.js";
import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { printLine, printTable } from "../../src/cli/output.js";

export default class CatalogAudio extends GwCommand {
  static override description =
    "List the speech and transcription models this gateway offers (GET /v1/public/audio-models; no key needed), with their limits and prices in dollars.";
  static override examples = ["<%= config.bin %> catalog audio", "<%= config.bin %> catalog audio --json | jq '.speech[].constraints.voices'"];
  static override enableJsonFlag = true;
  static override flags = { json: jsonFlag, "api-key": apiKeyFlag, "base-url": baseUrlFlag };

  async run() {
    const { flags } = await this.parse(CatalogAudio);
    const body = await gatewayClient(flags, process.env, { keyRequired: false }).audio.audioCatalog();
    return this.shown(body, () => {
      printLine("Speech");
      if (body.speech.length === 0) printLine("none: allowlist a speech model in tools.speech");
      printTable(
        ["ID", "MAX CHARS", "FORMATS", "PER 1K CHARS"],
        // Credits are micro-dollars per character: a thousand characters cost perCharacter / 1000 dollars.
        body.speech.map((model) => [model.id, model.constraints.maxCharacters, model.constraints.formats.join(","), usd(model.pricing.perCharacter * 1000)]),
      );
      printLine();
      printLine("Transcription");
      if (body.transcription.length === 0) printLine("none: configure a provider and allowlist a transcription model in tools.transcription");
      printTable(
        ["ID", "FORMATS", "MAX DURATION", "PER MINUTE"],
        body.transcription.map((model) => [
          model.id,
          model.constraints.responseFormats.join(","),
          duration(model.constraints.maxDurationSeconds),
          usd(model.pricing.perMinute),
        ]),
      );
    });
  }
}
