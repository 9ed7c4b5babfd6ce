// What `gw image generate` and `gw image edit` share: the generation parameters as flags, the
// request body they build, and how one image result is printed or saved.
import { Args, Flags, type Interfaces } from "@oclif/core";
import type { ImageResultBody } from "../client/image-types.js";
import { CliError, UsageError } from "./cli-error.js";
import { apiKeyFlag, baseUrlFlag, jsonFlag, numberFlag } from "./flags.js";
import { formatOfTarget, pictureTargets } from "./image-files.js";
import { note, printJson } from "./output.js";
import { writeOutputFile } from "./output-file.js";
import { humanBytes } from "./transfer-progress.js";

// ignoreStdin: oclif would otherwise take a missing argument from piped stdin (a --batch - file).
export const promptArgument = Args.string({ description: "what to draw; - reads it from stdin (leave it out with --batch)", ignoreStdin: true });

/** The parameters of POST /v1/image/generations, plus output, batch and gateway flags. */
export const imageRequestFlags = {
  output: Flags.string({
    char: "o",
    description:
      "where to write the picture(s); - is stdout (one picture only); with --batch a directory [default: ./image-<asset id>.<ext>; with --batch the current directory]",
  }),
  n: Flags.integer({ description: "number of pictures (plan cap 1 Free, 4 Pro, 10 Max)", min: 1 }),
  "aspect-ratio": Flags.string({ description: "1:1, 2:3, 3:2, 3:4, 4:3, 4:5, 5:4, 9:16, 16:9 or 21:9" }),
  format: Flags.string({ description: "output format: png, jpeg, webp or svg [default: webp, or the -o FILE extension]" }),
  resolution: Flags.string({ description: "512, 1K, 2K or 4K (plan cap 1K Free, 2K Pro, 4K Max)" }),
  size: Flags.string({ description: "explicit pixels as WIDTHxHEIGHT (overrides --resolution where supported)" }),
  quality: Flags.string({ description: "auto, low, medium or high" }),
  background: Flags.string({ description: "auto, transparent or opaque (transparent needs png or webp)" }),
  compression: Flags.integer({ description: "output_compression 0 to 100 (webp and jpeg only)", min: 0, max: 100 }),
  seed: Flags.integer({ description: "seed; the same inputs reproduce the same picture", min: 0 }),
  "negative-prompt": Flags.string({ description: "what not to draw (diffusion models only)" }),
  "cfg-scale": numberFlag({ description: "prompt adherence (diffusion models only; range per model)" }),
  "style-preset": Flags.string({ description: "style preset (vocabulary per model: GET /v1/image/styles)" }),
  model: Flags.string({ description: "image model id [default: the gateway's default image model]" }),
  project: Flags.string({ description: "project id from `gw projects list` [default: your default project]" }),
  parent: Flags.string({ description: "asset id of the library picture this one follows (its lineage)" }),
  batch: Flags.string({
    description:
      'JSON lines file (- for stdin): one request body per line, sent --concurrency at a time; flags give every line its defaults, an optional "output" field names a line\'s file stem; pictures go to -o DIR as <line>-<index>.<ext> (existing files are overwritten) and one JSON result line per request is printed in input order',
  }),
  concurrency: Flags.integer({ description: "with --batch: requests in flight at once", min: 1, default: 4 }),
  json: Flags.boolean({
    ...jsonFlag,
    description: "print exactly the API body (pictures as base64) on stdout; files are written only with -o FILE (--batch always prints JSON lines)",
  }),
  "api-key": apiKeyFlag,
  "base-url": baseUrlFlag,
};

export type ImageRequestFlags = Interfaces.InferredFlags<typeof imageRequestFlags>;

/** Flags that must not be combined with --batch or that --batch needs set a certain way. */
export function checkOutputFlags(flags: ImageRequestFlags, prompt: string | undefined): void {
  if (flags.batch !== undefined) {
    if (prompt !== undefined) throw new UsageError("--batch reads the prompts from its lines; drop the PROMPT argument");
    if (flags.output === "-") throw new UsageError("--batch writes files into the -o directory; -o - is not possible");
    return;
  }
  if (prompt === undefined) throw new UsageError("missing PROMPT (or pass --batch FILE)");
  if (flags.output === "-" && flags.json) throw new UsageError("--json and -o - both want stdout; choose one");
  if (flags.output === "-" && flags.n !== undefined && flags.n > 1) throw new UsageError("-o - writes one picture; drop --n or pass -o FILE");
}

/**
 * The request's output_format: the format asked for, else what the target file's extension names
 * (-o cat.png asks for png); refused when both are given and disagree.
 */
export function outputFormatFor(format: string | undefined, target: string | undefined, names = { format: "--format", target: "-o" }): string | undefined {
  const targetFormat = target !== undefined && target !== "-" ? formatOfTarget(target) : undefined;
  if (format !== undefined && targetFormat !== undefined && targetFormat !== normalizedFormat(format)) {
    throw new UsageError(`${names.target} ${target} names ${targetFormat} but ${names.format} is ${format}; make them agree`);
  }
  return format ?? targetFormat;
}

/** The body's generation parameters from the flags (the prompt and pictures are added by the caller). */
export function imageParameters(flags: ImageRequestFlags, outputFormat: string | undefined): Record<string, unknown> {
  const optional: Array<[string, string | number | undefined]> = [
    ["model", flags.model],
    ["n", flags.n],
    ["aspect_ratio", flags["aspect-ratio"]],
    ["output_format", outputFormat],
    ["resolution", flags.resolution],
    ["size", flags.size],
    ["quality", flags.quality],
    ["background", flags.background],
    ["output_compression", flags.compression],
    ["seed", flags.seed],
    ["negative_prompt", flags["negative-prompt"]],
    ["cfg_scale", flags["cfg-scale"]],
    ["style_preset", flags["style-preset"]],
    ["project_id", flags.project],
    ["parent_asset_id", flags.parent],
  ];
  const body: Record<string, unknown> = {};
  for (const [name, value] of optional) if (value !== undefined) body[name] = value;
  return body;
}

/** A result with no pictures is a failure: the model's refusal, or nothing at all. */
export function emptyResultError(result: ImageResultBody): CliError | undefined {
  if (result.data.length > 0) return undefined;
  return new CliError(result.refusal ? `the model declined to draw: ${result.refusal}` : "the gateway returned no pictures");
}

/** One result: the API body with --json, the bytes on stdout with -o -, else files (see image-files.ts). */
export async function saveImageResult(result: ImageResultBody, output: string | undefined, json: boolean): Promise<void> {
  if (json) {
    printJson(result);
    if (output === undefined) return;
  }
  const empty = emptyResultError(result);
  if (empty) throw empty;
  if (output === "-") {
    if (result.data.length > 1) throw new CliError(`-o - writes one picture but the gateway returned ${result.data.length}`);
    await writeBytes(Buffer.from(result.data[0]!.b64_json, "base64"));
    return;
  }
  const targets = pictureTargets(result.data, output);
  for (const [index, picture] of result.data.entries()) {
    const bytes = Buffer.from(picture.b64_json, "base64");
    const target = targets[index]!;
    await writeOutputFile(target, bytes);
    note(`saved ${target.path} (${picture.media_type}, ${humanBytes(bytes.length)}${picture.asset_id ? `, asset ${picture.asset_id}` : ""})`);
  }
}

function normalizedFormat(format: string): string {
  const lower = format.toLowerCase();
  return lower === "jpg" ? "jpeg" : lower;
}

function writeBytes(bytes: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    process.stdout.write(bytes, (error) => (error ? reject(error) : resolve()));
  });
}
