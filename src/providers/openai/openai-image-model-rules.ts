// What each OpenAI image model family takes (https://platform.openai.com/docs/api-reference/images): the GPT image models
// answer base64 and take background / output_format / output_compression and four qualities;
// the DALL·E models answer a URL unless asked for base64, draw PNG only, and dall-e-3 draws one
// picture per call. Any other model id is treated as a GPT image model (new ones keep its API).

export type OpenAIImageFamily = "gpt-image" | "dall-e-3" | "dall-e-2";

export interface OpenAIImageModelRules {
  family: OpenAIImageFamily;
  maxImagesPerCall: number;
  /** The fixed sizes, for a request that names only an aspect ratio. */
  sizes: readonly string[];
  /** background, output_format, output_compression and qualities low / medium / high. */
  takesOutputOptions: boolean;
  /** Takes `response_format` (must be asked for b64_json). */
  takesResponseFormat: boolean;
  canEdit: boolean;
}

const GPT_IMAGE: OpenAIImageModelRules = {
  family: "gpt-image",
  maxImagesPerCall: 10,
  sizes: ["1024x1024", "1536x1024", "1024x1536"],
  takesOutputOptions: true,
  takesResponseFormat: false,
  canEdit: true,
};

const DALL_E_3: OpenAIImageModelRules = {
  family: "dall-e-3",
  maxImagesPerCall: 1,
  sizes: ["1024x1024", "1792x1024", "1024x1792"],
  takesOutputOptions: false,
  takesResponseFormat: true,
  canEdit: false,
};

const DALL_E_2: OpenAIImageModelRules = {
  family: "dall-e-2",
  maxImagesPerCall: 10,
  sizes: ["256x256", "512x512", "1024x1024"],
  takesOutputOptions: false,
  takesResponseFormat: true,
  canEdit: true,
};

export function openaiImageModelRules(model: string): OpenAIImageModelRules {
  if (model.startsWith("dall-e-3")) return DALL_E_3;
  if (model.startsWith("dall-e-2")) return DALL_E_2;
  return GPT_IMAGE;
}
