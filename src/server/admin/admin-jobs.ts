// /admin/v1/batches, /admin/v1/video/jobs and /admin/v1/storage: every agent's batches and video
// jobs with their progress, and each agent's storage against its plan (docs/decisions.md §25).
// A video job's prompt is the caller's content: it is not shown here.

import type { Gateway } from "../../gateway/gateway.js";
import { periodOf } from "../../store/usage-log.js";
import { agentsOf, listLimit } from "./admin-lists.js";
import type { AdminRoutes } from "./admin-routes.js";

export function registerAdminJobs(app: AdminRoutes, gateway: Gateway): void {
  app.get("/admin/v1/batches", async (event) => {
    const limit = listLimit(event);
    const lists = await Promise.all(agentsOf(event, gateway).map(async (agent) => ({ agent, ...(await gateway.state.batches.list(agent.id, { limit })) })));
    const data = lists
      .flatMap(({ agent, batches }) =>
        batches.map((batch) => ({
          id: batch.id,
          agent: agent.name,
          keyPrefix: batch.keyPrefix,
          endpoint: batch.endpoint,
          status: batch.status,
          requestCounts: batch.requestCounts,
          createdAt: batch.createdAt,
          expiresAt: batch.expiresAt,
          completedAt: batch.completedAt ?? null,
          tags: batch.tags ?? [],
        })),
      )
      .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1))
      .slice(0, limit);
    return { object: "list", data };
  });

  app.get("/admin/v1/video/jobs", async (event) => {
    const limit = listLimit(event);
    const lists = await Promise.all(agentsOf(event, gateway).map(async (agent) => ({ agent, jobs: await gateway.videoJobs.list(agent.id, limit) })));
    const data = lists
      .flatMap(({ agent, jobs }) =>
        jobs.map((job) => ({
          id: job.id,
          agent: agent.name,
          keyPrefix: job.keyPrefix,
          model: job.model,
          provider: job.provider,
          status: job.status,
          progress: job.progress ?? null,
          durationSeconds: job.request.durationSeconds,
          resolution: job.request.resolution,
          queuedAt: job.queuedAt,
          finishedAt: job.finishedAt ?? null,
          estimateCredits: job.estimateCredits,
          credits: job.billing?.written ? job.billing.credits : null,
          error: job.error ?? null,
        })),
      )
      .sort((a, b) => (a.queuedAt < b.queuedAt ? 1 : a.queuedAt > b.queuedAt ? -1 : 0))
      .slice(0, limit);
    return { object: "list", data };
  });

  app.get("/admin/v1/storage", async (event) => {
    const period = periodOf(new Date());
    const data = await Promise.all(
      agentsOf(event, gateway).map(async (agent) => {
        const limits = gateway.plans.ofAgent(agent.id);
        const [space, operations] = await Promise.all([gateway.state.files.space(agent.id), gateway.state.files.operationCount(agent.id, period)]);
        return {
          agent: agent.name,
          plan: agent.plan,
          usedBytes: space.usedBytes,
          limitBytes: limits.storageBytes,
          operations: { used: operations, limit: limits.storageOperationsPerPeriod, period },
        };
      }),
    );
    return { object: "list", data };
  });
}
