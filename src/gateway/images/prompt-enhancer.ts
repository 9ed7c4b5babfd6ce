// enhance_prompt on generations (edits ignore it): one chat completion through the
// chat router expands the prompt, billed as its own usage row. It fails open: no enhance model
// configured, any failure, or an empty answer means the original prompt is drawn, nothing extra
// is billed and no `enhanced_prompt` is returned.
import type { Config } from "../../config/resolved-config.js";
import type { ChatCallContext, ChatService } from "../chat/chat-service.js";

const INSTRUCTIONS =
  "You rewrite prompts for an image generation model. Expand the user's prompt into one vivid, " +
  "concrete description (subject, setting, composition, lighting, style) in at most 80 words. " +
  "Keep every element the user asked for and add nothing they excluded. Answer with the prompt only.";

export async function enhancePrompt(chat: ChatService, config: Config, prompt: string, context: ChatCallContext): Promise<string | undefined> {
  const model = config.tools.enhance?.default;
  if (!model) return undefined;
  try {
    const completed = await chat.complete(
      {
        model,
        max_tokens: 300,
        messages: [
          { role: "system", content: INSTRUCTIONS },
          { role: "user", content: prompt },
        ],
      },
      { ...context, endpoint: "image.enhance" },
    );
    const message = completed.body.choices[0]?.message as { content?: unknown } | undefined;
    const text = typeof message?.content === "string" ? message.content.trim() : "";
    return text || undefined;
  } catch {
    // Fail open: the picture is drawn from the original prompt.
    return undefined;
  }
}
