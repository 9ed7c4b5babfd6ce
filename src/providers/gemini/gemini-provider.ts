// Provider type `gemini`: Google's Gemini Developer API (generativelanguage.googleapis.com).
import { defineProvider } from "../provider.js";
import { createGeminiChat } from "./gemini-chat.js";
import { createGeminiEmbeddings } from "./gemini-embeddings.js";

export const geminiProvider = defineProvider({
  type: "gemini",
  capabilities: ["chat", "embeddings"],
  create(context) {
    return { name: context.name, type: "gemini", chat: createGeminiChat(context), embeddings: createGeminiEmbeddings(context) };
  },
});
