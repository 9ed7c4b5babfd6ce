// Provider type `gemini`: Google's Gemini Developer API (generativelanguage.googleapis.com).
import { defineProvider } from "../provider.js";
import { createGeminiChat } from "./gemini-chat.js";

export const geminiProvider = defineProvider({
  type: "gemini",
  capabilities: ["chat"],
  create(context) {
    return { name: context.name, type: "gemini", chat: createGeminiChat(context) };
  },
});
