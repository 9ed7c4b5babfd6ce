// The overview: this month's spend (UTC, the period plans are kept in) against each agent's plan
// allowance, spend per day, the top agents and models, and this instance's recent request figures
// (the ring of admin/recent-requests.ts: "of the last N requests on this instance").
import { usageOverview } from "../../../admin/usage-overview.js";
import { canonicalPlanName } from "../../../config/resolved-config.js";
import { periodOf } from "../../../store/usage-log.js";
import type { ConsoleAnswer, ConsoleRequest } from "../console-app.js";
import { html, jsonData } from "../html.js";
import { count, creditsText, layout } from "../layout.js";
import { sumsTable } from "./usage-page.js";

export async function overviewPage(request: ConsoleRequest): Promise<ConsoleAnswer> {
  const { gateway, recent } = request.deps;
  const now = new Date();
  const since = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
  const until = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  const metadata = gateway.store.data;
  const overview = await usageOverview(gateway.state.history, metadata, { since, until }, {}, now.getTime(), 0);
  const config = gateway.config;
  const agents = metadata.agents
    .map((agent) => {
      const plan = canonicalPlanName(config, agent.plan) ?? agent.plan;
      return { agent, plan, allowance: config.resolvedPlans[plan]?.monthlyCredits ?? 0, used: overview.agentCredits.get(agent.id) ?? 0 };
    })
    .sort((a, b) => b.used - a.used || (a.agent.name < b.agent.name ? -1 : 1));
  const figures = recent.figures();
  const errorRate = figures.requests === 0 ? null : figures.serverErrors / figures.requests;
  const body = html`<p class="lede">Period <strong>${periodOf(now)}</strong> (calendar month, UTC).</p>
<section class="cards">
<div class="card"><h2>Spend this period</h2><p class="figure" data-figure="credits" data-value="${overview.credits}">${creditsText(request, overview.credits)}</p><p class="hint">${count(overview.rows)} usage rows</p></div>
<div class="card"><h2>Requests</h2><p class="figure" data-figure="requests" data-value="${figures.requests}">${count(figures.requests)}</p><p class="hint">of the last ${count(recent.capacity)} requests on this instance</p></div>
<div class="card"><h2>Error rate</h2><p class="figure" data-figure="error-rate">${errorRate === null ? "–" : `${(errorRate * 100).toFixed(1)}%`}</p><p class="hint">${count(figures.serverErrors)} answered 5xx, ${count(figures.clientErrors)} refused 4xx</p></div>
<div class="card"><h2>Latency</h2><p class="figure" data-figure="latency">${figures.p50Ms === null ? "–" : html`p50 ${figures.p50Ms} ms · p99 ${figures.p99Ms} ms`}</p><p class="hint">whole request, on this instance</p></div>
</section>
<section>
<h2>Spend per day</h2>
<div class="chart" data-chart="spend-per-day" role="img" aria-label="Credits spent per day this period"></div>
${jsonData("spend-per-day", { days: overview.days.map((day) => day.value), credits: overview.days.map((day) => day.credits) })}
</section>
<section>
<h2>Agents against their plan</h2>
${
  agents.length === 0
    ? html`<p class="empty">No agents yet: create a key on the <a href="/console/keys">Keys</a> page.</p>`
    : html`<div class="scroll"><table class="agents">
<thead><tr><th>Agent</th><th>Plan</th><th class="num">Used</th><th class="num">Allowance</th><th>Share</th></tr></thead>
<tbody>${agents.map(
        ({ agent, plan, allowance, used }) => html`<tr data-agent="${agent.name}">
<td>${agent.name}</td><td>${plan}</td><td class="num" data-used="${used}">${count(used)}</td><td class="num">${count(allowance)}</td>
<td><meter min="0" max="${Math.max(allowance, 1)}" high="${Math.max(allowance, 1) * 0.8}" value="${Math.min(used, Math.max(allowance, 1))}">${allowance === 0 ? "–" : `${Math.round((used / allowance) * 100)}%`}</meter> ${allowance === 0 ? "" : `${Math.round((used / allowance) * 100)}%`}</td>
</tr>`,
      )}</tbody></table></div>`
}
</section>
<div class="columns">
<section><h2>Top agents</h2>${sumsTable("Agent", overview.agents.slice(0, 10), "top-agents")}</section>
<section><h2>Top models</h2>${sumsTable("Model", overview.models.slice(0, 10), "top-models")}</section>
</div>`;
  return { kind: "page", html: layout(request, { title: "Overview", path: "/console", body, chart: true }) };
}
