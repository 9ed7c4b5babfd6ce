// Provider type `openai`: OpenAI itself and every server that speaks its wire format.
import { defineProvider } from "../provider.js";
import { createOpenAIChat } from "./openai-chat.js";

export const openaiProvider = defineProvider({
  type: "openai",
  capabilities: ["chat"],
  create(context) {
    return { name: context.name, type: "openai", chat: createOpenAIChat(context) };
  },
});
