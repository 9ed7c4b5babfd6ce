// The built-in video catalog: what each vendor's models take and cost per second of finished
// clip (credits are micro-dollars), from the vendors' list prices. `local/kenburns` is a real
// ffmpeg clip panned and zoomed over the reference photo: no generative model, free, honest about
// it in its description.
import type { VideoModelInput } from "./video-catalog-schema.js";

const LANDSCAPE_AND_PORTRAIT_720 = { "16:9": "1280x720", "9:16": "720x1280" };
/** Sora 2 and Sora 2 Pro take the same lengths and a first frame; Pro adds a larger size. */
const SORA = {
  referenceImage: "optional",
  duration: { min: 4, max: 12, values: [4, 8, 12], default: 4 },
  resolutions: { "720p": LANDSCAPE_AND_PORTRAIT_720 },
  defaultResolution: "720p",
  defaultRatio: "16:9",
} satisfies VideoModelInput["constraints"];

export const DEFAULT_VIDEO_MODEL_INPUTS: VideoModelInput[] = [
  {
    id: "local/kenburns",
    provider: "local",
    model: "kenburns",
    name: "Ken Burns (local)",
    description: "A slow pan and zoom over your photo, made by ffmpeg on this machine: no generative model, nothing moves but the camera. Needs image_url.",
    freeTier: true,
    constraints: {
      referenceImage: "required",
      duration: { min: 1, max: 30, default: 5 },
      resolutions: {
        "480p": { "16:9": "854x480", "9:16": "480x854", "1:1": "480x480", "4:3": "640x480", "3:4": "480x640" },
        "720p": { "16:9": "1280x720", "9:16": "720x1280", "1:1": "720x720", "4:3": "960x720", "3:4": "720x960" },
        "1080p": { "16:9": "1920x1080", "9:16": "1080x1920", "1:1": "1080x1080", "4:3": "1440x1080", "3:4": "1080x1440" },
      },
      defaultResolution: "720p",
      defaultRatio: "16:9",
    },
    pricing: { perSecond: { "480p": 0, "720p": 0, "1080p": 0 } },
  },
  {
    id: "runway/gen4_turbo",
    provider: "runway",
    model: "gen4_turbo",
    name: "Runway Gen-4 Turbo",
    description: "Image to video: animates the reference photo following the prompt.",
    constraints: {
      referenceImage: "required",
      maxPromptLength: 1000,
      duration: { min: 5, max: 10, values: [5, 10], default: 5 },
      resolutions: { "720p": { "16:9": "1280x720", "9:16": "720x1280", "4:3": "1104x832", "3:4": "832x1104", "1:1": "960x960", "21:9": "1584x672" } },
      defaultResolution: "720p",
      defaultRatio: "16:9",
    },
    pricing: { perSecond: { "720p": 50_000 } },
  },
  {
    id: "runway/gen4.5",
    provider: "runway",
    model: "gen4.5",
    name: "Runway Gen-4.5",
    description: "Text to video, or image to video with a reference photo.",
    constraints: {
      referenceImage: "optional",
      maxPromptLength: 1000,
      duration: { min: 2, max: 10, default: 5 },
      resolutions: { "720p": LANDSCAPE_AND_PORTRAIT_720 },
      defaultResolution: "720p",
      defaultRatio: "16:9",
    },
    pricing: { perSecond: { "720p": 120_000 } },
  },
  {
    id: "openai/sora-2",
    provider: "openai",
    model: "sora-2",
    name: "Sora 2",
    description: "OpenAI's video model with sound; text to video, or from a first frame.",
    constraints: SORA,
    pricing: { perSecond: { "720p": 100_000 } },
  },
  {
    id: "openai/sora-2-pro",
    provider: "openai",
    model: "sora-2-pro",
    name: "Sora 2 Pro",
    description: "Higher-quality Sora, in 720p or 1792x1024.",
    constraints: { ...SORA, resolutions: { ...SORA.resolutions, "1024p": { "16:9": "1792x1024", "9:16": "1024x1792" } } },
    pricing: { perSecond: { "720p": 300_000, "1024p": 500_000 } },
  },
];
