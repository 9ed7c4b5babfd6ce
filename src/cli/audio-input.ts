// The audio argument of `gw audio transcribe`: an http(s) URL goes as `mediaUrl` (the gateway
// downloads it), a data: URL as `mediaBase64`; a FILE is checked, then streamed from disk as the
// multipart part `file` (progress on a terminal for large files, as `gw storage upload` shows);
// `-` sends the bytes on stdin as a file named `stdin`. The declared type is a courtesy: by
// extension, else sniffed; the gateway sniffs and probes the audio itself.
import { fileTypeFromBuffer, fileTypeFromFile } from "file-type";
import type { TranscriptionAudio } from "../client/audio-client.js";
import { CliError } from "./cli-error.js";
import { contentTypeOf } from "./content-types.js";
import { checkLocalFiles, fileSource } from "./local-files.js";
import { readStdinBytes } from "./stdin.js";
import { transferProgress } from "./transfer-progress.js";

/** The gateway's multipart limit on one file (docs/decisions.md §2); stdin is read into memory, so capped here. */
export const MAX_STDIN_AUDIO_BYTES = 50 * 1024 * 1024;

export async function transcriptionAudio(argument: string): Promise<TranscriptionAudio> {
  if (/^https?:\/\//i.test(argument)) return { mediaUrl: argument };
  if (/^data:/i.test(argument)) return { mediaBase64: argument };
  if (argument === "-") {
    const bytes = await readStdinBytes(MAX_STDIN_AUDIO_BYTES, "audio", "the audio");
    if (bytes.length === 0) throw new CliError("stdin is empty");
    return { bytes, filename: "stdin", contentType: mediaTypeOf((await fileTypeFromBuffer(bytes))?.mime) };
  }
  const [file] = await checkLocalFiles([argument]);
  if (file!.sizeBytes === 0) throw new CliError(`${argument} is empty`);
  let contentType = contentTypeOf(file!.path);
  if (contentType === "application/octet-stream") contentType = mediaTypeOf((await fileTypeFromFile(file!.path).catch(() => undefined))?.mime);
  return { file: fileSource(file!, contentType, (sizeBytes) => transferProgress(`uploading ${file!.path}`, sizeBytes)) };
}

/** Audio (or video, whose sound track is transcribed) as sniffed; anything else is left to the gateway. */
function mediaTypeOf(sniffed: string | undefined): string {
  return sniffed && /^(audio|video)\//.test(sniffed) ? sniffed : "application/octet-stream";
}
