// The picture argument of `gw image describe|upscale|remove-background`: an http(s) URL goes to the gateway as `mediaUrl`
// (the gateway downloads it); a FILE, or `-` for the bytes on stdin, is read here and sent as a
// data: URL in `mediaBase64`. The gateway sniffs the real type, so the declared one is a courtesy.
import { fileTypeFromBuffer } from "file-type";
import { CliError } from "./cli-error.js";
import { MAX_PICTURE_BYTES, readPictureFile } from "./picture-files.js";

export type PictureField = { mediaUrl: string } | { mediaBase64: string };

export async function pictureField(argument: string): Promise<PictureField> {
  if (/^https?:\/\//i.test(argument)) return { mediaUrl: argument };
  if (/^data:/i.test(argument)) return { mediaBase64: argument };
  const bytes = argument === "-" ? await readStdinBytes() : await readPictureFile(argument);
  if (bytes.length === 0) throw new CliError(`${argument === "-" ? "stdin" : argument} is empty`);
  const type = (await fileTypeFromBuffer(bytes))?.mime;
  return { mediaBase64: `data:${type?.startsWith("image/") ? type : "application/octet-stream"};base64,${bytes.toString("base64")}` };
}

async function readStdinBytes(): Promise<Buffer> {
  if (process.stdin.isTTY) throw new CliError("expected the picture on stdin (the argument was `-`), but stdin is a terminal");
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    size += bytes.length;
    if (size > MAX_PICTURE_BYTES) throw new CliError(`the picture on stdin is larger than the ${MAX_PICTURE_BYTES / 1024 / 1024} MB the gateway accepts`);
    chunks.push(bytes);
  }
  return Buffer.concat(chunks);
}
