// The parts of OpenAI's ImagesResponse (https://platform.openai.com/docs/api-reference/images/object) the adapter reads. Lenient:
// every field may be missing or null.

export interface OpenAIImagesResponse {
  created?: number | null;
  data?: Array<{ b64_json?: string | null; url?: string | null; revised_prompt?: string | null }> | null;
  output_format?: string | null;
  quality?: string | null;
  size?: string | null;
  usage?: { input_tokens?: number | null; output_tokens?: number | null } | null;
}
