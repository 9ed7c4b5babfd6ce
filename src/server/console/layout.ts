// The frame of every console page: the head (the console's stylesheet and script, uPlot's on pages
// with a chart), the navigation, who is signed in (and whether read-only), and sign-out.
import type { ConsoleRequest } from "./console-app.js";
import type { ConsoleAssets } from "./console-assets.js";
import { type Html, html } from "./html.js";

const NAVIGATION = [
  ["/console", "Overview"],
  ["/console/keys", "Keys"],
  ["/console/usage", "Usage"],
  ["/console/requests", "Requests"],
  ["/console/jobs", "Jobs"],
  ["/console/providers", "Providers"],
  ["/console/playground", "Playground"],
] as const;

export interface PageFrame {
  title: string;
  /** The navigation entry to mark as the current page. */
  path: string;
  body: Html;
  /** Load uPlot. */
  chart?: boolean;
}

function head(assets: ConsoleAssets, title: string, chart = false): Html {
  return html`<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${title} · gw console</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${assets.url("console.css")}">
${chart ? html`<link rel="stylesheet" href="${assets.url("uplot.css")}">\n<script src="${assets.url("uplot.js")}" defer></script>` : ""}
<script src="${assets.url("console.js")}" defer></script>
</head>`;
}

export function layout(request: ConsoleRequest, frame: PageFrame): Html {
  const { token, csrf, assets } = request;
  return html`<!doctype html>
<html lang="en">
${head(assets, frame.title, frame.chart)}
<body>
<header class="top">
<a class="brand" href="/console">gw <span>console</span></a>
<nav aria-label="Console">${NAVIGATION.map(
    ([path, label]) => html`<a href="${path}"${path === frame.path ? html` aria-current="page"` : ""}>${label}</a>`,
  )}</nav>
<div class="who">
<span class="token" title="Signed in with this admin token">${token.name}${token.readOnly ? html` <span class="badge">read-only</span>` : ""}</span>
<form method="post" action="/console/sign-out"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit" class="link">Sign out</button></form>
</div>
</header>
<main>
<h1>${frame.title}</h1>
${frame.body}
</main>
</body>
</html>
`;
}

/** A page with no navigation: sign-in, and the answers for a refused or failed request. */
export function barePage(assets: ConsoleAssets, title: string, body: Html): Html {
  return html`<!doctype html>
<html lang="en">
${head(assets, title)}
<body class="bare">
<main>
<p class="brand">gw <span>console</span></p>
<h1>${title}</h1>
${body}
</main>
</body>
</html>
`;
}

export function messagePage(assets: ConsoleAssets, title: string, message: string): Html {
  return barePage(assets, title, html`<p class="message">${message}</p>\n<p><a href="/console">Back to the console</a></p>`);
}

/** The hidden field every form that changes something carries. */
export function csrfField(request: ConsoleRequest): Html {
  return html`<input type="hidden" name="_csrf" value="${request.csrf}">`;
}

export function count(value: number): string {
  return value.toLocaleString("en-US");
}

/** Credits and the dollars they are. */
export function creditsText(request: ConsoleRequest, credits: number): string {
  const dollars = credits / request.deps.gateway.config.billing.creditsPerUsd;
  return `${count(credits)} ($${dollars.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 4 })})`;
}
