// Provider type `deepgram`: Deepgram's speech-to-text (pre-recorded audio), speakers labelled.
import { defineProvider } from "../provider.js";
import { createDeepgramTranscription } from "./deepgram-transcription.js";

export const deepgramProvider = defineProvider({
  type: "deepgram",
  capabilities: ["transcription"],
  create(context) {
    return { name: context.name, type: "deepgram", transcription: createDeepgramTranscription(context) };
  },
});
