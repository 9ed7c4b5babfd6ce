// Claude Code (@anthropic-ai/claude-code, its native binary from the platform package), unchanged:
// `claude -p` with ANTHROPIC_BASE_URL at gw's /anthropic and a gw key, a temp HOME, telemetry,
// error reporting, the auto-updater and all non-essential traffic off (nothing leaves the
// machine). It prints the upstream's answer, and gw writes one usage row naming `messages` per
// model call it answered.
import test from "ava";
import { quietLogger } from "./helpers/gateway-harness.js";
import { type ClientRig, claudeBinary, claudeCodeOfflineEnv, clientEnv, describeRun, runCli, startClientRig } from "./helpers/real-clients.js";
import { tempDir } from "./helpers/temp-dirs.js";

/** A current model name as a user would route it: Claude Code sends its current request shape for it (adaptive thinking, effort, context management). */
const model = "claude/claude-sonnet-4-6";

let rig: ClientRig;
let claudeBin: string;

test.before(async () => {
  claudeBin = await claudeBinary();
  rig = await startClientRig([{ id: model, name: "Claude Sonnet", context_length: 200000, pricing: { input_per_mtok: 3, output_per_mtok: 15 } }]);
});

test.after.always(async () => {
  await rig?.close();
});

test.beforeEach(() => rig.reset());

/** `claude -p <prompt>` against gw in an empty work folder, authenticated with `auth` (a gw key). */
function claudePrint(prompt: string, auth: Record<string, string>) {
  const env = clientEnv({
    ANTHROPIC_BASE_URL: `${rig.gateway.url}/anthropic`,
    ANTHROPIC_MODEL: model,
    ...auth,
    ...claudeCodeOfflineEnv,
    CI: "true",
  });
  return runCli(claudeBin, ["-p", prompt], { env, cwd: tempDir("gw-claude-work-") });
}

/** gw's answers to POST /anthropic/v1/messages so far. */
const messagesAnswers = () =>
  quietLogger.accessRecords.filter(
    (record) => record.method === "POST" && record.path.startsWith("/anthropic/v1/messages") && !record.path.includes("count_tokens"),
  );

for (const [name, auth] of [
  ["ANTHROPIC_API_KEY (x-api-key)", { ANTHROPIC_API_KEY: "" }],
  ["ANTHROPIC_AUTH_TOKEN (Authorization: Bearer)", { ANTHROPIC_AUTH_TOKEN: "" }],
] as const) {
  test.serial(`claude -p with the key as ${name}: prints the upstream's answer, one usage row naming messages per call`, async (t) => {
    const rowsBefore = rig.rows("messages").length;
    const answersBefore = messagesAnswers().length;
    rig.anthropic.set({ content: "Hello from the upstream, via gw." });
    const variable = Object.keys(auth)[0]!;
    const result = await claudePrint("Say hello.", { [variable]: rig.key });
    const answers = messagesAnswers().slice(answersBefore);
    const exchange = `${describeRun(result)}\n--- gw answered\n${answers.map((record) => `${record.status} ${record.path}`).join("\n")}`;
    t.is(result.code, 0, exchange);
    t.is(result.stdout.trim(), "Hello from the upstream, via gw.", exchange);
    t.true(answers.length >= 1 && answers.every((record) => record.status === 200), exchange);
    const sent = rig.anthropic.requests.filter((request) => request.path === "/v1/messages");
    t.true(sent.length >= 1);
    t.is(sent[0]!.body.model, "claude-sonnet-4-6");
    t.true(JSON.stringify(sent[0]!.body.messages).includes("Say hello."), "the prompt reaches the upstream");
    const rows = await rig.rowsReach("messages", rowsBefore + answers.length);
    t.is(rows.length - rowsBefore, answers.length, "one row per model call");
    t.true(rows.slice(rowsBefore).every((row) => row.model === model));
  });
}
