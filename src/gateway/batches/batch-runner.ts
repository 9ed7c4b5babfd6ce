// What runs batches (docs/decisions.md §23): every `batch.tickSeconds` (a repeating tick, as
// the video poller's) the runner takes each batch that has not ended, claims it (a lease renewed
// while it works, as the video poller does: one instance works a batch at a time, and another
// takes it over once the lease of one that died runs out) and runs its lines from the input file,
// skipping those already answered.
//
// Each line is a call like a live one, made with the batch's key: the same parser, key patterns
// and routes, the response cache, paced to the key's rate limit (it waits; it does not fail),
// retries and fallback, and its own reservation and usage row, named in advance (`<batch>:<line>`)
// and priced at the batch rate. Its answer (or error) is recorded once, in one step with the
// batch's counts. After a restart, the few lines past the answered ones that could have been in
// flight are looked up in the usage log: one billed but never recorded is not run again, and goes
// to the error file saying its answer was lost. At the end (all lines answered, a cancel, or the
// 24-hour window) the answers are written to the output file and the errors to the error file,
// both JSONL in the agent's storage, in the input's order.
import { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import pLimit, { type LimitFunction } from "p-limit";
import { type BatchLineResult, type BatchRecord, type BatchRecords, ENDED_BATCH_STATUSES, type JobClaim } from "../../store/batch-records.js";
import type { Admission } from "../../store/rate-buckets.js";
import { StateStoreFailure } from "../../store/state-failure.js";
import { periodOf, type UsageRow } from "../../store/usage-log.js";
import type { Caller } from "../auth/key-authenticator.js";
import type { CallerPlan } from "../auth/plan-lookup.js";
import { withCreditsInUsage } from "../billing/credits-in-usage.js";
import type { ResponseCache } from "../cache/response-cache.js";
import { GatewayError, InternalError, InvalidApiKeyError, RateLimitExceededError, UpstreamPassthroughError } from "../errors.js";
import { RepeatingTick } from "../repeating-tick.js";
import { requestTags } from "../request-tags.js";
import type { ServiceContext } from "../service-context.js";
import type { OpenAIFiles } from "../storage/openai-files.js";
import type { BatchLineBilling } from "../upstream-calls/chat-metering.js";
import { BATCH_ENDPOINTS } from "./batch-endpoints.js";
import { type BatchInputLine, fileLines, isInputError, readLine } from "./batch-input.js";
import type { BatchService } from "./batch-service.js";

/** How long a claim on a batch lasts unrenewed: another instance takes the batch of one that died after this. */
const CLAIM_LEASE_MS = 30_000;
const CLAIM_RENEW_MS = 10_000;
/** How often a running batch is read again for a cancel. */
const STATUS_CHECK_MS = 250;

export interface BatchRunnerParts {
  shared: ServiceContext;
  batches: BatchRecords;
  service: BatchService;
  cache: ResponseCache;
  files: OpenAIFiles;
  /** The key that created a batch, with its agent; undefined once it is revoked, expired or gone. */
  callerOf(keyId: string): Caller | undefined;
  planOf(caller: Caller): CallerPlan;
  /** Count one request against the key's rate limit (429 when over). */
  takeRateLimit(caller: Caller, plan: CallerPlan): Promise<Admission>;
}

type Ending = "completed" | "cancelled" | "expired";

export class BatchRunner {
  private readonly schedule = new RepeatingTick();
  private ticking = false;
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Lines of one agent's batches run at once on this instance. */
  private readonly perAgent = new Map<string, LimitFunction>();
  private readonly stopping = new AbortController();

  constructor(private readonly parts: BatchRunnerParts) {}

  /** Run the schedule (the server does; tests may call tick() themselves). */
  start(): void {
    if (this.schedule.running) return;
    const seconds = this.parts.shared.config().batch.tickSeconds;
    this.schedule.start(
      seconds,
      () => this.tick(),
      (error) => this.parts.shared.warn(`batches: a tick failed: ${messageOf(error)}`),
    );
    void this.tick();
  }

  /** Stop scheduling; the lines in flight finish (aborted after a grace period), and the batches are taken up again at the next start. */
  async stop(graceMs = 5_000): Promise<void> {
    this.schedule.stop();
    const timer = setTimeout(() => this.stopping.abort(new Error("the server is stopping")), graceMs);
    timer.unref();
    await Promise.allSettled([...this.inFlight.values()]);
    clearTimeout(timer);
  }

  /** One pass over the batches that have not ended; the work it starts runs on after it returns. */
  async tick(): Promise<void> {
    if (this.ticking || this.stopping.signal.aborted) return;
    this.ticking = true;
    try {
      for (const batch of await this.parts.batches.active()) if (!this.inFlight.has(batch.id)) this.launch(batch.id);
    } catch (error) {
      this.parts.shared.warn(`batches: looking for work failed: ${messageOf(error)}`);
    } finally {
      this.ticking = false;
    }
  }

  /** Resolves when nothing is in flight (tests). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight.values()]);
  }

  private launch(id: string): void {
    const running = this.claimed(id)
      .catch((error: unknown) => this.parts.shared.warn(`batch ${id}: stopped working it: ${messageOf(error)}`))
      .finally(() => this.inFlight.delete(id));
    this.inFlight.set(id, running);
  }

  /** Claim the batch (skip it when another instance holds it), renew the claim while working, release it after. */
  private async claimed(id: string): Promise<void> {
    const claim = await this.parts.batches.claim(id, CLAIM_LEASE_MS);
    if (!claim) return;
    const lost = new AbortController();
    const renewal = setInterval(() => {
      claim.renew().then(
        (held) => held || lost.abort(new Error("the claim on the batch ran out")),
        (error: unknown) => lost.abort(error),
      );
    }, CLAIM_RENEW_MS);
    renewal.unref();
    try {
      await this.work(id, claim, AbortSignal.any([lost.signal, this.stopping.signal]));
    } finally {
      clearInterval(renewal);
      await claim.release().catch(() => undefined);
    }
  }

  private async work(id: string, claim: JobClaim, signal: AbortSignal): Promise<void> {
    const batch = await this.parts.batches.get(id);
    if (!batch || ENDED_BATCH_STATUSES.has(batch.status)) return;
    // A batch found `finalizing` was ended by a runner that stopped before its files were written: cancelled if it was asked to be.
    const cancelled = batch.status === "cancelling" || batch.cancellingAt !== undefined;
    let ending: Ending | "stopped" = cancelled ? "cancelled" : this.expired(batch) ? "expired" : "completed";
    if (batch.status === "in_progress" && ending === "completed") ending = await this.runLines(batch, claim, signal);
    if (ending === "stopped" || signal.aborted) return;
    await this.finish(id, ending, claim);
  }

  /** Run every line not answered yet; how the run ended: all answered, cancelled, past the window, or stopped (claim lost, server stopping). */
  private async runLines(batch: BatchRecord, claim: JobClaim, signal: AbortSignal): Promise<Ending | "stopped"> {
    const { shared, batches } = this.parts;
    const config = shared.config();
    const answered = new Set<number>();
    for await (const result of batches.results(batch.id)) answered.add(result.index);
    const concurrency = config.batch.concurrency;
    const lines = pLimit(concurrency);
    const agentLines = this.agentLimit(batch.agentId, config.batch.concurrencyPerAgent);
    // Lines that may have been in flight when the last runner stopped: the first few past the answered ones.
    let mayBeBilled = 2 * Math.max(batch.concurrency, concurrency);
    const periods = periodsSince(batch.createdAt * 1000, shared.now());
    const running = new Set<Promise<void>>();
    const stop = new StopCheck(() => this.stopReason(batch.id));
    let ending: Ending | "stopped" = "completed";
    const input = await shared.storage.openFile(batch.agentId, batch.inputFileId).catch(() => undefined);
    if (!input) return this.inputGone(batch, claim);
    for await (const { index, text } of fileLines(input.body)) {
      if (answered.has(index)) continue;
      const reason = signal.aborted ? "stopped" : await stop.reason();
      if (reason) {
        ending = reason;
        break;
      }
      const line = readLine(index, text, batch.endpoint);
      // Checked at creation; an input changed since cannot be, as stored files are never rewritten.
      if (isInputError(line)) continue;
      if (mayBeBilled > 0) {
        mayBeBilled -= 1;
        if (await shared.ledger.rowWritten(rowIdOf(batch.id, index), periods)) {
          await batches.addResult(batch.id, lostAnswer(batch, line), claim);
          continue;
        }
      }
      while (running.size >= concurrency) await Promise.race(running);
      const task = lines(() => agentLines(() => this.runLine(batch, line, claim, signal))).finally(() => running.delete(task));
      running.add(task);
    }
    const outcomes = await Promise.allSettled(running);
    const failure = outcomes.find((outcome) => outcome.status === "rejected");
    if (failure) throw failure.reason;
    if (signal.aborted) return "stopped";
    // A cancel (or the window's end) that came after the last line started still ends the batch so.
    return ending === "completed" ? ((await this.stopReason(batch.id)) ?? "completed") : ending;
  }

  /** One line: called like a live request with the batch's key, its answer or error recorded once. */
  private async runLine(batch: BatchRecord, line: BatchInputLine, claim: JobClaim, signal: AbortSignal): Promise<void> {
    const requestId = lineRequestId(batch.id, line.index);
    const { observer } = this.parts.shared;
    const started = performance.now();
    observer?.batchLineBegan?.(requestId);
    let status = 200;
    let body: unknown;
    // Looked up for each line: a key revoked or expired meanwhile runs no more of them, and a plan changed meanwhile applies.
    const caller = this.parts.callerOf(batch.keyId);
    try {
      if (!caller) throw new InvalidApiKeyError("The key that created this batch no longer works (revoked or expired): its remaining lines were not run.");
      body = await this.call(batch, line, caller, this.parts.planOf(caller), requestId, signal);
    } catch (error) {
      // A state store that failed, a claim lost or a server stopping: the line is not answered, and runs again later.
      if (error instanceof StateStoreFailure || signal.aborted) {
        observer?.batchLineEnded?.({ requestId, endpoint: batch.endpoint, status: 503, durationMs: performance.now() - started, keyPrefix: batch.keyPrefix });
        throw error;
      }
      ({ status, body } = this.errorAnswer(error, requestId));
    }
    const result: BatchLineResult = {
      index: line.index,
      ok: status < 300,
      line: JSON.stringify({ id: requestId, custom_id: line.customId, response: { status_code: status, request_id: requestId, body }, error: null }),
    };
    await this.parts.batches.addResult(batch.id, result, claim);
    observer?.batchLineEnded?.({
      requestId,
      endpoint: batch.endpoint,
      status,
      durationMs: performance.now() - started,
      agent: caller?.agent.name,
      keyPrefix: batch.keyPrefix,
    });
  }

  /** The line's answer: from the response cache when the key's lifetime covers it, else from its endpoint's service. */
  private async call(batch: BatchRecord, line: BatchInputLine, caller: Caller, plan: CallerPlan, requestId: string, signal: AbortSignal): Promise<unknown> {
    const { cache, service, shared } = this.parts;
    const parsed = service.parseLine(line, batch.endpoint, caller, plan);
    await this.paced(caller, plan, signal);
    const endpoint = BATCH_ENDPOINTS[batch.endpoint]?.usageEndpoint ?? batch.endpoint;
    const billing: BatchLineBilling = { id: batch.id, rowId: rowIdOf(batch.id, line.index), priceFactor: 1 - shared.config().billing.batchDiscount };
    const question = {
      endpoint,
      model: parsed.model,
      body: parsed.body,
      sampled: parsed.sampled,
      header: null,
      caller,
      plan: plan.limits,
      requestId,
      batch: billing,
      tags: requestTags(batch.tags, parsed.metadata),
    };
    const entry = cache.entryFor(question);
    const hit = entry && (await cache.hit(entry));
    if (hit?.kind === "json") return JSON.parse(hit.body) as unknown;
    // What the line was charged goes in its answer's usage (`gw_credits`), as a live answer's does.
    let credits = 0;
    const recorded = (row: UsageRow) => {
      credits += row.credits;
      entry?.recorded(row);
    };
    const context = { caller, plan: plan.limits, planName: plan.name, requestId, signal, endpoint, batch: billing, recorded, tags: question.tags };
    const answer = await parsed.run(context);
    withCreditsInUsage(answer, credits);
    if (entry) await cache.keep(entry, { kind: "json", body: JSON.stringify(answer) });
    return answer;
  }

  /** Wait until the key's rate limit admits one more request: a batch is paced, never failed, by it. */
  private async paced(caller: Caller, plan: CallerPlan, signal: AbortSignal): Promise<void> {
    for (;;) {
      try {
        await this.parts.takeRateLimit(caller, plan);
        return;
      } catch (error) {
        if (!(error instanceof RateLimitExceededError)) throw error;
        const seconds = Number(error.headers?.["retry-after"] ?? 1);
        await sleep(Math.max(1, seconds) * 1000, undefined, { signal });
      }
    }
  }

  /** The status and body a failed line is answered with: the live endpoint's error, as a client would have had it. */
  private errorAnswer(error: unknown, requestId: string): { status: number; body: unknown } {
    if (error instanceof UpstreamPassthroughError) return { status: error.status, body: parseJson(error.body) };
    if (error instanceof GatewayError) return { status: error.status, body: error.toBody() };
    this.parts.shared.warn(`batch line ${requestId} failed: ${messageOf(error)}`);
    return { status: 500, body: new InternalError("The gateway failed to handle this request.").toBody() };
  }

  /** Why the batch's lines should stop now (cancelled, past its window), read at most every STATUS_CHECK_MS. */
  private async stopReason(id: string): Promise<Ending | undefined> {
    const current = await this.parts.batches.get(id);
    if (!current || current.status === "cancelling" || ENDED_BATCH_STATUSES.has(current.status)) return "cancelled";
    return this.expired(current) ? "expired" : undefined;
  }

  private expired(batch: BatchRecord): boolean {
    return this.parts.shared.now() >= batch.expiresAt * 1000;
  }

  /** The input file was deleted while the batch ran: what was answered is kept, and the batch fails. */
  private async inputGone(batch: BatchRecord, claim: JobClaim): Promise<"stopped"> {
    const message = `The input file ${batch.inputFileId} was deleted before every line had run.`;
    const errors = [{ code: "file_not_found", message, param: "input_file_id", line: null }];
    await this.writeFiles(batch.id, claim, undefined);
    const now = Math.floor(this.parts.shared.now() / 1000);
    await this.parts.batches.update(batch.id, { status: "failed", failedAt: now, errors }, claim);
    await this.parts.batches.dropResults(batch.id);
    return "stopped";
  }

  /**
   * End the batch: `finalizing`, the output and error files stored (each once: a restart finds
   * the one already stored on the record), then the ending status. A cancelled or expired
   * batch's lines that never ran are in the error file, saying why.
   */
  private async finish(id: string, ending: Ending, claim: JobClaim): Promise<void> {
    const { batches, shared } = this.parts;
    const now = () => Math.floor(shared.now() / 1000);
    let batch = await batches.get(id);
    if (!batch || ENDED_BATCH_STATUSES.has(batch.status)) return;
    if (batch.status !== "finalizing") batch = await batches.update(id, { status: "finalizing", finalizingAt: now() }, claim);
    await this.writeFiles(id, claim, ending === "completed" ? undefined : ending);
    const ended: Partial<BatchRecord> =
      ending === "completed"
        ? { status: "completed", completedAt: now() }
        : ending === "cancelled"
          ? { status: "cancelled", cancelledAt: now() }
          : { status: "expired", expiredAt: now() };
    await batches.update(id, ended, claim);
    await batches.dropResults(id);
  }

  /** Store the output and error files that are not stored yet, and name them on the batch. */
  private async writeFiles(id: string, claim: JobClaim, unrun: "cancelled" | "expired" | undefined): Promise<void> {
    const { batches, shared, files } = this.parts;
    const batch = await batches.get(id);
    if (!batch) return;
    const results: BatchLineResult[] = [];
    for await (const result of batches.results(id)) results.push(result);
    results.sort((a, b) => a.index - b.index);
    const answers = results.filter((result) => result.ok).map((result) => result.line);
    const errors = results.filter((result) => !result.ok).map((result) => result.line);
    if (unrun) errors.push(...(await this.unrunLines(batch, new Set(results.map((result) => result.index)), unrun)));
    const limits = shared.plans.ofAgent(batch.agentId);
    const store = async (lines: string[], kind: string) =>
      (
        await files.store(batch.agentId, limits, {
          filename: `${batch.id}_${kind}.jsonl`,
          contentType: "application/jsonl",
          body: Readable.from([`${lines.join("\n")}\n`]),
          purpose: "batch_output",
        })
      ).id;
    if (!batch.outputFileId && answers.length > 0) await batches.update(id, { outputFileId: await store(answers, "output") }, claim);
    if (!batch.errorFileId && errors.length > 0) await batches.update(id, { errorFileId: await store(errors, "error") }, claim);
  }

  /** The error lines of the lines a cancel or the window left unrun. */
  private async unrunLines(batch: BatchRecord, answered: Set<number>, why: "cancelled" | "expired"): Promise<string[]> {
    const input = await this.parts.shared.storage.openFile(batch.agentId, batch.inputFileId).catch(() => undefined);
    if (!input) return [];
    const message = why === "cancelled" ? "The batch was cancelled before this request ran." : "The batch's 24-hour window ended before this request ran.";
    const lines: string[] = [];
    for await (const { index, text } of fileLines(input.body)) {
      if (answered.has(index)) continue;
      const line = readLine(index, text, batch.endpoint);
      if (isInputError(line)) continue;
      lines.push(JSON.stringify({ id: lineRequestId(batch.id, index), custom_id: line.customId, response: null, error: { code: `batch_${why}`, message } }));
    }
    return lines;
  }

  private agentLimit(agentId: string, concurrency: number): LimitFunction {
    let limit = this.perAgent.get(agentId);
    if (!limit || limit.concurrency !== concurrency) {
      limit = pLimit(concurrency);
      this.perAgent.set(agentId, limit);
    }
    return limit;
  }
}

/** Reads a batch's stop reason at most every STATUS_CHECK_MS (a Redis read per line would add up). */
class StopCheck {
  private checkedAt = 0;
  private last: Ending | undefined;

  constructor(private readonly read: () => Promise<Ending | undefined>) {}

  async reason(): Promise<Ending | undefined> {
    if (this.last) return this.last;
    const now = performance.now();
    if (now - this.checkedAt < STATUS_CHECK_MS) return undefined;
    this.checkedAt = now;
    this.last = await this.read();
    return this.last;
  }
}

/** The usage row a line's call writes, named in advance. */
export function rowIdOf(batchId: string, index: number): string {
  return `${batchId}:${index}`;
}

/** The line's id in the output and error files, and the request id of its call. */
function lineRequestId(batchId: string, index: number): string {
  return `batch_req_${batchId.slice("batch_".length)}_${index}`;
}

/** A line billed before a restart but never recorded: not run again, answered as lost. */
function lostAnswer(batch: BatchRecord, line: BatchInputLine): BatchLineResult {
  const requestId = lineRequestId(batch.id, line.index);
  const body = {
    error: {
      message: "gw stopped after this request was answered and billed, before its answer was kept; it was not run again.",
      type: "server_error",
      code: "answer_lost",
    },
  };
  return {
    index: line.index,
    ok: false,
    line: JSON.stringify({ id: requestId, custom_id: line.customId, response: { status_code: 500, request_id: requestId, body }, error: null }),
  };
}

/** The months (YYYY-MM) from `since` to `until`, where a line's row may be. */
function periodsSince(since: number, until: number): string[] {
  const periods: string[] = [];
  const date = new Date(since);
  date.setUTCDate(1);
  while (date.getTime() <= until) {
    periods.push(periodOf(date));
    date.setUTCMonth(date.getUTCMonth() + 1);
  }
  return periods;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
