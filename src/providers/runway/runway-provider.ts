// Provider type `runway`: Runway's video generation API (image to video, text to video).
import { defineProvider } from "../provider.js";
import { createRunwayVideo } from "./runway-video.js";

export const runwayProvider = defineProvider({
  type: "runway",
  capabilities: ["video"],
  create(context) {
    return { name: context.name, type: "runway", video: createRunwayVideo(context) };
  },
});
