// The playground: chat (streamed) and a picture prompt against the public API, from the browser,
// with an API key pasted into the page. The key stays in the page's memory: it is in no form (so
// nothing can submit it anywhere), the script sends it only to /v1/chat/completions and
// /v1/images/generations, and nothing stores it; the session cookie is not sent there (its Path
// is /console). Calls are billed to that key like any other.
import type { ConsoleAnswer, ConsoleRequest } from "../console-app.js";
import { html } from "../html.js";
import { layout } from "../layout.js";

export async function playgroundPage(request: ConsoleRequest): Promise<ConsoleAnswer> {
  const models = request.deps.gateway.config.models.map((model) => model.id);
  const body = html`<div id="playground" class="playground">
<section class="pg-key">
<label for="pg-key">API key</label>
<div class="row"><input id="pg-key" type="password" autocomplete="off" spellcheck="false" placeholder="gw_…"><button type="button" id="pg-forget" class="link">Forget</button></div>
<p class="hint">Used by this page only, to call the gateway's public API; kept in the page's memory (gone when you leave or reload), never sent to the console, never stored. Calls are billed to this key.</p>
</section>
<datalist id="pg-models">${models.map((model) => html`<option value="${model}"></option>`)}</datalist>
<section class="pg-chat">
<h2>Chat</h2>
<label>Model <input id="pg-model" list="pg-models" value="${models[0] ?? ""}" autocomplete="off"></label>
<div id="pg-transcript" class="transcript" aria-live="polite"></div>
<label for="pg-message">Message</label>
<textarea id="pg-message" rows="3" placeholder="Say something (Ctrl+Enter sends)"></textarea>
<div class="row"><button type="button" id="pg-send">Send</button><button type="button" id="pg-stop" class="link" disabled>Stop</button><button type="button" id="pg-clear" class="link">New conversation</button></div>
<p id="pg-status" class="hint" role="status"></p>
</section>
<section class="pg-image">
<h2>Picture</h2>
<label>Model <input id="pg-image-model" list="pg-models" autocomplete="off" placeholder="an image model"></label>
<label>Size <select id="pg-image-size"><option value="">default</option><option>1024x1024</option><option>1024x1536</option><option>1536x1024</option><option>512x512</option></select></label>
<label for="pg-image-prompt">Prompt</label>
<textarea id="pg-image-prompt" rows="2" placeholder="A lighthouse at dusk"></textarea>
<div class="row"><button type="button" id="pg-draw">Draw</button></div>
<p id="pg-image-status" class="hint" role="status"></p>
<img id="pg-image" alt="" hidden>
</section>
</div>`;
  return { kind: "page", html: layout(request, { title: "Playground", path: "/console/playground", body }) };
}
