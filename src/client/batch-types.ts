// Shapes of the Batch API's answers, and of the Files API's file object an input upload answers,
// derived from the server's own types (type imports only: erased, so the client never loads the
// gateway; docs/decisions.md §1).
import type { BatchObject } from "../gateway/batches/batch-object.js";
import type { BatchCreateRequest as ServerBatchCreateRequest } from "../gateway/batches/batch-request.js";
import type { BatchList } from "../gateway/batches/batch-service.js";
import type { OpenAIFileObject } from "../gateway/storage/openai-files.js";

/** A batch as OpenAI's batch object shows it: POST /v1/batches, GET /v1/batches/{id}, the cancel. */
export type BatchBody = BatchObject;

export type BatchStatus = BatchObject["status"];

/** GET /v1/batches: a page of batches, newest first. */
export type BatchListBody = BatchList;

/** POST /v1/batches. */
export type BatchCreateRequest = ServerBatchCreateRequest;

/** POST /v1/files (and GET /v1/files/{id}): OpenAI's file object. */
export type FileObjectBody = OpenAIFileObject;

/** The statuses a batch never leaves: its output and error files are written by then. */
export const ENDED_BATCH_STATUSES: ReadonlySet<BatchStatus> = new Set<BatchStatus>(["completed", "failed", "expired", "cancelled"]);

export function isEndedBatch(batch: Pick<BatchBody, "status">): boolean {
  return ENDED_BATCH_STATUSES.has(batch.status);
}
