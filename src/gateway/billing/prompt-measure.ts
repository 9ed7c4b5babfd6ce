// How big a chat prompt can be, in tokens, before any upstream has seen it. Two numbers per
// request: an upper bound for the credit reservation (no tokenizer ever makes more tokens than
// the UTF-8 bytes of the text it reads, so the bytes of the prompt's JSON bound the text tokens;
// pictures count by their vendor's own rule from their real dimensions) and a realistic estimate
// for billing a call whose upstream reported no usage.
import { imageDimensionsOf } from "../../media/image-dimensions.js";
import { type ImageDetail, type ImageSize, type ImageTokenRule, imageTokens } from "./image-tokens.js";

export interface PictureInPrompt {
  /** Undefined for a picture by URL: its vendor's largest count is assumed. */
  size: ImageSize | undefined;
  detail: ImageDetail | undefined;
}

export interface PromptMeasure {
  /** UTF-8 bytes of the prompt's JSON (messages, system, tools, schemas), pictures' data left out. */
  bytes: number;
  /** Characters of the same JSON. */
  characters: number;
  pictures: PictureInPrompt[];
  /** Tools are declared: vendors add their own tool-use instructions to the prompt. */
  tools: boolean;
}

/**
 * Tokens a vendor may add for tool use (Anthropic documents 313 to 346 for its tool-use system
 * prompt; OpenAI and Gemini add fewer). Counted once when a request declares tools.
 */
export const TOOL_USE_PROMPT_TOKENS = 400;

/** The prompt of a chat-completions request (OpenAI's shape). */
export function measureChatPrompt(request: { messages: unknown[]; tools?: unknown; response_format?: unknown; functions?: unknown }): PromptMeasure {
  const pictures: PictureInPrompt[] = [];
  let pictureCharacters = 0;
  for (const message of request.messages) {
    const content = (message as { content?: unknown }).content;
    if (!Array.isArray(content)) continue;
    for (const part of content as Array<{ type?: unknown; image_url?: unknown }>) {
      if (part?.type !== "image_url") continue;
      const image = part.image_url as { url?: unknown; detail?: unknown } | string | undefined;
      const url = typeof image === "string" ? image : image?.url;
      if (typeof url !== "string") continue;
      const detail = typeof image === "object" && isDetail(image.detail) ? image.detail : undefined;
      if (url.startsWith("data:")) {
        pictures.push({ size: imageDimensionsOf(url), detail });
        pictureCharacters += url.length;
      } else {
        pictures.push({ size: undefined, detail });
      }
    }
  }
  const tools = request.tools ?? request.functions;
  return measure(JSON.stringify([request.messages, tools, request.response_format]), pictureCharacters, pictures, Array.isArray(tools) && tools.length > 0);
}

/** The prompt of a Messages request (Anthropic's shape): pictures in messages and in tool results. */
export function measureMessagesPrompt(request: { messages: unknown[]; system?: unknown; tools?: unknown }): PromptMeasure {
  const pictures: PictureInPrompt[] = [];
  let pictureCharacters = 0;
  const visit = (blocks: unknown): void => {
    if (!Array.isArray(blocks)) return;
    for (const block of blocks as Array<{ type?: unknown; source?: { type?: unknown; data?: unknown }; content?: unknown }>) {
      if (block?.type === "tool_result") visit(block.content);
      if (block?.type !== "image") continue;
      const data = block.source?.type === "base64" ? block.source.data : undefined;
      if (typeof data === "string") {
        pictures.push({ size: imageDimensionsOf(data), detail: undefined });
        pictureCharacters += data.length;
      } else {
        pictures.push({ size: undefined, detail: undefined });
      }
    }
  };
  for (const message of request.messages) visit((message as { content?: unknown }).content);
  return measure(
    JSON.stringify([request.system, request.messages, request.tools]),
    pictureCharacters,
    pictures,
    Array.isArray(request.tools) && request.tools.length > 0,
  );
}

/** At most this many input tokens, for a vendor's picture rule and model. */
export function inputTokenBound(prompt: PromptMeasure, rule: ImageTokenRule, model: string): number {
  return prompt.bytes + pictureTokens(prompt, rule, model) + (prompt.tools ? TOOL_USE_PROMPT_TOKENS : 0);
}

/** About this many input tokens: what is billed when the upstream reports no usage. */
export function inputTokenEstimate(prompt: PromptMeasure, rule: ImageTokenRule, model: string): number {
  return estimateTextTokens(prompt.characters, prompt.bytes) + pictureTokens(prompt, rule, model) + (prompt.tools ? TOOL_USE_PROMPT_TOKENS : 0);
}

/**
 * Tokens of text from its length in characters and UTF-8 bytes: about four characters a token in
 * ASCII, about one a token beyond it (CJK, where a character takes three bytes).
 */
export function estimateTextTokens(characters: number, bytes: number): number {
  const wide = Math.min(characters, Math.max(0, (bytes - characters) / 2));
  return Math.ceil((characters - wide) / 4 + wide);
}

function pictureTokens(prompt: PromptMeasure, rule: ImageTokenRule, model: string): number {
  let total = 0;
  for (const picture of prompt.pictures) total += imageTokens(rule, model, picture.size, picture.detail);
  return total;
}

/** Picture data (base64, ASCII: one byte a character) is taken out of the text's count. */
function measure(json: string, pictureCharacters: number, pictures: PictureInPrompt[], tools: boolean): PromptMeasure {
  return { bytes: Buffer.byteLength(json) - pictureCharacters, characters: json.length - pictureCharacters, pictures, tools };
}

function isDetail(value: unknown): value is ImageDetail {
  return value === "low" || value === "high" || value === "auto";
}
