import { Flags } from "@oclif/core";
import { fitColumns, terminalWidth } from "../../src/cli/audio-output.js";
import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { printTable } from "../../src/cli/output.js";

const HEADERS = ["ID", "NAME", "PROVIDER", "LANGUAGES"];

export default class AudioVoices extends GwCommand {
  static override description =
    "List the voices `gw audio speak --voice` takes (GET /v1/audio/voices; no key needed): every speech model's, or one model's with --model.";
  static override examples = [
    "<%= config.bin %> audio voices",
    "<%= config.bin %> audio voices --model local/espeak",
    "<%= config.bin %> audio voices --json | jq -r '.voices[].id'",
  ];
  static override enableJsonFlag = true;
  static override flags = {
    model: Flags.string({ description: "only the voices of this speech model" }),
    json: Flags.boolean({ ...jsonFlag, description: "print exactly the API body ({voices: [...]})" }),
    "api-key": apiKeyFlag,
    "base-url": baseUrlFlag,
  };

  async run() {
    const { flags } = await this.parse(AudioVoices);
    const body = await gatewayClient(flags, process.env, { keyRequired: false }).audio.voices({ model: flags.model });
    return this.shown(body, () => {
      const rows = body.voices.map((voice) => [voice.id, voice.name, voice.provider, voice.languages.join(",")]);
      printTable(
        HEADERS,
        fitColumns(HEADERS, rows, terminalWidth(), [3, 1]),
        flags.model ? `no voices for ${flags.model}` : "no voices: no speech model is offered",
      );
    });
  }
}
