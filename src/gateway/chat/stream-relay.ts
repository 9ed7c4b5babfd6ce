// Rewrites a streamed chat completion for the client, event by event: the public model name in
// every chunk, `role` in the first delta, the usage remembered for billing and the text produced
// counted for when no usage arrives. Events that arrive as JSON text (OpenAI-compatible
// upstreams) are rewritten as text: only the first chunk and the usage chunk are parsed.
import type { ChatChunk, ChatStreamEvent, ChatUsage } from "../../providers/chat-types.js";

const contentField = /"(?:content|arguments)":"((?:[^"\\]|\\.)*)"/g;

export class StreamRelay {
  usage: ChatUsage | undefined;
  /** Characters of content and tool arguments seen, for estimating usage the upstream never sent. */
  producedCharacters = 0;
  private first = true;
  private id: unknown;
  private created: unknown;
  private upstreamModelToken: string | null = null;
  private readonly publicModelToken: string;

  constructor(private readonly publicModel: string) {
    this.publicModelToken = `"model":${JSON.stringify(publicModel)}`;
  }

  /** The event as JSON text, ready to send. */
  relay(event: ChatStreamEvent): string {
    if (typeof event !== "string") return JSON.stringify(this.rewrite(event));
    if (this.first || (this.usage === undefined && event.includes('"usage":{')) || !this.upstreamModelToken || !event.includes(this.upstreamModelToken)) {
      return JSON.stringify(this.rewrite(JSON.parse(event) as ChatChunk));
    }
    this.countText(event);
    return event.replace(this.upstreamModelToken, this.publicModelToken);
  }

  /** A final chunk carrying usage, when the upstream sent none. */
  usageChunk(usage: ChatUsage): ChatChunk {
    return { id: this.id as string, object: "chat.completion.chunk", created: this.created, model: this.publicModel, choices: [], usage };
  }

  private rewrite(chunk: ChatChunk): ChatChunk {
    if (this.first) {
      this.first = false;
      this.id = chunk.id;
      this.created = chunk.created;
      if (typeof chunk.model === "string") this.upstreamModelToken = `"model":${JSON.stringify(chunk.model)}`;
      const choice = chunk.choices?.[0];
      if (choice) choice.delta = { role: "assistant", ...choice.delta };
    }
    if (chunk.usage) this.usage = chunk.usage;
    chunk.model = this.publicModel;
    for (const choice of chunk.choices ?? []) {
      const delta = choice.delta as { content?: unknown; tool_calls?: Array<{ function?: { arguments?: unknown } }> } | undefined;
      if (typeof delta?.content === "string") this.producedCharacters += delta.content.length;
      for (const call of delta?.tool_calls ?? []) {
        if (typeof call.function?.arguments === "string") this.producedCharacters += call.function.arguments.length;
      }
    }
    return chunk;
  }

  private countText(json: string): void {
    contentField.lastIndex = 0;
    for (let match = contentField.exec(json); match; match = contentField.exec(json)) this.producedCharacters += match[1]!.length;
  }
}
