// The video tools of the MCP server: `video_generate` starts a job through the HTTP endpoint's
// parser and service (allowlist, catalog checks, credits held) and returns it queued;
// `video_status` returns the job, with the clip's signed link once it succeeded. A client polls
// video_status every few seconds, as over HTTP.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { parseVideoGeneration } from "../../gateway/video/video-request.js";
import type { VideoJobBody } from "../../gateway/video/video-service.js";
import type { McpToolContext } from "./mcp-context.js";
import { jsonToolResult } from "./tool-results.js";

const jobSchema = {
  id: z.string(),
  status: z.enum(["QUEUED", "SUBMITTED", "SUCCEEDED", "FAILED", "CANCELLED"]),
  model: z.string(),
  queuedAt: z.string(),
  startedAt: z.string().optional(),
  finishedAt: z.string().optional(),
  resultUrl: z.string().optional().describe("a signed link to the clip (video/mp4), valid until resultExpiresAt"),
  resultExpiresAt: z.string().optional(),
  error: z.string().optional(),
  progress: z.number().optional(),
};

function jobResult(job: VideoJobBody) {
  const summary = job.resultUrl ? `${job.status}: ${job.resultUrl}` : job.error ? `${job.status}: ${job.error}` : `${job.status} (job ${job.id})`;
  return jsonToolResult({ ...job }, summary);
}

export function registerVideoTools(server: McpServer, context: McpToolContext, linkBaseUrl: string): void {
  server.registerTool(
    "video_generate",
    {
      title: "Start a video job",
      description:
        "Queue a video clip from a prompt (and a first-frame photo where the model takes one). Returns the job at once; call video_status with its id every few seconds until it is SUCCEEDED, FAILED or CANCELLED. Billed per second of finished clip, only on success.",
      inputSchema: {
        prompt: z.string().describe("what happens in the clip"),
        model: z.string().optional().describe("a video model from GET /v1/public/video-models"),
        image_url: z.string().optional().describe("the first frame: an http(s) URL or a data: URL"),
        duration_seconds: z.number().int().optional(),
        resolution: z.string().optional().describe("a tier the model offers, such as 720p"),
        ratio: z.string().optional().describe("16:9, 9:16 ... as the model offers"),
        project_id: z.string().optional(),
      },
      outputSchema: jobSchema,
    },
    (args) => context.run(async (call) => jobResult(await context.gateway.video.submit(parseVideoGeneration(args), call))),
  );

  server.registerTool(
    "video_status",
    {
      title: "A video job's status",
      description:
        "The job: its status, times, and once SUCCEEDED a signed link to the clip (resultUrl, valid until resultExpiresAt); error on FAILED or CANCELLED.",
      inputSchema: { id: z.string().describe("the job id video_generate returned") },
      outputSchema: jobSchema,
    },
    ({ id }) => context.run(async (call) => jobResult(await context.gateway.video.get(call.caller.agent.id, id, linkBaseUrl))),
  );
}
