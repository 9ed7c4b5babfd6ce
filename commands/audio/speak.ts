import { Args, Flags } from "@oclif/core";
import { runSpeechBatch } from "../../src/cli/audio-batch.js";
import { speechFormatFor, speechSummary, speechTarget } from "../../src/cli/audio-files.js";
import { CliError, UsageError } from "../../src/cli/cli-error.js";
import { apiKeyFlag, baseUrlFlag, jsonFlag, numberFlag } from "../../src/cli/flags.js";
import { gatewayClient } from "../../src/cli/gateway-client.js";
import { GwCommand } from "../../src/cli/gw-command.js";
import { note, printLine } from "../../src/cli/output.js";
import { writeOutputFile } from "../../src/cli/output-file.js";
import { textArgument } from "../../src/cli/stdin.js";
import type { SpeechRequest } from "../../src/client/audio-types.js";

export default class AudioSpeak extends GwCommand {
  static override description =
    "Synthesize speech from text (POST /v1/audio/speech) and save the audio: to -o FILE, to stdout with -o - (a pipe or a file, never a terminal), or by default to speech-<request id>.<ext> in the current directory; the path written is printed. The format follows --format, else -o FILE's extension (talk.wav asks for wav), else the gateway's default (mp3). With --batch FILE, one request per JSON line (see --batch).";
  static override examples = [
    '<%= config.bin %> audio speak "Hello there" -o hello.mp3',
    'echo "Read from stdin" | <%= config.bin %> audio speak - --voice en-gb --format wav',
    '<%= config.bin %> audio speak "Piped" --format opus -o - | ffplay -nodisp -autoexit -',
    '<%= config.bin %> audio speak "Hi" --json | jq -r .file',
    '<%= config.bin %> audio speak --batch lines.jsonl -o out/   # lines like {"input":"Chapter one","voice":"en-us","output":"ch1.wav"}',
  ];
  // ignoreStdin: oclif would otherwise take a missing argument from piped stdin (a --batch - file).
  static override args = { text: Args.string({ description: "the text to speak; - reads it from stdin (leave it out with --batch)", ignoreStdin: true }) };
  static override enableJsonFlag = true;
  static override flags = {
    output: Flags.string({
      char: "o",
      description:
        "where to write the audio; - is stdout (refused on a terminal); with --batch a directory [default: ./speech-<request id>.<ext>; with --batch the current directory]",
    }),
    voice: Flags.string({ description: "a voice id from `gw audio voices` [default: the model's default voice]" }),
    format: Flags.string({ description: "mp3, wav, opus, flac or pcm (16-bit mono) [default: the -o FILE extension, else mp3]" }),
    speed: numberFlag({ description: "playback rate, 1 is normal (range per model: gw catalog audio --json)" }),
    model: Flags.string({ description: "speech model id, allowlisted in tools.speech [default: the gateway's default]" }),
    project: Flags.string({ description: "project id from `gw projects list`, for the copy kept in your library [default: your default project]" }),
    batch: Flags.string({
      description:
        'JSON lines file (- for stdin): one request body per line ({"input": ..., "voice", "format", "speed", "model", "project_id"}), sent --concurrency at a time; flags give every line its defaults, an optional "output" field names a line\'s file; audio goes to -o DIR as <line>.<ext> (existing files are overwritten) and one JSON result line per request is printed in input order',
    }),
    concurrency: Flags.integer({ description: "with --batch: requests in flight at once", min: 1, default: 4 }),
    json: Flags.boolean({
      ...jsonFlag,
      description:
        "print what was written as JSON ({file, bytes, format, contentType, model, voice, characters, durationMs, assetId, requestId}) instead of the path",
    }),
    "api-key": apiKeyFlag,
    "base-url": baseUrlFlag,
  };

  async run() {
    const { args, flags } = await this.parse(AudioSpeak);
    const defaults: Record<string, unknown> = {};
    for (const [name, value] of [
      ["voice", flags.voice],
      ["speed", flags.speed],
      ["model", flags.model],
      ["project_id", flags.project],
    ] as const) {
      if (value !== undefined) defaults[name] = value;
    }

    if (flags.batch !== undefined) {
      if (args.text !== undefined) throw new UsageError("--batch reads the texts from its lines; drop the TEXT argument");
      if (flags.output === "-") throw new UsageError("--batch writes files into the -o directory; -o - is not possible");
      const client = gatewayClient(flags);
      const format = speechFormatFor(flags.format, undefined);
      await runSpeechBatch({
        source: flags.batch,
        directory: flags.output ?? ".",
        concurrency: flags.concurrency,
        defaults: format === undefined ? defaults : { ...defaults, format },
        send: (body) => client.audio.speak(body as unknown as SpeechRequest),
      });
      return;
    }

    if (args.text === undefined) throw new UsageError("missing TEXT (or pass --batch FILE)");
    if (flags.output === "-") {
      if (flags.json) throw new UsageError("--json and -o - both want stdout; choose one");
      // Checked before the request: audio on a terminal is noise, and the call would be paid for.
      if (process.stdout.isTTY)
        throw new CliError("-o - writes audio bytes to stdout, which is a terminal; redirect it (> speech.mp3), pipe it, or pass -o FILE");
    }
    const client = gatewayClient(flags);
    const format = speechFormatFor(flags.format, flags.output);
    const body = { input: await textArgument(args.text, "text"), ...defaults, ...(format === undefined ? {} : { format }) } as SpeechRequest;
    const result = await client.audio.speak(body);
    if (result.assetWarning) note(`not kept in your library: ${result.assetWarning}`);
    if (flags.output === "-") {
      await writeBytes(result.audio);
      return;
    }
    const target = speechTarget(result, flags.output);
    await writeOutputFile(target, result.audio);
    return this.shown(speechSummary(result, target.path), () => {
      printLine(target.path);
    });
  }
}

function writeBytes(bytes: Uint8Array): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(bytes, (error) => (error ? reject(error) : resolve()));
  });
}
