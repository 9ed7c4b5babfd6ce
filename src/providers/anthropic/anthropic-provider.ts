// Provider type `anthropic`: Claude through the native Messages API.
import { defineProvider } from "../provider.js";
import { createAnthropicChat } from "./anthropic-chat.js";
import { createAnthropicMessages } from "./anthropic-messages.js";

export const anthropicProvider = defineProvider({
  type: "anthropic",
  capabilities: ["chat", "messages"],
  create(context) {
    return {
      name: context.name,
      type: "anthropic",
      chat: createAnthropicChat(context, { defaultMaxTokens: context.config.defaultMaxTokens }),
      messages: createAnthropicMessages(context),
    };
  },
});
