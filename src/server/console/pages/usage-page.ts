// The usage explorer: the usage history of a range (default this month, UTC) kept by agent, key,
// model, endpoint and tag; spend per day as a chart, the sums per agent, model, key, endpoint and
// tag, the last rows; and the same rows as a CSV download, in `gw usage --format csv`'s columns.
import { tagsOf } from "../../../admin/usage-groups.js";
import { type UsageFilter, type UsageSum, usageCsv, usageOverview } from "../../../admin/usage-overview.js";
import { findAgent } from "../../../store/provisioning.js";
import type { ConsoleAnswer, ConsoleRequest } from "../console-app.js";
import { type Html, html, jsonData } from "../html.js";
import { count, layout } from "../layout.js";

const DAY_MS = 86_400_000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** Rows the table lists; the CSV carries every one. */
const TABLE_ROWS = 100;

interface UsageQuery {
  /** The form's values, to fill it in again and build the CSV link. */
  values: Record<"agent" | "key" | "model" | "endpoint" | "tag" | "since" | "until", string>;
  filter: UsageFilter;
  since: number;
  /** Exclusive: the day after the form's until. */
  until: number;
  problems: string[];
}

function usageQuery(request: ConsoleRequest, now: Date): UsageQuery {
  const params = request.event.url.searchParams;
  const text = (name: string) => params.get(name)?.trim() ?? "";
  const monthStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
  const monthEnd = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  const problems: string[] = [];
  const day = (name: string, fallback: number): number => {
    const value = text(name);
    if (value === "") return fallback;
    const time = DATE.test(value) ? Date.parse(`${value}T00:00:00Z`) : Number.NaN;
    if (Number.isFinite(time) && new Date(time).toISOString().startsWith(value)) return time;
    problems.push(`"${value}" is not a date (YYYY-MM-DD); ${name} is the month's ${name === "since" ? "first" : "last"} day instead.`);
    return fallback;
  };
  let since = day("since", monthStart);
  let until = day("until", monthEnd - DAY_MS) + DAY_MS;
  if (since >= until) {
    problems.push("The range is empty (since is after until); showing this month.");
    since = monthStart;
    until = monthEnd;
  }
  const filter: UsageFilter = {};
  const agentName = text("agent");
  if (agentName) {
    const agent = findAgent(request.deps.gateway.store.data, agentName);
    if (agent) filter.agentId = agent.id;
    else {
      problems.push(`No agent "${agentName}".`);
      filter.agentId = "";
    }
  }
  for (const name of ["key", "model", "endpoint", "tag"] as const) if (text(name)) filter[name] = text(name);
  const values = {
    agent: agentName,
    key: text("key"),
    model: text("model"),
    endpoint: text("endpoint"),
    tag: text("tag"),
    since: isoDay(since),
    until: isoDay(until - DAY_MS),
  };
  return { values, filter, since, until, problems };
}

export async function usagePage(request: ConsoleRequest): Promise<ConsoleAnswer> {
  const { gateway } = request.deps;
  const now = new Date();
  const query = usageQuery(request, now);
  const metadata = gateway.store.data;
  const overview = await usageOverview(gateway.state.history, metadata, { since: query.since, until: query.until }, query.filter, now.getTime(), TABLE_ROWS);
  const csvLink = `/console/usage.csv?${new URLSearchParams(Object.entries(query.values).filter(([, value]) => value !== "")).toString()}`;
  const agentNames = new Map(metadata.agents.flatMap((agent) => [[agent.id, agent.name] as const, [agent.name, agent.name] as const]));
  const { values } = query;
  const body = html`<form method="get" action="/console/usage" class="filters">
<label>Agent <select name="agent"><option value="">every agent</option>${metadata.agents.map(
    (agent) => html`<option value="${agent.name}"${agent.name === values.agent ? html` selected` : ""}>${agent.name}</option>`,
  )}</select></label>
<label>Key <input name="key" value="${values.key}" placeholder="gw_… prefix" list="usage-keys"></label>
<label>Model <input name="model" value="${values.model}" list="usage-models"></label>
<label>Endpoint <input name="endpoint" value="${values.endpoint}" list="usage-endpoints"></label>
<label>Tag <input name="tag" value="${values.tag}"></label>
<label>Since <input type="date" name="since" value="${values.since}"></label>
<label>Until <input type="date" name="until" value="${values.until}"></label>
<button type="submit">Show</button>
<a class="button" href="${csvLink}" download>Export CSV</a>
</form>
<datalist id="usage-keys">${metadata.keys.map((key) => html`<option value="${key.prefix}">${key.name ?? ""}</option>`)}</datalist>
<datalist id="usage-models">${gateway.config.models.map((model) => html`<option value="${model.id}"></option>`)}</datalist>
<datalist id="usage-endpoints">${overview.endpoints.map((sum) => html`<option value="${sum.value}"></option>`)}</datalist>
${query.problems.map((problem) => html`<p class="message error" role="alert">${problem}</p>`)}
<p class="lede">${values.since} to ${values.until} (UTC, both days included): <strong data-figure="credits" data-value="${overview.credits}">${count(overview.credits)} credits</strong> in <span data-figure="rows" data-value="${overview.rows}">${count(overview.rows)} rows</span>${overview.skipped > 0 ? ` (${count(overview.skipped)} invalid rows skipped)` : ""}.</p>
<section>
<h2>Spend per day</h2>
<div class="chart" data-chart="spend-per-day" role="img" aria-label="Credits per day in the range"></div>
${jsonData("spend-per-day", { days: overview.days.map((day) => day.value), credits: overview.days.map((day) => day.credits) })}
</section>
<div class="columns">
<section><h2>Agents</h2>${sumsTable("Agent", overview.agents, "by-agent")}</section>
<section><h2>Models</h2>${sumsTable("Model", overview.models, "by-model")}</section>
<section><h2>Keys</h2>${sumsTable("Key", overview.keys, "by-key")}</section>
<section><h2>Endpoints</h2>${sumsTable("Endpoint", overview.endpoints, "by-endpoint")}</section>
<section><h2>Tags</h2>${sumsTable("Tag", overview.tags, "by-tag")}<p class="hint">A row with several tags counts under each.</p></section>
</div>
<section>
<h2>Rows</h2>
${
  overview.recent.length === 0
    ? html`<p class="empty">No usage rows in this range.</p>`
    : html`<p class="hint">The last ${count(overview.recent.length)} of ${count(overview.rows)}, newest first; the CSV has every one.</p>
<div class="scroll"><table class="rows" id="usage-rows">
<thead><tr><th>Time (UTC)</th><th>Agent</th><th>Key</th><th>Endpoint</th><th>Model</th><th>Provider</th><th class="num">Credits</th><th>Tags</th></tr></thead>
<tbody>${overview.recent.map(
        (row) => html`<tr>
<td class="nowrap">${row.time.replace("T", " ").slice(0, 19)}</td><td>${agentNames.get(row.agent) ?? row.agent}</td><td><code>${row.keyPrefix}</code></td>
<td>${row.endpoint}${row.batch !== undefined ? html` <span class="badge">batch</span>` : ""}${row.cached ? html` <span class="badge">cached</span>` : ""}</td>
<td>${row.model}</td><td>${row.provider}</td><td class="num">${count(row.credits)}</td><td>${tagsOf(row).join(" ")}</td>
</tr>`,
      )}</tbody></table></div>`
}
</section>`;
  return { kind: "page", html: layout(request, { title: "Usage", path: "/console/usage", body, chart: true }) };
}

export async function usageCsvDownload(request: ConsoleRequest): Promise<ConsoleAnswer> {
  const { gateway } = request.deps;
  const query = usageQuery(request, new Date());
  return {
    kind: "download",
    type: "text/csv; charset=utf-8",
    filename: `gw-usage-${query.values.since}-to-${query.values.until}.csv`,
    body: usageCsv(gateway.state.history, gateway.store.data, { since: query.since, until: query.until }, query.filter),
  };
}

/** A table of sums, largest first. */
export function sumsTable(label: string, sums: readonly UsageSum[], id: string): Html {
  if (sums.length === 0) return html`<p class="empty">None.</p>`;
  return html`<div class="scroll"><table class="sums" id="${id}">
<thead><tr><th>${label}</th><th class="num">Rows</th><th class="num">Credits</th></tr></thead>
<tbody>${sums.map((sum) => html`<tr data-value="${sum.value}"><td>${sum.value}</td><td class="num">${count(sum.rows)}</td><td class="num" data-credits="${sum.credits}">${count(sum.credits)}</td></tr>`)}</tbody>
</table></div>`;
}

function isoDay(time: number): string {
  return new Date(time).toISOString().slice(0, 10);
}
