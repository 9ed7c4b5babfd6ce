// The reference photo of `gw video generate --image`: an http(s) or data: URL goes to the gateway
// as `image_url` unchanged (the gateway downloads it, checked against private addresses); a local
// FILE is read here, checked to be a picture the gateway takes, and sent as a data: URL. A bad
// file fails before anything is submitted.
import { fileTypeFromBuffer } from "file-type";
import { CliError } from "./cli-error.js";
import { readPictureFile } from "./picture-files.js";

/** What the gateway reads as a picture (gateway/media/picture-input.ts). */
const SENDABLE_TYPES = ["image/png", "image/jpeg", "image/webp", "image/gif"];

export async function referenceImageUrl(spec: string, label = "--image"): Promise<string> {
  if (/^(https?|data):/i.test(spec)) return spec;
  if (spec.trim() === "") throw new CliError(`${label} names no picture`);
  const bytes = await readPictureFile(spec, label);
  if (bytes.length === 0) throw new CliError(`${label} ${spec} is empty`);
  const sniffed = await fileTypeFromBuffer(bytes);
  if (!sniffed || !SENDABLE_TYPES.includes(sniffed.mime)) {
    throw new CliError(`${label} ${spec}: ${sniffed ? `${sniffed.mime} is` : "not"} a picture the gateway takes (PNG, JPEG, WebP or GIF)`);
  }
  return `data:${sniffed.mime};base64,${bytes.toString("base64")}`;
}
