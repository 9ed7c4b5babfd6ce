// The console's request pipeline (docs/decisions.md §27), loaded on the first /console request
// (routes/console.ts answers 404 before this while no admin token exists). For every request: the
// admin API's address rule (loopback and admin.allowFrom), the security headers (a strict
// Content-Security-Policy, nosniff, no referrer, no caching of pages), then
//  - assets: public, served from the package with a long cache;
//  - sign-in: an admin token posted in a form becomes a signed session cookie (console-session.ts);
//  - every other page: a session whose admin token is still live (checked on every request, so a
//    revoked or expired token ends its sessions at once); without one a page redirects to sign-in
//    and anything else answers 401;
//  - every POST: refused 403 when the browser says it came from another site (Sec-Fetch-Site,
//    Origin) or it lacks the session's CSRF token, and when it changes something and the session's
//    token is read-only; each is written to the audit log like an admin API call (admin-audit.ts).
import type { TLSSocket } from "node:tls";
import { deleteCookie, getCookie, type H3Event, setCookie } from "h3";
import { GatewayError } from "../../gateway/errors.js";
import type { Gateway } from "../../gateway/gateway.js";
import { adminTokensOf, findAdminToken, isLiveAdminToken } from "../../store/admin-tokens.js";
import type { AdminTokenRecord } from "../../store/records.js";
import { actAsAdmin, requireAdminAddress } from "../admin/admin-access.js";
import { auditAction, auditAdminCall } from "../admin/admin-audit.js";
import type { ProviderHealth } from "../admin/provider-health.js";
import type { RecentRequests } from "../admin/recent-requests.js";
import { readLimitedText } from "../read-json-body.js";
import { nodeRequestOf } from "../request-context.js";
import type { ServerLogger } from "../server-logger.js";
import { ConsoleAssets } from "./console-assets.js";
import { type ConsoleSession, SESSION_COOKIE, SESSION_LIFETIME_SECONDS, type SessionSigner, SessionSigners } from "./console-session.js";
import type { Html } from "./html.js";
import { messagePage } from "./layout.js";
import { jobsPage } from "./pages/jobs-page.js";
import { keysCreate, keysPage, keysRevoke } from "./pages/keys-page.js";
import { overviewPage } from "./pages/overview-page.js";
import { playgroundPage } from "./pages/playground-page.js";
import { providersPage } from "./pages/providers-page.js";
import { requestsPage } from "./pages/requests-page.js";
import { signInPage } from "./pages/sign-in-page.js";
import { usageCsvDownload, usagePage } from "./pages/usage-page.js";

export interface ConsoleDeps {
  gateway: Gateway;
  logger: ServerLogger;
  health: ProviderHealth;
  recent: RecentRequests;
  /** Test seam: the address every client is seen at (the admin API's). */
  peerAddress?: string;
}

/** What a page handler has: the request, the signed-in token, the session's CSRF token, a POST's form. */
export interface ConsoleRequest {
  event: H3Event;
  deps: ConsoleDeps;
  token: AdminTokenRecord;
  csrf: string;
  form: URLSearchParams;
  assets: ConsoleAssets;
}

export type ConsoleAnswer =
  | { kind: "page"; status?: number; html: Html }
  | { kind: "redirect"; location: string }
  | { kind: "download"; type: string; filename: string; body: AsyncIterable<string> };

type Handler = (request: ConsoleRequest) => Promise<ConsoleAnswer>;

interface Route {
  GET?: Handler;
  /** `change`: refused to a read-only token. */
  POST?: { change: boolean; handler: Handler };
}

const ROUTES: Record<string, Route> = {
  "/console": { GET: overviewPage },
  "/console/keys": { GET: keysPage, POST: { change: true, handler: keysCreate } },
  "/console/keys/revoke": { POST: { change: true, handler: keysRevoke } },
  "/console/usage": { GET: usagePage },
  "/console/usage.csv": { GET: usageCsvDownload },
  "/console/requests": { GET: requestsPage },
  "/console/jobs": { GET: jobsPage },
  "/console/providers": { GET: providersPage },
  "/console/playground": { GET: playgroundPage },
};

export const SIGN_IN_PATH = "/console/sign-in";
export const SIGN_OUT_PATH = "/console/sign-out";
const ASSETS_PATH = "/console/assets/";

/** Forms are a token, a key's settings or a key id. */
const MAX_FORM_BYTES = 16 * 1024;

const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export function consoleApp(deps: ConsoleDeps): (event: H3Event) => Promise<unknown> {
  const signers = new SessionSigners(deps.gateway.paths.dataDir);
  const assets = new ConsoleAssets();
  return async (event) => {
    const headers = event.res.headers;
    headers.set("content-security-policy", CONTENT_SECURITY_POLICY);
    headers.set("x-content-type-options", "nosniff");
    headers.set("referrer-policy", "no-referrer");
    headers.set("x-frame-options", "DENY");
    try {
      requireAdminAddress(event, deps.gateway, deps.peerAddress);
      const path = event.url.pathname.length > "/console".length ? event.url.pathname.replace(/\/+$/, "") : "/console";
      if (path.startsWith(ASSETS_PATH)) return assets.serve(event, path.slice(ASSETS_PATH.length));
      headers.set("cache-control", "no-store");
      const signer = signers.of(deps.gateway.config.storage.signingSecret);
      return answer(event, await route(event, path, deps, signer, assets));
    } catch (error) {
      headers.set("cache-control", "no-store");
      if (error instanceof GatewayError)
        return answer(event, { kind: "page", status: error.status, html: messagePage(assets, `${error.status}`, error.message) });
      deps.logger.error(error, event.res.headers.get("x-request-id") ?? undefined);
      return answer(event, {
        kind: "page",
        status: 500,
        html: messagePage(assets, "Something went wrong", "The console could not answer; the server log has the details."),
      });
    }
  };
}

async function route(event: H3Event, path: string, deps: ConsoleDeps, signer: SessionSigner, assets: ConsoleAssets): Promise<ConsoleAnswer> {
  const method = event.req.method === "HEAD" ? "GET" : event.req.method;
  if (method === "POST") auditAdminCall(event, deps.gateway, deps.logger);
  if (path === SIGN_IN_PATH) return signIn(event, method, deps, signer, assets);
  const session = signer.read(getCookie(event, SESSION_COOKIE), Date.now());
  const token = session ? liveToken(deps.gateway, session.tokenId) : undefined;
  if (path === SIGN_OUT_PATH && method === "POST") return signOut(event, signer, assets, session, token);
  if (!session || !token) {
    if (getCookie(event, SESSION_COOKIE) !== undefined) deleteCookie(event, SESSION_COOKIE, cookieOptions(event));
    if (method === "GET") return { kind: "redirect", location: SIGN_IN_PATH };
    return { kind: "page", status: 401, html: messagePage(assets, "Signed out", "This needs a console session: sign in again.") };
  }
  actAsAdmin(event, token);
  const found = ROUTES[path];
  if (!found) return { kind: "page", status: 404, html: messagePage(assets, "Not found", `The console has no page at ${path}.`) };
  const request: ConsoleRequest = { event, deps, token, csrf: signer.csrfToken(session), form: new URLSearchParams(), assets };
  if (method === "GET" && found.GET) return found.GET(request);
  if (method === "POST" && found.POST) {
    request.form = await readForm(event);
    const refused =
      crossSiteRefusal(event) ?? (signer.csrfMatches(session, request.form.get("_csrf") ?? event.req.headers.get("x-gw-csrf")) ? undefined : "csrf");
    if (refused) return refusal(assets, refused);
    if (found.POST.change && token.readOnly)
      return {
        kind: "page",
        status: 403,
        html: messagePage(assets, "Read-only", `The admin token "${token.name}" is read-only: it can look at everything and change nothing.`),
      };
    return found.POST.handler(request);
  }
  event.res.headers.set("allow", [found.GET ? "GET, HEAD" : undefined, found.POST ? "POST" : undefined].filter(Boolean).join(", "));
  return { kind: "page", status: 405, html: messagePage(assets, "Method not allowed", `${event.req.method} is not allowed on ${path}.`) };
}

async function signIn(event: H3Event, method: string, deps: ConsoleDeps, signer: SessionSigner, assets: ConsoleAssets): Promise<ConsoleAnswer> {
  if (method === "GET") {
    const session = signer.read(getCookie(event, SESSION_COOKIE), Date.now());
    if (session && liveToken(deps.gateway, session.tokenId)) return { kind: "redirect", location: "/console" };
    return { kind: "page", html: signInPage(assets) };
  }
  if (method !== "POST") {
    event.res.headers.set("allow", "GET, HEAD, POST");
    return { kind: "page", status: 405, html: messagePage(assets, "Method not allowed", `${event.req.method} is not allowed on ${SIGN_IN_PATH}.`) };
  }
  // No session yet, so no CSRF token: the browser's own word on where the form came from decides.
  const refused = crossSiteRefusal(event);
  if (refused) return refusal(assets, refused);
  const presented = (await readForm(event)).get("token")?.trim() ?? "";
  const now = Date.now();
  const token = presented ? findAdminToken(deps.gateway.store.data, presented) : undefined;
  if (!token || !isLiveAdminToken(token, now)) {
    const reason = token?.revokedAt ? "This admin token was revoked." : token ? "This admin token has expired." : "That is not an admin token of this gateway.";
    return { kind: "page", status: 401, html: signInPage(assets, reason) };
  }
  actAsAdmin(event, token);
  auditAction(event, "console.sign_in", token.id);
  setCookie(event, SESSION_COOKIE, signer.issue(token.id, now), { ...cookieOptions(event), maxAge: SESSION_LIFETIME_SECONDS });
  return { kind: "redirect", location: "/console" };
}

async function signOut(
  event: H3Event,
  signer: SessionSigner,
  assets: ConsoleAssets,
  session: ConsoleSession | null,
  token: AdminTokenRecord | undefined,
): Promise<ConsoleAnswer> {
  const form = await readForm(event);
  if (session && token) {
    const refused = crossSiteRefusal(event) ?? (signer.csrfMatches(session, form.get("_csrf") ?? event.req.headers.get("x-gw-csrf")) ? undefined : "csrf");
    if (refused) return refusal(assets, refused);
    actAsAdmin(event, token);
    auditAction(event, "console.sign_out", token.id);
  }
  deleteCookie(event, SESSION_COOKIE, cookieOptions(event));
  return { kind: "redirect", location: SIGN_IN_PATH };
}

/** The admin token a session names, while it is live; the store re-read first when another process changed it (routes/console.ts did). */
function liveToken(gateway: Gateway, tokenId: string): AdminTokenRecord | undefined {
  const token = adminTokensOf(gateway.store.data).find((record) => record.id === tokenId);
  return token && isLiveAdminToken(token, Date.now()) ? token : undefined;
}

/**
 * Why a POST is taken for another site's: the browser says so (Sec-Fetch-Site other than
 * same-origin; every current browser sends it), or its Origin names another host. `Origin: null`
 * decides nothing: under the console's Referrer-Policy no-referrer, browsers send null for the
 * console's own forms too. A POST that carries neither still needs the session's CSRF token (all
 * but sign-in do).
 */
function crossSiteRefusal(event: H3Event): "cross-site" | undefined {
  const site = event.req.headers.get("sec-fetch-site");
  if (site !== null) return site === "same-origin" ? undefined : "cross-site";
  const origin = event.req.headers.get("origin");
  if (origin === null || origin === "null") return undefined;
  try {
    return new URL(origin).host === event.req.headers.get("host") ? undefined : "cross-site";
  } catch {
    return "cross-site";
  }
}

function refusal(assets: ConsoleAssets, why: "cross-site" | "csrf"): ConsoleAnswer {
  const message =
    why === "cross-site"
      ? "This form was sent from another site; the console takes changes from its own pages only."
      : "This form is stale or did not come from the console (its CSRF token is missing or wrong): reload the page and try again.";
  return { kind: "page", status: 403, html: messagePage(assets, "Refused", message) };
}

async function readForm(event: H3Event): Promise<URLSearchParams> {
  const type = event.req.headers.get("content-type") ?? "";
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) return new URLSearchParams();
  return new URLSearchParams(await readLimitedText(event, MAX_FORM_BYTES));
}

function cookieOptions(event: H3Event): { path: string; httpOnly: true; sameSite: "strict"; secure: boolean } {
  const socket = nodeRequestOf(event)?.socket as TLSSocket | undefined;
  return { path: "/console", httpOnly: true, sameSite: "strict", secure: socket?.encrypted === true };
}

function answer(event: H3Event, answered: ConsoleAnswer): unknown {
  if (answered.kind === "redirect") {
    event.res.status = 303;
    event.res.headers.set("location", answered.location);
    return "";
  }
  if (answered.kind === "download") {
    event.res.headers.set("content-type", answered.type);
    event.res.headers.set("content-disposition", `attachment; filename="${answered.filename}"`);
    const encoder = new TextEncoder();
    const iterator = answered.body[Symbol.asyncIterator]();
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        const next = await iterator.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(next.value));
      },
      async cancel() {
        await iterator.return?.();
      },
    });
  }
  event.res.status = answered.status ?? 200;
  event.res.headers.set("content-type", "text/html; charset=utf-8");
  return answered.html.toString();
}
