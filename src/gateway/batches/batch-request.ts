// POST /v1/batches' body (OpenAI's BatchCreateParams), and the list's query: checked here, each
// refusal a 400 naming the field.
import { z } from "zod";
import { InvalidRequestError } from "../errors.js";
import { parseWithSchema } from "../request-schema.js";
import { BATCH_ENDPOINT_NAMES } from "./batch-endpoints.js";

const metadataSchema = z.record(z.string().max(64), z.string().max(512)).refine((metadata) => Object.keys(metadata).length <= 16, "at most 16 keys");

const batchCreateSchema = z
  .object({
    input_file_id: z.string().min(1),
    endpoint: z.enum(BATCH_ENDPOINT_NAMES as [string, ...string[]]),
    completion_window: z.literal("24h"),
    metadata: metadataSchema.nullable().optional(),
  })
  .strict();

export type BatchCreateRequest = z.infer<typeof batchCreateSchema>;

export function parseBatchCreate(body: Record<string, unknown>): BatchCreateRequest {
  return parseWithSchema(batchCreateSchema, body);
}

export interface BatchListQuery {
  after?: string;
  limit: number;
}

export function parseBatchListQuery(query: URLSearchParams): BatchListQuery {
  const limitText = query.get("limit") ?? "20";
  const limit = Number(limitText);
  if (!/^\d+$/.test(limitText) || limit < 1 || limit > 100) throw new InvalidRequestError("Invalid 'limit': a whole number from 1 to 100.", { param: "limit" });
  const after = query.get("after") ?? undefined;
  return after === undefined ? { limit } : { after, limit };
}
