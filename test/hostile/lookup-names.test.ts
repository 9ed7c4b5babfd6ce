// Client-supplied names that are also the names of Object.prototype's members (`__proto__`,
// `constructor`, `toString`, `hasOwnProperty` ...) reaching a lookup: every one is an ordinary
// unknown name, answered like any other. The video endpoint and MCP video_generate (ratio,
// resolution, model), a transcription form field, an edit form field, a vendor's HTML entity in a
// search result, and plan / provider / tool names given to `gw`.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import test, { type ExecutionContext } from "ava";
import sharp from "sharp";
import { gw, tempHome } from "../_gw-cli.js";
import { type FakeBrave, startFakeBrave } from "../fakes/brave.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "../helpers/gateway-harness.js";

const BUILT_IN_NAMES = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"];

let gateway: TestGateway;
let home: string;
let key: string;
let brave: FakeBrave;
let photo: string;

test.before(async () => {
  brave = await startFakeBrave({ apiKey: "brave-token-for-lookups" });
  home = await makeHome((config) => {
    config.providers = { local: { type: "local" }, brave: { type: "brave", baseUrl: brave.url, apiKey: "brave-token-for-lookups" } };
    config.video = { tickSeconds: 60, pollIntervalSeconds: 60 };
    config.tools.search = { default: "brave/web", allow: [] };
  });
  gateway = await startTestGateway(home);
  key = await addKey(home, "namer", "pro");
  const png = await sharp({ create: { width: 640, height: 360, channels: 3, background: { r: 20, g: 120, b: 60 } } })
    .png()
    .toBuffer();
  photo = `data:image/png;base64,${png.toString("base64")}`;
});

test.after.always(async () => {
  await gateway?.shutdown();
  await brave?.close();
});

interface Answer {
  status: number;
  body: any;
}

async function post(route: string, body: BodyInit, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${gateway.url}${route}`, { method: "POST", headers: { authorization: `Bearer ${key}`, ...headers }, body });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

const postJson = (route: string, body: unknown) => post(route, JSON.stringify(body), { "content-type": "application/json" });

function isEnvelope(t: ExecutionContext, answer: Answer, status: number, code: string, param: string, what: string): void {
  t.is(answer.status, status, `${what}: ${JSON.stringify(answer.body)}`);
  t.is(answer.body?.error?.code, code, what);
  t.is(answer.body?.error?.param, param, what);
  t.is(answer.body?.error?.type, "invalid_request_error", what);
  t.is(typeof answer.body?.error?.message, "string", what);
}

test("video generations: a ratio, resolution or model named like a built-in is a 400 naming the parameter", async (t) => {
  for (const name of BUILT_IN_NAMES) {
    const ratio = await postJson("/v1/video/generations", { prompt: "a calm pan", image_url: photo, ratio: name });
    isEnvelope(t, ratio, 400, "invalid_parameter", "ratio", `ratio ${name}`);
    t.true(ratio.body.error.message.includes(name), ratio.body.error.message);
    t.regex(ratio.body.error.message, /16:9/, "it says which ratios the model offers");

    const resolution = await postJson("/v1/video/generations", { prompt: "a calm pan", image_url: photo, resolution: name });
    isEnvelope(t, resolution, 400, "invalid_parameter", "resolution", `resolution ${name}`);
    t.regex(resolution.body.error.message, /480p/, "it says which resolutions the model offers");

    const model = await postJson("/v1/video/generations", { prompt: "a calm pan", image_url: photo, model: name });
    isEnvelope(t, model, 400, "model_not_allowed", "model", `model ${name}`);
  }
  const jobs = await fetch(`${gateway.url}/v1/video/jobs`, { headers: { authorization: `Bearer ${key}` } });
  t.deepEqual((await jobs.json()).data, [], "nothing was queued");
});

test("MCP video_generate: the same names are tool errors carrying the 400 envelope and the parameter", async (t) => {
  const client = new Client({ name: "gw-lookup-names", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  try {
    for (const name of BUILT_IN_NAMES) {
      for (const [field, code] of [
        ["ratio", "invalid_parameter"],
        ["resolution", "invalid_parameter"],
        ["model", "model_not_allowed"],
      ] as const) {
        const result = await client.callTool({ name: "video_generate", arguments: { prompt: "a calm pan", image_url: photo, [field]: name } });
        t.true(result.isError, `${field} ${name}: ${JSON.stringify(result)}`);
        const content = result.content as Array<{ type: string; text?: string }>;
        const { error } = JSON.parse(content.find((block) => block.type === "text")?.text ?? "{}") as { error: Record<string, unknown> };
        t.like(error, { status: 400, code, param: field, type: "invalid_request_error" }, `${field} ${name}`);
      }
    }
  } finally {
    await client.close();
  }
});

test("transcriptions: a form field named __proto__ is an unknown parameter like any other", async (t) => {
  for (const name of BUILT_IN_NAMES) {
    const form = new FormData();
    form.append("file", new Blob([Buffer.from("RIFF....WAVEfmt ")], { type: "audio/wav" }), "speech.wav");
    form.append(name, "x");
    const answer = await post("/v1/audio/transcriptions", form);
    isEnvelope(t, answer, 400, "invalid_parameter", name, `field ${name}`);
    t.is(answer.body.error.message, `Unknown parameter: '${name}'.`);
  }
});

test("image edits: a form field named like a built-in is ignored like any other unknown field, never 'sent twice'", async (t) => {
  const editForm = (extra?: string) => {
    const form = new FormData();
    form.append("prompt", "make it blue");
    form.append("image", new Blob([Buffer.from(photo.split(",")[1]!, "base64")], { type: "image/png" }), "photo.png");
    if (extra !== undefined) form.append(extra, "1");
    return form;
  };
  const plain = await post("/v1/image/edits", editForm());
  const unknown = await post("/v1/image/edits", editForm("some_unknown_field"));
  t.deepEqual(unknown, plain, "an unknown field changes nothing");
  for (const name of BUILT_IN_NAMES) {
    const answer = await post("/v1/image/edits", editForm(name));
    t.deepEqual(answer, plain, `field ${name}: ${JSON.stringify(answer.body)}`);
  }
});

test("search: an HTML entity named like a built-in stays as the vendor wrote it", async (t) => {
  brave.set({
    results: [{ title: "Tom &constructor; Jerry &amp; co", url: "https://example.test/cartoons", description: "&toString; &__proto__; &lt;b&gt;" }],
  });
  const answer = await postJson("/v1/search", { query: "cartoons" });
  t.is(answer.status, 200, JSON.stringify(answer.body));
  const [result] = answer.body.data.results;
  t.is(result.title, "Tom &constructor; Jerry & co");
  t.is(result.snippet ?? result.content ?? result.description, "&toString; &__proto__; <b>");
});

// `gw` resolves plan, provider and tool names from the command line against the config file.
test("gw: a plan, provider or tool named like a built-in is unknown, and nothing is written", async (t) => {
  const cliHome = tempHome();
  const init = await gw(["init", "--home", cliHome]);
  t.is(init.code, 0, init.stderr);
  for (const name of ["constructor", "__proto__", "toString"]) {
    const agent = await gw(["agents", "create", `agent-${name.replace(/_/g, "")}`, "--plan", name, "--home", cliHome]);
    t.not(agent.code, 0, `plan ${name}: ${agent.stdout}`);
    t.regex(agent.stderr, new RegExp(`unknown plan "${name}"`), `plan ${name}`);

    const provider = await gw(["providers", "set", name, "--api-key", "sk-nothing", "--home", cliHome]);
    t.not(provider.code, 0, `provider ${name}: ${provider.stdout}`);
    t.regex(provider.stderr, new RegExp(`no provider "${name}"`), `provider ${name}`);

    const tool = await gw(["tools", "enable", name, "local/lanczos", "--home", cliHome]);
    t.not(tool.code, 0, `tool ${name}: ${tool.stdout}`);
    t.regex(tool.stderr, new RegExp(`unknown tool "${name}"`), `tool ${name}`);
  }
  const agents = await gw(["agents", "list", "--json", "--home", cliHome]);
  t.is(agents.code, 0, agents.stderr);
  t.deepEqual(JSON.parse(agents.stdout), [], "no agent was created");
  // A provider may be called `constructor` (letters only): it is new, not "already there".
  const added = await gw(["providers", "add", "constructor", "--type", "openai", "--base-url", "http://127.0.0.1:9/v1", "--home", cliHome]);
  t.is(added.code, 0, added.stderr);
  const listed = await gw(["providers", "list", "--json", "--home", cliHome]);
  t.true(JSON.stringify(JSON.parse(listed.stdout)).includes('"constructor"'), listed.stdout);
});
