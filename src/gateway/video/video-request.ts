// POST /v1/video/generations, checked before anything is fetched, reserved or queued: the shape
// here; the values against the chosen model's catalog entry (duration range, resolution, ratio,
// reference photo accepted or required) in checkAgainstModel, each refusal naming the parameter
// and what the model takes.
import { z } from "zod";
import type { VideoModelEntry } from "../../config/video-catalog-schema.js";
import { InvalidRequestError } from "../errors.js";
import { parseWithSchema } from "../request-schema.js";

export const videoGenerationSchema = z
  .object({
    prompt: z.string().trim().min(1, "the prompt is empty").max(4000),
    model: z.string().min(1).optional(),
    image_url: z.string().min(1).optional(),
    duration_seconds: z.number().int().positive().optional(),
    resolution: z.string().min(1).max(32).optional(),
    ratio: z.string().min(1).max(16).optional(),
    project_id: z.string().min(1).optional(),
  })
  .strict();

export type VideoGenerationBody = z.output<typeof videoGenerationSchema>;

export function parseVideoGeneration(json: Record<string, unknown>): VideoGenerationBody {
  return parseWithSchema(videoGenerationSchema, json);
}

export interface VideoPlan {
  durationSeconds: number;
  resolution: string;
  ratio: string;
  width: number;
  height: number;
}

export function checkAgainstModel(model: VideoModelEntry, body: VideoGenerationBody): VideoPlan {
  const { duration, resolutions, referenceImage, maxPromptLength } = model.constraints;
  if (maxPromptLength !== undefined && body.prompt.length > maxPromptLength) {
    throw new InvalidRequestError(`${model.id} takes prompts of at most ${maxPromptLength} characters; this one has ${body.prompt.length}.`, {
      param: "prompt",
    });
  }
  if (referenceImage === "required" && body.image_url === undefined) {
    throw new InvalidRequestError(`${model.id} makes a clip from a reference photo: send image_url (an http(s) URL or a data: URL).`, { param: "image_url" });
  }
  if (referenceImage === "none" && body.image_url !== undefined) {
    throw new InvalidRequestError(`${model.id} takes no reference photo; leave out image_url.`, { param: "image_url" });
  }
  const durationSeconds = body.duration_seconds ?? duration.default;
  const durationOk = duration.values ? duration.values.includes(durationSeconds) : durationSeconds >= duration.min && durationSeconds <= duration.max;
  if (!durationOk) {
    const offered = duration.values ? duration.values.join(", ") : `${duration.min} to ${duration.max}`;
    throw new InvalidRequestError(`${model.id} makes clips of ${offered} seconds; ${durationSeconds} was asked.`, { param: "duration_seconds" });
  }
  // Own keys only: a caller's `__proto__` or `constructor` is a name the model does not offer.
  const resolution = body.resolution ?? model.constraints.defaultResolution;
  const sizes = Object.hasOwn(resolutions, resolution) ? resolutions[resolution] : undefined;
  if (!sizes) {
    throw new InvalidRequestError(`${model.id} offers the resolutions ${Object.keys(resolutions).join(", ")}; ${resolution} was asked.`, {
      param: "resolution",
    });
  }
  const ratio = body.ratio ?? (Object.hasOwn(sizes, model.constraints.defaultRatio) ? model.constraints.defaultRatio : Object.keys(sizes)[0]!);
  const size = Object.hasOwn(sizes, ratio) ? sizes[ratio] : undefined;
  if (!size)
    throw new InvalidRequestError(`${model.id} at ${resolution} offers the ratios ${Object.keys(sizes).join(", ")}; ${ratio} was asked.`, { param: "ratio" });
  const [width, height] = size.split("x").map(Number) as [number, number];
  return { durationSeconds, resolution, ratio, width, height };
}

/** The estimate held while the job runs: the asked length at the resolution's price. */
export function estimateVideoCredits(model: VideoModelEntry, plan: VideoPlan): number {
  return plan.durationSeconds * (model.pricing.perSecond[plan.resolution] ?? 0);
}

/** Billed on success: whole seconds of the finished clip (rounded to the nearest, at least one). */
export function billedVideoSeconds(durationSeconds: number): number {
  return Math.max(1, Math.round(durationSeconds));
}
