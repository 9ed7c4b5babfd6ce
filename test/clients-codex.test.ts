// Codex CLI (@openai/codex, its native binary from the platform package npm installed), unchanged:
// `codex exec` with a `model_providers` entry for gw (wire_api "responses") in a temp CODEX_HOME,
// gw's key in the env var the entry names. It prints the upstream's answer, and gw writes one
// usage row naming `responses` per call. Update checks, analytics and the plugin catalog are off
// in the config (they would reach api.github.com and chatgpt.com), so nothing leaves the machine.
import { writeFileSync } from "node:fs";
import path from "node:path";
import test from "ava";
import {
  type ClientRig,
  claudeModel,
  clientEnv,
  codexOfflineConfig,
  codexScript,
  compatModel,
  describeRun,
  runCli,
  startClientRig,
} from "./helpers/real-clients.js";
import { tempDir } from "./helpers/temp-dirs.js";

let rig: ClientRig;

test.before(async () => {
  rig = await startClientRig();
});

test.after.always(async () => {
  await rig?.close();
});

test.beforeEach(() => rig.reset());

/** `codex exec <prompt>` against gw with `model`, in an empty work folder; what it printed. */
async function codexExec(model: string, prompt: string) {
  const codexHome = tempDir("gw-codex-home-");
  writeFileSync(
    path.join(codexHome, "config.toml"),
    [
      `model = "${model}"`,
      `model_provider = "gw"`,
      ...codexOfflineConfig.head,
      ...codexOfflineConfig.tables,
      "[model_providers.gw]",
      `name = "gw"`,
      `base_url = "${rig.gateway.v1}"`,
      `env_key = "GW_API_KEY"`,
      `wire_api = "responses"`,
      "",
    ].join("\n"),
  );
  const env = clientEnv({ CODEX_HOME: codexHome, GW_API_KEY: rig.key, CI: "true" });
  return runCli(process.execPath, [codexScript, "exec", "--skip-git-repo-check", prompt], { env, cwd: tempDir("gw-codex-work-") });
}

for (const target of [
  {
    name: "an OpenAI-compatible upstream",
    model: compatModel,
    reply: (text: string) => rig.openai.enqueue({ content: text }),
    requests: () => rig.openai.requests.filter((request) => request.path.endsWith("/chat/completions")),
  },
  {
    name: "an Anthropic upstream",
    model: claudeModel,
    reply: (text: string) => rig.anthropic.enqueue({ content: text }),
    requests: () => rig.anthropic.requests.filter((request) => request.path === "/v1/messages"),
  },
]) {
  test.serial(`codex exec over ${target.name}: prints the upstream's answer, one usage row naming responses`, async (t) => {
    const before = rig.rows("responses").length;
    target.reply("Hello from the upstream, via gw.");
    const result = await codexExec(target.model, "Say hello.");
    t.is(result.code, 0, describeRun(result));
    t.is(result.stdout.trim(), "Hello from the upstream, via gw.", describeRun(result));
    const sent = target.requests();
    t.is(sent.length, 1, "one model call");
    t.is(sent[0]!.body.stream, true, "Codex streams");
    t.true(JSON.stringify(sent[0]!.body.messages.at(-1)).includes("Say hello."), "the prompt is the last user turn");
    const rows = await rig.rowsReach("responses", before + 1);
    t.is(rows.length, before + 1);
    t.like(rows.at(-1), { endpoint: "responses", model: target.model });
  });
}

test.serial("codex exec runs the command the model asks for (exec_command) and sends its output back: two calls, two usage rows", async (t) => {
  const before = rig.rows("responses").length;
  rig.openai.enqueue(
    { toolCalls: [{ id: "call_echo", name: "exec_command", arguments: JSON.stringify({ cmd: "echo gw-tool-loop" }) }] },
    { content: "The command printed gw-tool-loop." },
  );
  const result = await codexExec(compatModel, "Run echo gw-tool-loop and tell me what it printed.");
  t.is(result.code, 0, describeRun(result));
  t.is(result.stdout.trim(), "The command printed gw-tool-loop.", describeRun(result));
  const sent = rig.openai.requests.filter((request) => request.path.endsWith("/chat/completions"));
  t.is(sent.length, 2);
  t.true(
    sent[0]!.body.tools.some((tool: { function: { name: string } }) => tool.function.name === "exec_command"),
    "Codex's tools reach the upstream",
  );
  const messages = sent[1]!.body.messages as Array<Record<string, any>>;
  t.deepEqual(messages.at(-2)!.tool_calls, [
    { id: "call_echo", type: "function", function: { name: "exec_command", arguments: '{"cmd":"echo gw-tool-loop"}' } },
  ]);
  t.is(messages.at(-1)!.role, "tool");
  t.is(messages.at(-1)!.tool_call_id, "call_echo");
  t.regex(messages.at(-1)!.content, /gw-tool-loop/, "the command's output goes back to the model");
  const rows = await rig.rowsReach("responses", before + 2);
  t.is(rows.length, before + 2);
});
