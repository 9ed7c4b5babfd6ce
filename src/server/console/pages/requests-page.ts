// Recent requests: the last requests this instance answered, from the ring the access log feeds
// (admin/recent-requests.ts): status, route, upstream, attempts, duration, credits, cache; never a
// body. Each instance holds its own; access lines off (a log level above info) leaves it empty.
import type { ConsoleAnswer, ConsoleRequest } from "../console-app.js";
import { html } from "../html.js";
import { count, layout } from "../layout.js";

export async function requestsPage(request: ConsoleRequest): Promise<ConsoleAnswer> {
  const { recent } = request.deps;
  const records = recent.list();
  const body = html`<p class="lede">The last ${count(records.length)} of up to ${count(recent.capacity)} requests this instance answered, newest first (the console's own pages left out). Times are UTC.</p>
${
  records.length === 0
    ? html`<p class="empty">No requests yet (or access lines are off: the log level is above info).</p>`
    : html`<div class="scroll"><table class="requests" id="requests">
<thead><tr><th>Time</th><th class="num">Status</th><th>Method</th><th>Path</th><th>Model</th><th>Upstream</th><th class="num">Attempts</th><th class="num">ms</th><th class="num">Credits</th><th>Cache</th><th>Agent</th><th>Key</th></tr></thead>
<tbody>${records.map(
        (
          record,
        ) => html`<tr class="${record.status >= 500 ? "status-error" : record.status >= 400 ? "status-refused" : "status-ok"}" data-request-id="${record.requestId}">
<td class="nowrap">${new Date(record.endedAt).toISOString().slice(11, 19)}</td><td class="num">${record.status}</td><td>${record.method}</td><td>${record.path}</td>
<td>${record.model ?? "–"}</td><td>${record.provider ?? "–"}</td><td class="num">${record.attempts ?? "–"}</td><td class="num">${record.durationMs}</td>
<td class="num">${record.credits === undefined ? "–" : count(record.credits)}</td><td>${record.cache ?? ""}</td><td>${record.agent ?? ""}</td><td>${record.keyPrefix ? html`<code>${record.keyPrefix}</code>` : ""}</td>
</tr>`,
      )}</tbody></table></div>`
}`;
  return { kind: "page", html: layout(request, { title: "Recent requests", path: "/console/requests", body }) };
}
