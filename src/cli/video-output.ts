// How `gw video status|cancel|ls` and `gw catalog video` show jobs and models to people: a job as
// labelled lines (times in UTC with how long ago, the clip's link and when it expires), the job
// table cut to the terminal's width (the id is never cut: it is what the other commands take),
// the catalog with its defaults marked and prices in dollars.
import type { VideoCatalogModel, VideoJobBody } from "../client/video-types.js";
import { usd } from "./audio-output.js";

/** "2026-01-02T15:04:05.123Z" -> "2026-01-02 15:04:05 UTC"; anything unparsable as given. */
export function utcTime(iso: string): string {
  const time = Date.parse(iso);
  if (Number.isNaN(time)) return iso;
  return `${new Date(time).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** A length of time: 7 -> "7s", 125 -> "2m 5s", 7260 -> "2h 1m", 90000 -> "1d 1h". */
export function span(seconds: number): string {
  const whole = Math.max(0, Math.round(seconds));
  if (whole < 60) return `${whole}s`;
  const minutes = Math.floor(whole / 60);
  if (minutes < 60) return `${minutes}m${whole % 60 ? ` ${whole % 60}s` : ""}`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours}h${minutes % 60 ? ` ${minutes % 60}m` : ""}`;
  const days = Math.floor(hours / 24);
  return `${days}d${hours % 24 ? ` ${hours % 24}h` : ""}`;
}

/** Elapsed time as a clock: 7 -> "0:07", 754 -> "12:34", 3723 -> "1:02:03". */
export function clock(seconds: number): string {
  const whole = Math.max(0, Math.floor(seconds));
  const two = (value: number) => String(value).padStart(2, "0");
  const hours = Math.floor(whole / 3600);
  const minutes = Math.floor((whole % 3600) / 60);
  return hours > 0 ? `${hours}:${two(minutes)}:${two(whole % 60)}` : `${minutes}:${two(whole % 60)}`;
}

/** How far `iso` is from now, in words: "just now", "3m ago", "in 23h 59m". */
export function relative(iso: string, now = Date.now()): string {
  const time = Date.parse(iso);
  if (Number.isNaN(time)) return "";
  const seconds = (now - time) / 1000;
  if (Math.abs(seconds) < 1) return "just now";
  const largest = span(Math.abs(seconds)).split(" ")[0]!;
  return seconds > 0 ? `${largest} ago` : `in ${largest}`;
}

/** Seconds from one ISO time to another, when both parse. */
function secondsBetween(from: string | undefined, to: string | undefined): number | undefined {
  if (from === undefined || to === undefined) return undefined;
  const seconds = (Date.parse(to) - Date.parse(from)) / 1000;
  return Number.isNaN(seconds) ? undefined : seconds;
}

/** SUBMITTED with the vendor's progress: "SUBMITTED 42%". */
export function statusText(job: Pick<VideoJobBody, "status" | "progress">): string {
  return job.progress === undefined ? job.status : `${job.status} ${Math.floor(job.progress * 100)}%`;
}

/** `gw video status` and `gw video cancel`: one labelled line per field the job has. */
export function jobLines(job: VideoJobBody, now = Date.now()): string[] {
  const lines: Array<[string, string]> = [
    ["id", job.id],
    ["status", statusText(job)],
    ["model", job.model],
    ["queued", `${utcTime(job.queuedAt)} (${relative(job.queuedAt, now)})`],
  ];
  if (job.startedAt) {
    const waited = secondsBetween(job.queuedAt, job.startedAt);
    lines.push(["started", `${utcTime(job.startedAt)}${waited === undefined ? "" : ` (after ${span(waited)} in the queue)`}`]);
  }
  if (job.finishedAt) {
    const took = secondsBetween(job.queuedAt, job.finishedAt);
    lines.push(["finished", `${utcTime(job.finishedAt)}${took === undefined ? "" : ` (${span(took)} after it was queued)`}`]);
  }
  if (job.resultUrl) lines.push(["clip", job.resultUrl]);
  if (job.resultExpiresAt) {
    const expired = Date.parse(job.resultExpiresAt) <= now;
    lines.push([
      "expires",
      `${utcTime(job.resultExpiresAt)} (${expired ? `expired ${relative(job.resultExpiresAt, now)}` : relative(job.resultExpiresAt, now)})`,
    ]);
  }
  if (job.error) lines.push(["error", job.error]);
  return lines.map(([label, value]) => `${label.padEnd(9)} ${value}`);
}

export const JOB_TABLE_HEADERS = ["ID", "STATUS", "MODEL", "QUEUED", "FINISHED"];

/** `gw video list`: a row per job, times as how long ago. */
export function jobRows(jobs: VideoJobBody[], now = Date.now()): string[][] {
  return jobs.map((job) => [job.id, statusText(job), job.model, relative(job.queuedAt, now), job.finishedAt ? relative(job.finishedAt, now) : ""]);
}

export const CATALOG_HEADERS = ["ID", "PHOTO", "SECONDS", "RESOLUTIONS", "RATIOS", "PER SECOND"];

/** `gw catalog video`: a row per model; `*` marks the defaults. */
export function catalogRows(models: VideoCatalogModel[]): string[][] {
  return models.map((model) => {
    const { duration, resolutions, ratios, defaultResolution, defaultRatio, referenceImage } = model.constraints;
    return [
      model.id,
      referenceImage,
      durations(duration),
      resolutions.map((resolution) => marked(resolution, defaultResolution)).join(","),
      ratios.map((ratio) => marked(ratio, defaultRatio)).join(","),
      pricePerSecond(model.pricing.perSecond, resolutions),
    ];
  });
}

/** "1-30 (5*)" for a range, "4*,8,12" for a list of lengths. */
function durations(duration: VideoCatalogModel["constraints"]["duration"]): string {
  if (duration.values) return duration.values.map((value) => marked(String(value), String(duration.default))).join(",");
  return `${duration.min}-${duration.max} (${duration.default}*)`;
}

function marked(value: string, chosen: string): string {
  return value === chosen ? `${value}*` : value;
}

/** One price when every resolution costs the same ("free", "$0.05"), else each: "720p $0.30, 1024p $0.50". */
export function pricePerSecond(perSecond: Record<string, number>, resolutions: string[]): string {
  const prices = resolutions.map((resolution) => perSecond[resolution] ?? 0);
  if (prices.every((price) => price === prices[0])) return usd(prices[0] ?? 0);
  return resolutions.map((resolution, index) => `${resolution} ${usd(prices[index]!)}`).join(", ");
}
