// Keys and agents: the lists `gw keys list` and `gw agents list` show (admin/key-listing.ts,
// admin/agent-listing.ts); a form that creates a key as POST /admin/v1/keys does — the same body
// schema and checks (admin/admin-requests.ts) and the same store change (store/provisioning.ts) —
// showing the new key once; and revoking. Read-only sessions see the lists without the forms.

import { AdminInputError, keyCreateSchema, keyLimitsOf, planNamed } from "../../../admin/admin-requests.js";
import { agentListing } from "../../../admin/agent-listing.js";
import { type KeyListing, keyListing } from "../../../admin/key-listing.js";
import { GatewayError } from "../../../gateway/errors.js";
import { parseWithSchema } from "../../../gateway/request-schema.js";
import { createKey, ProvisioningError, revokeKey } from "../../../store/provisioning.js";
import { auditAction } from "../../admin/admin-audit.js";
import type { ConsoleAnswer, ConsoleRequest } from "../console-app.js";
import { type Html, html } from "../html.js";
import { count, csrfField, layout } from "../layout.js";

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DAY_MS = 86_400_000;
const FORM_FIELDS = ["agent", "plan", "name", "budget", "budgetPeriod", "expires", "models", "rpm", "tpm"] as const;
type KeyForm = Record<(typeof FORM_FIELDS)[number], string>;

interface Outcome {
  created?: { key: string; listed: KeyListing };
  revoked?: string;
  problem?: string;
  form?: KeyForm;
}

export async function keysPage(request: ConsoleRequest): Promise<ConsoleAnswer> {
  const revoked = request.event.url.searchParams.get("revoked") ?? undefined;
  return { kind: "page", html: await keysHtml(request, revoked ? { revoked } : {}) };
}

export async function keysCreate(request: ConsoleRequest): Promise<ConsoleAnswer> {
  const { gateway } = request.deps;
  const form = Object.fromEntries(FORM_FIELDS.map((field) => [field, request.form.get(field)?.trim() ?? ""])) as KeyForm;
  try {
    const { agent, plan, ...limitsBody } = parseWithSchema(keyCreateSchema, keyBody(form));
    const config = gateway.config;
    const planName = plan === undefined ? undefined : planNamed(config, plan);
    const limits = keyLimitsOf(limitsBody, config, new Date());
    const created = await createKey(gateway.store, agent, planName, "free", limits);
    auditAction(request.event, "keys.create", created.record.id);
    const [listed] = await keyListing(config, gateway.store.data, gateway.state.history, [created.record], new Date());
    return { kind: "page", status: 201, html: await keysHtml(request, { created: { key: created.key, listed: listed! } }) };
  } catch (error) {
    const problem = problemOf(error);
    if (problem === undefined) throw error;
    return { kind: "page", status: error instanceof ProvisioningError ? 409 : 400, html: await keysHtml(request, { problem, form }) };
  }
}

export async function keysRevoke(request: ConsoleRequest): Promise<ConsoleAnswer> {
  const { gateway } = request.deps;
  const id = request.form.get("key") ?? "";
  const live = gateway.store.data.keys.find((key) => key.id === id && key.revokedAt === null);
  if (!live) return { kind: "page", status: 404, html: await keysHtml(request, { problem: `No live key with the id "${id}": it may be revoked already.` }) };
  const key = await revokeKey(gateway.store, live.id);
  auditAction(request.event, "keys.revoke", key.id);
  return { kind: "redirect", location: `/console/keys?${new URLSearchParams({ revoked: key.prefix })}` };
}

/** The form as the admin API's JSON body: numbers that are whole numbers, the rest as typed (the schema names what is wrong). */
function keyBody(form: KeyForm): Record<string, unknown> {
  const body: Record<string, unknown> = { agent: form.agent };
  const number = (text: string): number | string => (/^\d+$/.test(text) ? Number(text) : text);
  if (form.plan) body.plan = form.plan;
  if (form.name) body.name = form.name;
  if (form.budget) body.budget = { credits: number(form.budget), period: form.budgetPeriod || "month" };
  // A date: the key works through that day (UTC), as `gw keys create --expires 2027-01-31`.
  if (form.expires) body.expiresAt = DATE.test(form.expires) ? new Date(Date.parse(`${form.expires}T00:00:00Z`) + DAY_MS).toISOString() : form.expires;
  if (form.models) body.models = form.models.split(/[\s,]+/).filter(Boolean);
  if (form.rpm) body.rpm = number(form.rpm);
  if (form.tpm) body.tpm = number(form.tpm);
  return body;
}

function problemOf(error: unknown): string | undefined {
  if (error instanceof AdminInputError || error instanceof GatewayError) return error.message;
  if (error instanceof ProvisioningError) return `${error.message.charAt(0).toUpperCase()}${error.message.slice(1)}.`;
  return undefined;
}

async function keysHtml(request: ConsoleRequest, outcome: Outcome): Promise<Html> {
  const { gateway } = request.deps;
  const data = gateway.store.data;
  const config = gateway.config;
  const keys = await keyListing(
    config,
    data,
    gateway.state.history,
    data.keys.filter((key) => key.revokedAt === null),
    new Date(),
  );
  const agents = agentListing(data);
  const writable = !request.token.readOnly;
  const form = outcome.form;
  const body = html`${
    outcome.created
      ? html`<section class="new-key" aria-live="polite">
<h2>New key for ${outcome.created.listed.agent}</h2>
<p>Copy it now: it is shown this once, and only its prefix is kept.</p>
<p class="secret"><output id="new-key">${outcome.created.key}</output> <button type="button" class="copy" data-copy="new-key">Copy</button></p>
</section>`
      : ""
  }${outcome.revoked ? html`<p class="message" role="status">Revoked <code>${outcome.revoked}</code>: it answers 401 from now on.</p>` : ""}${
    outcome.problem ? html`<p class="message error" role="alert">${outcome.problem}</p>` : ""
  }
<section>
<h2>Keys</h2>
${
  keys.length === 0
    ? html`<p class="empty">No live keys.</p>`
    : html`<div class="scroll"><table class="keys" id="keys">
<thead><tr><th>Name</th><th>Prefix</th><th>Agent</th><th>Plan</th><th class="num">Spent</th><th>Budget</th><th>Limits</th><th>Expires</th><th>Last used</th>${writable ? html`<th></th>` : ""}</tr></thead>
<tbody>${keys.map(
        (key) => html`<tr data-key="${key.prefix}">
<td>${key.name ?? "–"}</td><td><code>${key.prefix}</code></td><td>${key.agent}</td><td>${key.plan}</td>
<td class="num">${count(key.spent)}</td>
<td>${key.budget ? `${count(key.budget.credits)} / ${key.budget.period}` : "–"}</td>
<td>${limitsText(key)}</td>
<td class="nowrap">${key.expiresAt ? html`${key.expiresAt.slice(0, 10)}${key.expired ? html` <span class="badge warn">expired</span>` : ""}` : "never"}</td>
<td class="nowrap">${key.lastUsedAt ? key.lastUsedAt.replace("T", " ").slice(0, 16) : "never"}</td>
${
  writable
    ? html`<td><form method="post" action="/console/keys/revoke" class="revoke" data-confirm="${`Revoke ${key.prefix}…? It stops working at once.`}">${csrfField(request)}<input type="hidden" name="key" value="${key.id}"><button type="submit" class="danger">Revoke</button></form></td>`
    : ""
}
</tr>`,
      )}</tbody></table></div>`
}
</section>
${
  writable
    ? html`<section>
<h2>Create a key</h2>
<form method="post" action="/console/keys" class="create-key">
${csrfField(request)}
<label>Agent <input name="agent" required list="agent-names" value="${form?.agent ?? ""}" autocomplete="off"></label>
<label>Plan <select name="plan"><option value="">agent's own (new: free)</option>${Object.keys(config.resolvedPlans).map(
        (plan) => html`<option value="${plan}"${form?.plan === plan ? html` selected` : ""}>${plan}</option>`,
      )}</select></label>
<label>Name <input name="name" value="${form?.name ?? ""}" placeholder="what it is for"></label>
<label>Budget (credits) <input name="budget" inputmode="numeric" value="${form?.budget ?? ""}"></label>
<label>Budget period <select name="budgetPeriod"><option value="month">per month</option><option value="total"${form?.budgetPeriod === "total" ? html` selected` : ""}>over its life</option></select></label>
<label>Works through (UTC) <input name="expires" type="date" value="${form?.expires ?? ""}"></label>
<label class="wide">Models <input name="models" value="${form?.models ?? ""}" placeholder="every model; or patterns: openai/* claude-*"></label>
<label>Requests / minute <input name="rpm" inputmode="numeric" value="${form?.rpm ?? ""}"></label>
<label>Tokens / minute <input name="tpm" inputmode="numeric" value="${form?.tpm ?? ""}"></label>
<button type="submit">Create key</button>
</form>
<datalist id="agent-names">${agents.map((agent) => html`<option value="${agent.name}"></option>`)}</datalist>
</section>`
    : html`<p class="hint">This session's token is read-only: keys can be looked at here, not created or revoked.</p>`
}
<section>
<h2>Agents</h2>
${
  agents.length === 0
    ? html`<p class="empty">No agents yet.</p>`
    : html`<div class="scroll"><table class="agents" id="agents">
<thead><tr><th>Agent</th><th>Plan</th><th class="num">Live keys</th><th>Created</th></tr></thead>
<tbody>${agents.map((agent) => html`<tr><td>${agent.name}</td><td>${agent.plan}</td><td class="num">${agent.activeKeys}</td><td class="nowrap">${agent.createdAt.slice(0, 10)}</td></tr>`)}</tbody>
</table></div>`
}
</section>`;
  return layout(request, { title: "Keys and agents", path: "/console/keys", body });
}

function limitsText(key: KeyListing): string {
  const parts = [
    key.models ? key.models.join(" ") : undefined,
    key.rpm !== null ? `${count(key.rpm)} rpm` : undefined,
    key.tpm !== null ? `${count(key.tpm)} tpm` : undefined,
  ].filter((part) => part !== undefined);
  return parts.length === 0 ? "–" : parts.join(" · ");
}
