// Provider type `openai`: OpenAI itself and every server that speaks its wire format.
import { defineProvider } from "../provider.js";
import { createOpenAISpeech, createOpenAITranscription } from "./openai-audio.js";
import { createOpenAIChat } from "./openai-chat.js";
import { createOpenAIEmbeddings } from "./openai-embeddings.js";
import { createOpenAIImages } from "./openai-images.js";
import { createOpenAIResponses } from "./openai-responses.js";
import { createOpenAIVideo } from "./openai-video.js";

export const openaiProvider = defineProvider({
  type: "openai",
  capabilities: ["chat", "embeddings", "image", "transcription", "speech", "video"],
  create(context) {
    return {
      name: context.name,
      type: "openai",
      chat: createOpenAIChat(context),
      images: createOpenAIImages(context),
      transcription: createOpenAITranscription(context),
      speech: createOpenAISpeech(context),
      video: createOpenAIVideo(context),
      embeddings: createOpenAIEmbeddings(context),
      // Only where the config says the upstream speaks /v1/responses: most compatible servers do not.
      responses: context.config.responsesApi ? createOpenAIResponses(context) : undefined,
    };
  },
});
