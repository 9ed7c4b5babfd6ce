// Providers: each configured provider's type and base URL (never its key or headers), its circuit
// breaker's state and, from this instance's last attempts on it, p50/p99 and the latest failures
// (admin/provider-health.ts, the same figures as GET /admin/v1/providers/health).
import type { ConsoleAnswer, ConsoleRequest } from "../console-app.js";
import { html } from "../html.js";
import { count, layout } from "../layout.js";

export async function providersPage(request: ConsoleRequest): Promise<ConsoleAnswer> {
  const { gateway, health } = request.deps;
  const providers = Object.entries(gateway.config.providers).map(([name, provider]) => ({
    name,
    provider,
    breaker: gateway.breakers.state(name),
    figures: health.figures(name),
  }));
  const body = html`<p class="lede">Breaker states and figures are this instance's, from its last attempts on each provider.</p>
${
  providers.length === 0
    ? html`<p class="empty">No providers configured (<code>gw providers add</code>).</p>`
    : html`<div class="scroll"><table class="providers" id="providers">
<thead><tr><th>Provider</th><th>Type</th><th>Base URL</th><th>Breaker</th><th class="num">Attempts</th><th class="num">Failures</th><th class="num">p50 ms</th><th class="num">p99 ms</th></tr></thead>
<tbody>${providers.map(
        ({ name, provider, breaker, figures }) => html`<tr data-provider="${name}">
<td>${name}</td><td>${provider.type}</td><td class="url">${provider.baseUrl ?? "(the vendor's)"}</td>
<td><span class="badge ${breaker === "closed" ? "ok" : "warn"}">${breaker}</span></td>
<td class="num">${count(figures.attempts)}</td><td class="num">${count(figures.failures)}</td><td class="num">${figures.p50Ms ?? "–"}</td><td class="num">${figures.p99Ms ?? "–"}</td>
</tr>`,
      )}</tbody></table></div>`
}
${providers
  .filter(({ figures }) => figures.recentFailures.length > 0)
  .map(
    ({ name, figures }) => html`<section>
<h2>Recent failures of ${name}</h2>
<div class="scroll"><table class="failures"><thead><tr><th>Time (UTC)</th><th>Outcome</th><th>Cause</th><th class="num">ms</th></tr></thead>
<tbody>${figures.recentFailures.map(
      (failure) =>
        html`<tr><td class="nowrap">${failure.time.replace("T", " ").slice(0, 19)}</td><td>${failure.outcome}</td><td>${failure.cause ?? ""}</td><td class="num">${failure.durationMs}</td></tr>`,
    )}</tbody></table></div>
</section>`,
  )}`;
  return { kind: "page", html: layout(request, { title: "Providers", path: "/console/providers", body }) };
}
