// Provider type `elevenlabs`: ElevenLabs' text-to-speech with the account's voices.
import { defineProvider } from "../provider.js";
import { createElevenLabsSpeech } from "./elevenlabs-speech.js";

export const elevenlabsProvider = defineProvider({
  type: "elevenlabs",
  capabilities: ["speech"],
  create(context) {
    return { name: context.name, type: "elevenlabs", speech: createElevenLabsSpeech(context) };
  },
});
