// POST /v1/image/describe (and the earlier-form /v1/vision/describe) without HTTP: pick the
// allowlisted describe model, read the picture (SSRF-safe for URLs), and ask the model about it in
// ONE chat completion through the chat router, so routing, plan gates, the credit reservation
// (402 before any upstream call) and the usage row work exactly as for chat. Each chat provider
// converts the OpenAI `image_url` part to its vendor's format. Chat errors propagate unchanged.
import type { PlanLimits } from "../../config/config-schema.js";
import { pictureForModel } from "../../media/picture-for-model.js";
import type { ChatCompletion } from "../../providers/chat-types.js";
import type { Caller } from "../auth/key-authenticator.js";
import type { ChatService } from "../chat/chat-service.js";
import { InsufficientCreditsError } from "../errors.js";
import { MAX_PICTURE_PIXELS } from "../media/picture-input.js";
import type { ServiceContext } from "../service-context.js";
import { chooseToolModel } from "./tool-model.js";
import { type DescribeBody, readSourcePicture } from "./vision-request.js";

export const DEFAULT_DESCRIBE_PROMPT =
  "Describe this image in detail: the main subjects, their setting and actions, notable objects, colours and composition, " +
  "and any text that is visible in it. Answer in plain prose.";

/** Room for a thorough description; also what the credit reservation is sized on. */
const DESCRIBE_MAX_TOKENS = 1024;

export interface VisionCallContext {
  caller: Caller;
  plan: PlanLimits;
  requestId: string;
  signal: AbortSignal;
  /** The usage row's endpoint (`image.describe`, `vision.describe`, `vision.ocr`). */
  endpoint: string;
  /** The request's tags, on its usage row (gateway/request-tags.ts). */
  tags?: readonly string[];
}

export interface DescribeResult {
  /** The model that answered (the public id). */
  model: string;
  text: string;
}

export class DescribeService {
  constructor(
    private readonly shared: ServiceContext,
    /** Pictures are described by the chat router, billed like any chat call. */
    private readonly chat: ChatService,
  ) {}

  async describe(body: DescribeBody, context: VisionCallContext): Promise<DescribeResult> {
    // The model is checked first: a refused request downloads nothing.
    const model = chooseToolModel(this.shared.config(), "describe", body.model);
    const { credits, limit } = await this.shared.ledger.spendable(context);
    if (credits <= 0) throw new InsufficientCreditsError(0, DESCRIBE_MAX_TOKENS, undefined, this.shared.ledger.describeLimit(context.caller, limit));
    const input = await readSourcePicture(body.picture, this.shared.fetchUrl, context.signal);
    const picture = await pictureForModel(input, MAX_PICTURE_PIXELS);
    const completed = await this.chat.complete(
      {
        model,
        max_tokens: DESCRIBE_MAX_TOKENS,
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: body.prompt ?? DEFAULT_DESCRIBE_PROMPT },
              { type: "image_url", image_url: { url: `data:${picture.mediaType};base64,${picture.bytes.toString("base64")}` } },
            ],
          },
        ],
      },
      context,
    );
    return { model: completed.body.model || model, text: answerText(completed.body) };
  }
}

/** The first choice's text; some compatible servers answer with a list of parts. */
function answerText(body: ChatCompletion): string {
  const content = (body.choices[0]?.message as { content?: unknown } | undefined)?.content;
  if (typeof content === "string") return content.trim();
  if (Array.isArray(content)) {
    return content
      .map((part) => (part && typeof part === "object" && typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : ""))
      .join("")
      .trim();
  }
  return "";
}
