// `gw batch submit --prompts FILE --model M`: a plain text file of prompts, one per non-empty line,
// written as the Batch API's JSONL input for the user: one chat completion request per prompt,
// `custom_id` `line-<n>` with n the prompt's line in the file (from 1, blank lines counted), so an
// answer is paired with its prompt by the line an editor shows.
import { CliError } from "./cli-error.js";

export const PROMPTS_ENDPOINT = "/v1/chat/completions";

export interface PromptSettings {
  model: string;
  /** A system message before every prompt. */
  system?: string;
  maxTokens?: number;
  temperature?: number;
}

/** The JSONL input for `text` (the prompts file's content); `source` names the file in the refusal of one without prompts. */
export function promptsToBatchInput(text: string, settings: PromptSettings, source: string): string {
  const lines: string[] = [];
  text.split(/\r?\n/).forEach((prompt, index) => {
    if (prompt.trim() === "") return;
    lines.push(JSON.stringify({ custom_id: `line-${index + 1}`, method: "POST", url: PROMPTS_ENDPOINT, body: chatBody(prompt, settings) }));
  });
  if (lines.length === 0) throw new CliError(`${source} holds no prompts (one per non-empty line)`);
  return `${lines.join("\n")}\n`;
}

function chatBody(prompt: string, settings: PromptSettings): Record<string, unknown> {
  const messages = [...(settings.system === undefined ? [] : [{ role: "system", content: settings.system }]), { role: "user", content: prompt }];
  return {
    model: settings.model,
    messages,
    ...(settings.maxTokens === undefined ? {} : { max_tokens: settings.maxTokens }),
    ...(settings.temperature === undefined ? {} : { temperature: settings.temperature }),
  };
}
