import { Args, Flags } from "@oclif/core";
import { apiKeyFlag, baseUrlFlag, jsonFlag, numberFlag } from "../src/cli/flags.js";
import { gatewayClient } from "../src/cli/gateway-client.js";
import { GwCommand } from "../src/cli/gw-command.js";
import { writeStdout } from "../src/cli/output.js";
import { textArgument } from "../src/cli/stdin.js";
import type { ChatCompletionRequest, ChatMessage } from "../src/client/api-types.js";

export default class Chat extends GwCommand {
  static override description = "Send a chat completion and print the reply as it streams.";
  static override examples = [
    '<%= config.bin %> chat "Write a haiku about routers"',
    'git diff | <%= config.bin %> chat - --system "Review this diff" --model openai/gpt-4o',
    `<%= config.bin %> chat "2+2?" --json | jq -r '.choices[0].message.content'`,
  ];
  static override args = { prompt: Args.string({ description: "the user message; - reads it from stdin", required: true }) };
  static override enableJsonFlag = true;
  static override flags = {
    model: Flags.string({ description: "model id or route alias", default: "auto" }),
    system: Flags.string({ description: "system message" }),
    temperature: numberFlag({ description: "sampling temperature (0 to 2)" }),
    "max-tokens": Flags.integer({ description: "largest reply, in tokens" }),
    stream: Flags.boolean({ description: "stream the reply as it is generated (--no-stream waits for the whole reply)", default: true, allowNo: true }),
    json: jsonFlag,
    "api-key": apiKeyFlag,
    "base-url": baseUrlFlag,
  };

  async run() {
    const { args, flags } = await this.parse(Chat);
    const client = gatewayClient(flags);
    const messages: ChatMessage[] = [];
    if (flags.system !== undefined) messages.push({ role: "system", content: flags.system });
    messages.push({ role: "user", content: await textArgument(args.prompt, "prompt") });
    const request: ChatCompletionRequest = { model: flags.model, messages };
    if (flags.temperature !== undefined) request.temperature = flags.temperature;
    if (flags["max-tokens"] !== undefined) request.max_tokens = flags["max-tokens"];

    if (flags.json || !flags.stream) {
      const completion = await client.chatCompletion(request);
      // The whole completion under --json; the reply alone otherwise.
      return this.shown(completion, () => writeStdout(`${completion.choices[0]?.message.content ?? ""}\n`));
    }
    let started = false;
    try {
      for await (const chunk of client.chatCompletionStream(request)) {
        const content = chunk.choices[0]?.delta.content;
        if (content) {
          started = true;
          await writeStdout(content);
        }
      }
    } catch (error) {
      // Keep what arrived, on a line of its own, before the error is reported.
      if (started) await writeStdout("\n");
      throw error;
    }
    await writeStdout("\n");
  }
}
