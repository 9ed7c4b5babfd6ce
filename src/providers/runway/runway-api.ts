// The parts of Runway's bodies gw reads (https://docs.dev.runwayml.com/api/), as lenient schemas: every field may be
// missing or of another type, and reads as absent then.
import { z } from "zod";
import { anyText, lenient, lenientList } from "../upstream-schema.js";

/** Where Runway's API is: the origin, every path under /v1. */
export const RUNWAY_BASE_URL = "https://api.dev.runwayml.com";

/** The API version every request names (`X-Runway-Version`, required). */
export const RUNWAY_API_VERSION = "2024-11-06";

/** An error body (https://docs.dev.runwayml.com/errors/errors): {error: "<human-readable>"}, a validation failure with `issues` beside it. */
export const RunwayErrorBody = z.object({
  error: lenient(z.string().min(1)),
  issues: lenientList(z.object({ path: lenient(z.array(z.unknown())), message: anyText })),
});

/** A task (POST's and GET /v1/tasks/{id}'s answer). */
export const RunwayTask = z.object({
  id: lenient(z.string().min(1)),
  status: anyText,
  progress: lenient(z.number()),
  output: lenient(z.array(z.unknown())),
  failure: anyText,
  failureCode: anyText,
});
export type RunwayTask = z.output<typeof RunwayTask>;
