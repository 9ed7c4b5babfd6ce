import { Args, Flags } from "@oclif/core";
import { transcriptionAudio } from "../../src/cli/audio-input.js";
import { UsageError } from "../../src/cli/cli-error.js";
import { apiKeyFlag, baseUrlFlag, jsonFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { printJson, writeStdout } from "../../src/cli/output.js";
import { TRANSCRIPT_FORMATS, type TranscriptFormat, type TranscriptionParams } from "../../src/client/audio-types.js";

const JSON_FORMATS: readonly TranscriptFormat[] = ["json", "verbose_json"];

export default class AudioTranscribe extends GwCommand {
  static override description =
    "Transcribe speech to text (POST /v1/audio/transcriptions). A FILE (or - for the bytes on stdin) is uploaded as multipart, streamed from disk; an http(s) URL is downloaded by the gateway. The answer is written to stdout as the API sends it: JSON for json (the default) and verbose_json, the transcript itself for text, srt and vtt.";
  static override examples = [
    "<%= config.bin %> audio transcribe talk.mp3",
    "<%= config.bin %> audio transcribe talk.mp3 --format srt > talk.srt",
    "<%= config.bin %> audio transcribe https://example.com/interview.wav --format verbose_json --language en",
    "ffmpeg -loglevel error -i talk.mp4 -f mp3 - | <%= config.bin %> audio transcribe - --format text",
  ];
  static override args = {
    audio: Args.string({ description: "FILE, an http(s) URL, or - to read the audio from stdin", required: true, ignoreStdin: true }),
  };
  static override flags = {
    format: Flags.string({
      char: "f",
      description: "response_format: json (the API body {model, text}), verbose_json (with language, duration and segments), text, srt or vtt",
      options: [...TRANSCRIPT_FORMATS],
    }),
    language: Flags.string({ char: "l", description: "the spoken language as a hint, e.g. en [default: detected]" }),
    model: Flags.string({ description: "transcription model id, allowlisted in tools.transcription [default: the gateway's default]" }),
    json: Flags.boolean({ ...jsonFlag, description: "print exactly the API body (the default; only with --format json or verbose_json)" }),
    "api-key": apiKeyFlag,
    "base-url": baseUrlFlag,
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(AudioTranscribe);
    const format = flags.format as TranscriptFormat | undefined;
    if (flags.json && format !== undefined && !JSON_FORMATS.includes(format)) {
      throw new UsageError(`--json prints the JSON body, but --format ${format} answers plain text; drop --json, or use --format json or verbose_json`);
    }
    const client = gatewayClient(flags);
    const params: TranscriptionParams = {};
    if (flags.model !== undefined) params.model = flags.model;
    if (flags.language !== undefined) params.language = flags.language;
    if (format !== undefined) params.response_format = format;
    const result = await client.audio.transcribe(await transcriptionAudio(args.audio), params);
    if (result.json !== undefined) return printJson(result.json);
    // The body as sent (a pipe or file gets exactly it); a terminal gets a final newline if it lacks one.
    await writeStdout(process.stdout.isTTY && result.raw !== "" && !result.raw.endsWith("\n") ? `${result.raw}\n` : result.raw);
  }
}
