// A batch as OpenAI's batch object shows it (the official SDK's `Batch`): the record's fields in
// snake_case, timestamps in unix seconds, absent ones null.
import type { BatchRecord } from "../../store/batch-records.js";

export interface BatchObject {
  id: string;
  object: "batch";
  endpoint: string;
  errors: { object: "list"; data: Array<{ code: string; message: string; param: string | null; line: number | null }> } | null;
  input_file_id: string;
  completion_window: string;
  status: BatchRecord["status"];
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: number;
  in_progress_at: number | null;
  expires_at: number;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  request_counts: { total: number; completed: number; failed: number };
  metadata: Record<string, string> | null;
}

export function toBatchObject(batch: BatchRecord): BatchObject {
  return {
    id: batch.id,
    object: "batch",
    endpoint: batch.endpoint,
    errors: batch.errors ? { object: "list", data: batch.errors } : null,
    input_file_id: batch.inputFileId,
    completion_window: batch.completionWindow,
    status: batch.status,
    output_file_id: batch.outputFileId ?? null,
    error_file_id: batch.errorFileId ?? null,
    created_at: batch.createdAt,
    in_progress_at: batch.inProgressAt ?? null,
    expires_at: batch.expiresAt,
    finalizing_at: batch.finalizingAt ?? null,
    completed_at: batch.completedAt ?? null,
    failed_at: batch.failedAt ?? null,
    expired_at: batch.expiredAt ?? null,
    cancelling_at: batch.cancellingAt ?? null,
    cancelled_at: batch.cancelledAt ?? null,
    request_counts: { ...batch.requestCounts },
    metadata: batch.metadata,
  };
}
