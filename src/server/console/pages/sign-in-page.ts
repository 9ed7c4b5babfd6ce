// Sign-in: an admin token (`gw admin token create --name NAME`) posted in a form. The token goes
// to this server only, once; what the browser keeps is the signed session cookie.
import type { ConsoleAssets } from "../console-assets.js";
import { type Html, html } from "../html.js";
import { barePage } from "../layout.js";

export function signInPage(assets: ConsoleAssets, problem?: string): Html {
  return barePage(
    assets,
    "Sign in",
    html`${problem ? html`<p class="message error" role="alert">${problem}</p>` : ""}
<form method="post" action="/console/sign-in" class="sign-in">
<label for="token">Admin token</label>
<input id="token" name="token" type="password" autocomplete="off" spellcheck="false" required placeholder="gwa_…">
<button type="submit">Sign in</button>
</form>
<p class="hint">Make one on the gateway's machine with <code>gw admin token create --name NAME</code> (add <code>--read-only</code> for a token that can look but not change). The session lasts 12 hours, or until the token is revoked.</p>`,
  );
}
