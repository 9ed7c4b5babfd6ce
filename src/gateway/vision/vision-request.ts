// Inbound bodies of the picture-reading endpoints (POST /v1/image/describe and the earlier-form
// /v1/vision/describe and /v1/vision/ocr): exactly one of `mediaUrl` (an http(s) URL the gateway
// downloads through the SSRF-safe fetcher) or `mediaBase64` (base64, or a data: URL).
import { z } from "zod";
import type { ImageInput } from "../../media/image-input.js";
import { InvalidRequestError } from "../errors.js";
import { readPicture, type UrlFetcher } from "../media/picture-input.js";
import { parseWithSchema } from "../request-schema.js";

/** What a request names (read later, once the model is known), or a picture already read (a library asset over MCP). */
export type PictureSource = { param: "mediaUrl" | "mediaBase64"; value: string } | { read: ImageInput };

export interface DescribeBody {
  picture: PictureSource;
  prompt?: string;
  model?: string;
}

export interface OcrBody {
  picture: PictureSource;
  model?: string;
}

const pictureFields = {
  mediaUrl: z.string().trim().min(1, "the URL is empty").nullish(),
  mediaBase64: z.string().trim().min(1, "the image data is empty").nullish(),
  model: z.string().min(1).nullish(),
};

const describeSchema = z.object({ ...pictureFields, prompt: z.string().trim().min(1, "the prompt is empty").nullish() }).loose();
const ocrSchema = z.object(pictureFields).loose();

/** POST /v1/image/describe (and /v1/vision/describe) as a client may send it. */
export type DescribeRequestInput = z.input<typeof describeSchema>;

/** `picture`, when the caller already holds it, stands instead of mediaUrl / mediaBase64. */
export function parseDescribeRequest(body: Record<string, unknown>, picture?: PictureSource): DescribeBody {
  const parsed = parseWithSchema(describeSchema, body);
  const result: DescribeBody = { picture: picture ?? pictureSource(parsed) };
  if (parsed.prompt) result.prompt = parsed.prompt;
  if (parsed.model) result.model = parsed.model;
  return result;
}

export function parseOcrRequest(body: Record<string, unknown>): OcrBody {
  const parsed = parseWithSchema(ocrSchema, body);
  const result: OcrBody = { picture: pictureSource(parsed) };
  if (parsed.model) result.model = parsed.model;
  return result;
}

/** Read and check the picture (400 url_not_allowed / url_fetch_failed / invalid_image naming the field). */
export async function readSourcePicture(source: PictureSource, fetch: UrlFetcher, signal?: AbortSignal): Promise<ImageInput> {
  if ("read" in source) return source.read;
  return readPicture(source.value, { fetch, param: source.param, ...(signal ? { signal } : {}) });
}

function pictureSource(fields: { mediaUrl?: string | null | undefined; mediaBase64?: string | null | undefined }): PictureSource {
  const { mediaUrl, mediaBase64 } = fields;
  if (mediaUrl && mediaBase64) {
    throw new InvalidRequestError("Send the picture in one of 'mediaUrl' or 'mediaBase64', not both.", { param: "mediaBase64" });
  }
  if (mediaUrl) return { param: "mediaUrl", value: checkedUrl(mediaUrl) };
  if (mediaBase64) {
    // readPicture would download an http(s) URL; base64 data must never turn into a fetch.
    if (/^https?:/i.test(mediaBase64)) {
      throw new InvalidRequestError("'mediaBase64' takes base64 data or a data: URL; send URLs in 'mediaUrl'.", { param: "mediaBase64" });
    }
    return { param: "mediaBase64", value: mediaBase64 };
  }
  throw new InvalidRequestError("Missing the picture: send 'mediaUrl' (an http(s) URL) or 'mediaBase64' (base64 or a data: URL).", { param: "mediaUrl" });
}

/** An http(s) URL (fetched) or a data: URL (decoded); any other scheme is refused before anything is read. */
function checkedUrl(value: string): string {
  if (/^data:/i.test(value)) return value;
  if (!URL.canParse(value)) throw new InvalidRequestError("'mediaUrl' is not a valid URL.", { param: "mediaUrl" });
  const protocol = new URL(value).protocol;
  if (protocol !== "http:" && protocol !== "https:") {
    throw new InvalidRequestError(`The URL in 'mediaUrl' is not allowed: only http and https URLs are fetched, not ${protocol.slice(0, -1)}.`, {
      param: "mediaUrl",
      code: "url_not_allowed",
    });
  }
  return value;
}
