// Jobs and storage: every agent's batches (lines done of total) and video jobs (the vendor's
// progress), newest first, and each agent's storage against its plan — what GET /admin/v1/batches,
// /video/jobs and /storage answer. A video job's prompt is its caller's content: not shown.
import { periodOf } from "../../../store/usage-log.js";
import { exactSize, roundedSize } from "../../../text/byte-sizes.js";
import type { ConsoleAnswer, ConsoleRequest } from "../console-app.js";
import { html } from "../html.js";
import { count, layout } from "../layout.js";

/** Jobs of each kind listed. */
const LISTED = 50;

export async function jobsPage(request: ConsoleRequest): Promise<ConsoleAnswer> {
  const { gateway } = request.deps;
  const agents = gateway.store.data.agents;
  const period = periodOf(new Date());
  const [batchLists, videoLists, storage] = await Promise.all([
    Promise.all(agents.map(async (agent) => ({ agent, batches: (await gateway.state.batches.list(agent.id, { limit: LISTED })).batches }))),
    Promise.all(agents.map(async (agent) => ({ agent, jobs: await gateway.videoJobs.list(agent.id, LISTED) }))),
    Promise.all(
      agents.map(async (agent) => {
        const limits = gateway.plans.ofAgent(agent.id);
        const [space, operations] = await Promise.all([gateway.state.files.space(agent.id), gateway.state.files.operationCount(agent.id, period)]);
        return { agent, usedBytes: space.usedBytes, limitBytes: limits.storageBytes, operations, operationLimit: limits.storageOperationsPerPeriod };
      }),
    ),
  ]);
  const batches = batchLists
    .flatMap(({ agent, batches }) => batches.map((batch) => ({ agent: agent.name, batch })))
    .sort((a, b) => b.batch.createdAt - a.batch.createdAt)
    .slice(0, LISTED);
  const videos = videoLists
    .flatMap(({ agent, jobs }) => jobs.map((job) => ({ agent: agent.name, job })))
    .sort((a, b) => (a.job.queuedAt < b.job.queuedAt ? 1 : -1))
    .slice(0, LISTED);
  const body = html`<section>
<h2>Batches</h2>
${
  batches.length === 0
    ? html`<p class="empty">No batches.</p>`
    : html`<div class="scroll"><table id="batches">
<thead><tr><th>Batch</th><th>Agent</th><th>Endpoint</th><th>Status</th><th>Progress</th><th>Created (UTC)</th></tr></thead>
<tbody>${batches.map(({ agent, batch }) => {
        const { total, completed, failed } = batch.requestCounts;
        return html`<tr><td><code>${batch.id}</code></td><td>${agent}</td><td>${batch.endpoint}</td><td>${batch.status}</td>
<td><progress max="${Math.max(total, 1)}" value="${completed + failed}"></progress> ${count(completed + failed)} / ${count(total)}${failed > 0 ? ` (${count(failed)} failed)` : ""}</td>
<td class="nowrap">${new Date(batch.createdAt * 1000).toISOString().replace("T", " ").slice(0, 16)}</td></tr>`;
      })}</tbody></table></div>`
}
</section>
<section>
<h2>Video jobs</h2>
${
  videos.length === 0
    ? html`<p class="empty">No video jobs.</p>`
    : html`<div class="scroll"><table id="video-jobs">
<thead><tr><th>Job</th><th>Agent</th><th>Model</th><th>Status</th><th>Progress</th><th class="num">Seconds</th><th class="num">Credits</th><th>Queued (UTC)</th></tr></thead>
<tbody>${videos.map(
        ({
          agent,
          job,
        }) => html`<tr><td><code>${job.id}</code></td><td>${agent}</td><td>${job.model}</td><td>${job.status}${job.error ? html`<br><span class="hint">${job.error}</span>` : ""}</td>
<td>${job.progress === undefined ? "–" : html`<progress max="1" value="${job.progress}"></progress> ${Math.round(job.progress * 100)}%`}</td>
<td class="num">${job.request.durationSeconds}</td><td class="num">${job.billing?.written ? count(job.billing.credits) : html`<span class="hint">held ${count(job.estimateCredits)}</span>`}</td>
<td class="nowrap">${job.queuedAt.replace("T", " ").slice(0, 16)}</td></tr>`,
      )}</tbody></table></div>`
}
</section>
<section>
<h2>Storage per agent</h2>
${
  storage.length === 0
    ? html`<p class="empty">No agents.</p>`
    : html`<div class="scroll"><table id="storage">
<thead><tr><th>Agent</th><th>Used</th><th>Of</th><th class="num">Operations this month</th></tr></thead>
<tbody>${storage.map(
        (row) => html`<tr><td>${row.agent.name}</td>
<td><meter min="0" max="${Math.max(row.limitBytes, 1)}" value="${Math.min(row.usedBytes, Math.max(row.limitBytes, 1))}"></meter> ${roundedSize(row.usedBytes)}</td>
<td>${exactSize(row.limitBytes)}</td><td class="num">${count(row.operations)} / ${count(row.operationLimit)}</td></tr>`,
      )}</tbody></table></div>`
}
</section>`;
  return { kind: "page", html: layout(request, { title: "Jobs and storage", path: "/console/jobs", body }) };
}
