// The picture argument of `gw image describe|upscale|remove-background`: an http(s) URL goes to the gateway as `mediaUrl`
// (the gateway downloads it); a FILE, or `-` for the bytes on stdin, is read here and sent as a
// data: URL in `mediaBase64`. The gateway sniffs the real type, so the declared one is a courtesy.
import { fileTypeFromBuffer } from "file-type";
import { CliError } from "./cli-error.js";
import { MAX_PICTURE_BYTES, readPictureFile } from "./picture-files.js";
import { readStdinBytes } from "./stdin.js";

export type PictureField = { mediaUrl: string } | { mediaBase64: string };

export async function pictureField(argument: string): Promise<PictureField> {
  if (/^https?:\/\//i.test(argument)) return { mediaUrl: argument };
  if (/^data:/i.test(argument)) return { mediaBase64: argument };
  const bytes = argument === "-" ? await readStdinBytes(MAX_PICTURE_BYTES, "the picture", "the picture") : await readPictureFile(argument);
  if (bytes.length === 0) throw new CliError(`${argument === "-" ? "stdin" : argument} is empty`);
  const type = (await fileTypeFromBuffer(bytes))?.mime;
  return { mediaBase64: `data:${type?.startsWith("image/") ? type : "application/octet-stream"};base64,${bytes.toString("base64")}` };
}
