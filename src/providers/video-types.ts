// The video capability: asynchronous generation jobs, vendor-neutral. A provider submits a task,
// reports its state when polled, hands over the finished clip as a stream, and cancels where the
// vendor allows. Validation against the catalog, the job record, scheduling, storage and billing
// are the gateway's (gateway/video).

export interface VideoRequest {
  /** The vendor's model id (the catalog entry's `model`). */
  model: string;
  prompt: string;
  /** The first frame, when the caller sent one: bytes already fetched and checked by the gateway. */
  image?: { bytes: Buffer; mediaType: string; width: number; height: number };
  durationSeconds: number;
  /** The catalog's resolution tier (`720p`, `1080p` ...). */
  resolution: string;
  /** `W:H` as the caller asked (`16:9`). */
  ratio: string;
  /** The pixel size the catalog gives for that resolution and ratio. */
  width: number;
  height: number;
}

/**
 * Where a finished clip is: a vendor URL the gateway downloads through its SSRF-safe fetcher, or
 * the provider's own way to stream it (its own endpoint, or a link on the provider's own origin,
 * `url`, which the provider fetches itself: that origin already gets its key).
 */
export type VideoOutput = { kind: "url"; url: string } | { kind: "provider"; url?: string };

export type VideoTaskState =
  | { state: "queued" | "running"; progress?: number; retryAfterMs?: number }
  | { state: "succeeded"; output: VideoOutput }
  | { state: "failed"; error: string }
  | { state: "cancelled"; error?: string }
  /** The vendor (or, after a restart, the local engine) no longer knows the task. */
  | { state: "lost" };

export interface VideoCapability {
  /** Start a task; resolves with the vendor's task id once the vendor accepted it. */
  submit(request: VideoRequest, options: { signal: AbortSignal }): Promise<{ taskId: string }>;
  poll(taskId: string, options: { signal: AbortSignal }): Promise<VideoTaskState>;
  /** The finished clip's bytes as a stream (output kind `provider`, with its `url` when it named one; `url` outputs are fetched by the gateway). */
  download?(taskId: string, options: { signal: AbortSignal; maxBytes: number; url?: string }): Promise<{ body: NodeJS.ReadableStream; contentType: string }>;
  /** Cancel a task that has not finished, where the vendor allows it. */
  cancel?(taskId: string, options: { signal: AbortSignal }): Promise<void>;
  /** A lost task is submitted again (a local engine's tasks die with the process); vendors' fail. */
  resubmitsLostTasks?: boolean;
}
