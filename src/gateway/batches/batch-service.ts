// The Batch API without HTTP (docs/decisions.md §23): create a batch from one of the agent's
// files (every line checked first; a file with problems fails the batch at once, costing
// nothing), read and list the agent's batches, cancel one. The lines are run by the runner
// (batch-runner.ts), on whichever instance claims the batch.
import type { BatchRecord, BatchRecords } from "../../store/batch-records.js";
import { isBatchId, newBatchId } from "../../store/batch-records.js";
import type { Caller } from "../auth/key-authenticator.js";
import { assertKeyAllowsModel } from "../auth/key-limits.js";
import type { CallerPlan } from "../auth/plan-lookup.js";
import { BatchConflictError, BatchNotFoundError, InvalidRequestError } from "../errors.js";
import { requestTags } from "../request-tags.js";
import { resolveRoutes } from "../routing/route-resolver.js";
import type { ServiceContext } from "../service-context.js";
import { BATCH_ENDPOINTS, type BatchServices, type ParsedLine } from "./batch-endpoints.js";
import { type BatchInputLine, checkInput } from "./batch-input.js";
import { type BatchObject, toBatchObject } from "./batch-object.js";
import type { BatchCreateRequest, BatchListQuery } from "./batch-request.js";

/** How long a batch may take, from its creation (OpenAI's only completion window). */
export const COMPLETION_WINDOW_SECONDS = 24 * 3600;

export interface BatchList {
  object: "list";
  data: BatchObject[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

export class BatchService {
  constructor(
    private readonly shared: ServiceContext,
    private readonly batches: BatchRecords,
    private readonly services: BatchServices,
  ) {}

  /**
   * A new batch: its input file checked line by line (JSON, custom_id unique, method, url, the
   * body as its endpoint reads it, a model the key may call and the plan reaches). With problems
   * it is created `failed` with them listed; else `in_progress`, for the runner. Its tags (the
   * request's header's and its metadata's) go on every line's usage row.
   */
  async create(request: BatchCreateRequest, caller: Caller, plan: CallerPlan, headerTags?: readonly string[]): Promise<BatchObject> {
    const { storage } = this.shared;
    const file = await storage.findFile(caller.agent.id, request.input_file_id);
    if (!file)
      throw new InvalidRequestError(`No file ${request.input_file_id} for this key's agent: upload the input with POST /v1/files first.`, {
        param: "input_file_id",
        code: "file_not_found",
      });
    const config = this.shared.config();
    const opened = await storage.openFile(caller.agent.id, file.id);
    const check = await checkInput(opened.body, request.endpoint, (line) => this.parseLine(line, request.endpoint, caller, plan), config.batch.maxLines);
    const now = Math.floor(this.shared.now() / 1000);
    const batch: BatchRecord = {
      id: newBatchId(this.shared.now()),
      agentId: caller.agent.id,
      keyId: caller.key.id,
      keyPrefix: caller.key.prefix,
      endpoint: request.endpoint,
      inputFileId: file.id,
      completionWindow: request.completion_window,
      metadata: request.metadata ?? null,
      status: check.errorCount > 0 ? "failed" : "in_progress",
      createdAt: now,
      expiresAt: now + COMPLETION_WINDOW_SECONDS,
      requestCounts: { total: check.total, completed: 0, failed: 0 },
      concurrency: config.batch.concurrency,
    };
    const tags = requestTags(headerTags, request.metadata);
    if (tags) batch.tags = tags;
    if (check.errorCount > 0) {
      batch.errors = check.errors;
      batch.failedAt = now;
    } else {
      batch.inProgressAt = now;
    }
    await this.batches.create(batch);
    return toBatchObject(batch);
  }

  /**
   * A line's body as its endpoint parses it, for this key and plan: the live endpoint's 400 for a
   * bad body, 403 for a model the key may not call or the plan does not reach, 404 for one no
   * route serves.
   */
  parseLine(line: BatchInputLine, endpoint: string, caller: Caller, plan: CallerPlan): ParsedLine {
    const handler = BATCH_ENDPOINTS[endpoint];
    if (!handler) throw new InvalidRequestError(`Batches do not run ${endpoint}.`, { param: "endpoint" });
    const parsed = handler.parse(line.body, this.services);
    assertKeyAllowsModel(caller.key, parsed.model);
    resolveRoutes(this.shared.config(), parsed.model, { planName: caller.agent.plan, plan: plan.limits, latency: this.shared.latency });
    return parsed;
  }

  async retrieve(agentId: string, id: string): Promise<BatchObject> {
    return toBatchObject(await this.own(agentId, id));
  }

  async list(agentId: string, query: BatchListQuery): Promise<BatchList> {
    const { batches, hasMore } = await this.batches.list(agentId, query);
    const data = batches.map(toBatchObject);
    return { object: "list", data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore };
  }

  /**
   * Stop a batch: no new line starts (the runner sees `cancelling` before each), the lines in
   * flight finish, and the batch ends `cancelled` with the answers so far in its output file.
   * A batch already cancelling or cancelled is answered as it is; one that ended otherwise is 409.
   */
  async cancel(agentId: string, id: string): Promise<BatchObject> {
    const batch = await this.own(agentId, id);
    if (batch.status === "cancelling" || batch.status === "cancelled") return toBatchObject(batch);
    const changed = await this.batches.update(id, { status: "cancelling", cancellingAt: Math.floor(this.shared.now() / 1000) }, undefined, (current) => {
      if (current.status !== "validating" && current.status !== "in_progress")
        throw new BatchConflictError(`This batch has already ended (${current.status}); there is nothing to cancel.`);
    });
    return toBatchObject(changed);
  }

  private async own(agentId: string, id: string): Promise<BatchRecord> {
    const batch = isBatchId(id) ? await this.batches.get(id) : undefined;
    if (!batch || batch.agentId !== agentId) throw new BatchNotFoundError(id);
    return batch;
  }
}
