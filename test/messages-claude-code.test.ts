// What Claude Code (2.1.x, ANTHROPIC_BASE_URL=gw/anthropic) sends, through the official
// @anthropic-ai/sdk and raw fetch: `?beta=true` on the path, an anthropic-beta list, a system
// array with cache_control, a system-role message between user turns, adaptive thinking,
// context_management, output_config, metadata.user_id as a JSON string, tools; count_tokens; the
// HEAD probe of the base URL. Native to an Anthropic upstream, converted to OpenAI-compatible and
// Gemini ones; one usage row per messages call, none for count_tokens.

import Anthropic from "@anthropic-ai/sdk";
import test from "ava";
import { homePaths } from "../src/config/paths.js";
import { periodOf, UsageLog } from "../src/store/usage-log.js";
import type { FakeAnthropic } from "./fakes/anthropic.js";
import type { FakeGemini } from "./fakes/gemini.js";
import type { FakeOpenAI } from "./fakes/openai.js";
import { type ChatVendors, startChatVendors } from "./helpers/chat-vendors.js";
import { addKey, type TestGateway } from "./helpers/gateway-harness.js";

let vendors: ChatVendors;
let anthropic: FakeAnthropic;
let gemini: FakeGemini;
let openai: FakeOpenAI;
let gateway: TestGateway;
let key: string;

const NATIVE = "claude/claude-sonnet-4-5";
const COMPAT = "compat/gpt-x";
const GOOGLE = "google/gemini-2.5-flash";

/** Claude Code's betas, as the SDK joins them (comma, no spaces). */
const CLAUDE_CODE_BETAS = [
  "claude-code-20250219",
  "interleaved-thinking-2025-05-14",
  "context-management-2025-06-27",
  "prompt-caching-scope-2026-01-05",
  "mid-conversation-system-2026-04-07",
  "effort-2025-11-24",
];
const WITHOUT_MID_CONVERSATION_SYSTEM = CLAUDE_CODE_BETAS.filter((beta) => !beta.startsWith("mid-conversation-system"));

const SYSTEM = [
  { type: "text", text: "You are Claude Code, Anthropic's official CLI for Claude.", cache_control: { type: "ephemeral" } },
  { type: "text", text: "Answer in the user's language.", cache_control: { type: "ephemeral", ttl: "1h" } },
];
const TOOLS = [
  {
    name: "Bash",
    description: "Run a shell command",
    input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  },
  {
    name: "Read",
    description: "Read a file",
    input_schema: { type: "object", properties: { file_path: { type: "string" } }, required: ["file_path"] },
    cache_control: { type: "ephemeral" },
  },
];
const MID_SYSTEM_TEXT = "The user switched to plan mode.";
const USER_ID = JSON.stringify({ device_id: "d3v1c3", account_uuid: "", session_id: "5e55-10n" });

/** A request body shaped like Claude Code's. */
function claudeCodeBody(model: string, stream: boolean): Record<string, unknown> {
  return {
    model,
    max_tokens: 32000,
    system: SYSTEM,
    messages: [
      { role: "user", content: [{ type: "text", text: "hello there" }] },
      { role: "system", content: MID_SYSTEM_TEXT },
      { role: "user", content: [{ type: "text", text: "list files", cache_control: { type: "ephemeral" } }] },
    ],
    tools: TOOLS,
    metadata: { user_id: USER_ID },
    thinking: { type: "adaptive" },
    context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
    output_config: { effort: "high" },
    stream,
  };
}

test.before(async () => {
  vendors = await startChatVendors({ contextLength: 200_000 });
  ({ anthropic, gemini, openai, gateway } = vendors);
  key = await addKey(vendors.home, "cody", "max");
});

test.after.always(async () => {
  await vendors?.close();
});

test.beforeEach(() => vendors.reset());

const sdk = (options: { apiKey?: string; authToken?: string } = { apiKey: key }) =>
  new Anthropic({ baseURL: `${gateway.url}/anthropic`, maxRetries: 0, apiKey: options.apiKey ?? null, authToken: options.authToken ?? null });
const rows = () => UsageLog.readRows(homePaths(gateway.home).usageDir, periodOf(new Date()));

/** POST as Claude Code does: `?beta=true`, the betas, the key in x-api-key. */
function post(path: string, body: unknown, betas: string[] = CLAUDE_CODE_BETAS): Promise<Response> {
  return fetch(`${gateway.url}/anthropic/v1/${path}?beta=true`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json", "anthropic-version": "2023-06-01", "anthropic-beta": betas.join(",") },
    body: JSON.stringify(body),
  });
}

/** Every `data:` JSON of an SSE body, with its event name. */
function sseEvents(text: string): Array<{ event: string; data: Record<string, unknown> }> {
  return text
    .split("\n\n")
    .filter((frame) => frame.includes("data:"))
    .map((frame) => {
      const event = /^event: (.*)$/m.exec(frame)?.[1] ?? "message";
      const data = JSON.parse(/^data: (.*)$/m.exec(frame)?.[1] ?? "{}") as Record<string, unknown>;
      return { event, data };
    });
}

test.serial("native, with the mid-conversation-system beta: the body and betas reach Anthropic unchanged (model aside); one usage row", async (t) => {
  const before = rows().length;
  anthropic.enqueue({ content: "Here are the files.", usage: { input_tokens: 40, output_tokens: 4, cache_read_input_tokens: 12 } });
  const body = claudeCodeBody(NATIVE, false);
  const message = await sdk().beta.messages.create(body as never, {
    timeout: 60_000, // the SDK asks for streaming, or a timeout of its own, at Claude Code's max_tokens
    query: { beta: "true" },
    headers: { "anthropic-beta": CLAUDE_CODE_BETAS.join(",") },
  });
  t.is(message.model, NATIVE);
  t.deepEqual(
    message.content.map((block) => (block as { text?: string }).text),
    ["Here are the files."],
  );
  const sent = anthropic.requests.at(-1)!;
  t.is(sent.path, "/v1/messages");
  t.deepEqual(sent.body, { ...body, model: "claude-sonnet-4-5" });
  t.is(sent.headers["anthropic-beta"], CLAUDE_CODE_BETAS.join(","));
  t.is(sent.headers["x-api-key"], "sk-ant-upstream");
  const added = rows().slice(before);
  t.is(added.length, 1);
  t.is(added[0]!.endpoint, "messages");
  t.deepEqual(added[0]!.units, { prompt_tokens: 52, completion_tokens: 4, cached_tokens: 12 });
});

test.serial("native stream over raw fetch with ?beta=true: events relayed, the system message passed through; one usage row", async (t) => {
  const before = rows().length;
  anthropic.enqueue({ content: "one two three", usage: { input_tokens: 30, output_tokens: 3 } });
  const response = await post("messages", claudeCodeBody(NATIVE, true));
  t.is(response.status, 200);
  t.regex(response.headers.get("content-type") ?? "", /^text\/event-stream/);
  const events = sseEvents(await response.text());
  t.is(events[0]!.event, "message_start");
  t.is((events[0]!.data.message as { model: string }).model, NATIVE);
  t.is(
    events
      .filter((event) => event.event === "content_block_delta")
      .map((event) => (event.data.delta as { text: string }).text)
      .join(""),
    "one two three",
  );
  t.is(events.at(-1)!.event, "message_stop");
  const sent = anthropic.requests.at(-1)!.body;
  t.is(sent.stream, true);
  t.deepEqual(sent.messages[1], { role: "system", content: MID_SYSTEM_TEXT });
  t.deepEqual(sent.thinking, { type: "adaptive" });
  t.is(sent.metadata.user_id, USER_ID);
  const added = rows().slice(before);
  t.is(added.length, 1);
  t.deepEqual(added[0]!.units, { prompt_tokens: 30, completion_tokens: 3 });
});

test.serial("native, without the mid-conversation-system beta: system messages fold into the top-level system, user turns merged", async (t) => {
  const before = rows().length;
  const body = claudeCodeBody(NATIVE, false);
  body.messages = [
    ...(body.messages as unknown[]),
    { role: "assistant", content: [{ type: "text", text: "Plan: look around." }] },
    { role: "system", content: [{ type: "text", text: "Shown once." }], clear_at: "next_user_message" },
    { role: "user", content: "go on" },
    { role: "system", content: [{ type: "text", text: "Still shown." }], clear_at: "next_user_message", output_config: { effort: "low" } },
  ];
  for (const stream of [false, true]) {
    anthropic.enqueue({ content: "ok" });
    const response = await post("messages", { ...body, stream }, WITHOUT_MID_CONVERSATION_SYSTEM);
    t.is(response.status, 200, await response.clone().text());
    if (stream) t.is(sseEvents(await response.text()).at(-1)!.event, "message_stop");
    else t.is(((await response.json()) as { model: string }).model, NATIVE);
    const sent = anthropic.requests.at(-1)!;
    t.is(sent.headers["anthropic-beta"], WITHOUT_MID_CONVERSATION_SYSTEM.join(","));
    t.deepEqual(sent.body.system, [...SYSTEM, { type: "text", text: MID_SYSTEM_TEXT }, { type: "text", text: "Still shown." }]);
    t.deepEqual(sent.body.messages, [
      {
        role: "user",
        content: [
          { type: "text", text: "hello there" },
          { type: "text", text: "list files", cache_control: { type: "ephemeral" } },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "Plan: look around." }] },
      { role: "user", content: "go on" },
    ]);
    t.deepEqual(sent.body.context_management, body.context_management);
    t.deepEqual(sent.body.output_config, { effort: "high" });
  }
  t.is(rows().length - before, 2);
});

test.serial("native: every thinking form passes through as sent", async (t) => {
  for (const thinking of [{ type: "adaptive" }, { type: "enabled", budget_tokens: 2048 }, { type: "disabled" }]) {
    anthropic.enqueue({ content: "ok" });
    const response = await post("messages", { ...claudeCodeBody(NATIVE, false), thinking });
    t.is(response.status, 200, await response.clone().text());
    t.deepEqual(anthropic.requests.at(-1)!.body.thinking, thinking);
  }
});

for (const target of [
  // The fakes echo the last user turn; Gemini's adapter merges the user turns the system message separated.
  { name: "openai-compatible", model: COMPAT, sent: () => openai.requests.at(-1)!.body, echo: "echo: list files" },
  { name: "gemini", model: GOOGLE, sent: () => gemini.requests.at(-1)!.body, echo: "echo: hello there list files" },
]) {
  test.serial(`${target.name}: Claude Code's request is converted (Anthropic-only fields dropped), create and stream; one usage row each`, async (t) => {
    const before = rows().length;
    const created = await post("messages", claudeCodeBody(target.model, false));
    t.is(created.status, 200, await created.clone().text());
    const message = (await created.json()) as { model: string; content: Array<{ type: string; text?: string }> };
    t.is(message.model, target.model);
    t.deepEqual(message.content, [{ type: "text", text: target.echo }]);
    const sent = target.sent();
    const text = JSON.stringify(sent);
    for (const field of ["thinking", "context_management", "output_config", "metadata", "cache_control", "user_id"]) {
      t.false(text.includes(field), `${field} is not sent to a converted upstream`);
    }
    if (target.model === COMPAT) {
      t.deepEqual(sent.messages, [
        { role: "system", content: `${SYSTEM[0]!.text}\n\n${SYSTEM[1]!.text}` },
        { role: "user", content: "hello there" },
        { role: "system", content: MID_SYSTEM_TEXT },
        { role: "user", content: "list files" },
      ]);
      t.deepEqual(
        sent.tools.map((tool: { function: { name: string } }) => tool.function.name),
        ["Bash", "Read"],
      );
    } else {
      t.deepEqual(sent.systemInstruction, { parts: [{ text: `${SYSTEM[0]!.text}\n\n${SYSTEM[1]!.text}` }, { text: MID_SYSTEM_TEXT }] });
    }
    const streamed = await post("messages", claudeCodeBody(target.model, true));
    t.is(streamed.status, 200);
    const events = sseEvents(await streamed.text());
    t.is(events[0]!.event, "message_start");
    t.is(events.at(-1)!.event, "message_stop");
    t.is(
      events
        .filter((event) => event.event === "content_block_delta")
        .map((event) => (event.data.delta as { text: string }).text)
        .join(""),
      target.echo,
    );
    for (const thinking of [{ type: "enabled", budget_tokens: 2048 }, { type: "disabled" }]) {
      const response = await post("messages", { ...claudeCodeBody(target.model, false), thinking });
      t.is(response.status, 200);
    }
    const added = rows().slice(before);
    t.is(added.length, 4);
    t.true(added.every((row) => row.endpoint === "messages" && row.model === target.model));
  });
}

test.serial("openai-compatible: output_config.format (structured output) becomes response_format; its effort is dropped", async (t) => {
  const schema = { type: "object", properties: { files: { type: "array", items: { type: "string" } } }, required: ["files"] };
  const response = await post("messages", { ...claudeCodeBody(COMPAT, false), output_config: { effort: "high", format: { type: "json_schema", schema } } });
  t.is(response.status, 200);
  const sent = openai.requests.at(-1)!.body;
  t.deepEqual(sent.response_format, { type: "json_schema", json_schema: { name: "output", schema } });
  t.false("reasoning_effort" in sent);
});

test.serial("a system message with a content block gw cannot fold is refused in Anthropic's shape, nothing sent", async (t) => {
  const body = claudeCodeBody(COMPAT, false);
  (body.messages as unknown[])[1] = { role: "system", content: [{ type: "tool_addition", tool: { name: "Bash" } }] };
  const response = await post("messages", body);
  t.is(response.status, 400);
  const error = (await response.json()) as { type: string; error: { type: string; message: string } };
  t.is(error.type, "error");
  t.is(error.error.type, "invalid_request_error");
  t.regex(error.error.message, /tool_addition/);
  t.is(openai.requests.length, 0);
});

test.serial("count_tokens, native: forwarded to Anthropic's count_tokens with the betas; not billed", async (t) => {
  const before = rows().length;
  anthropic.enqueue({ usage: { input_tokens: 4321 } });
  const { model: _model, max_tokens: _max, stream: _stream, metadata: _metadata, ...rest } = claudeCodeBody(NATIVE, false);
  const counted = await sdk().beta.messages.countTokens({ ...rest, model: NATIVE } as never, {
    query: { beta: "true" },
    headers: { "anthropic-beta": CLAUDE_CODE_BETAS.join(",") },
  });
  t.is(counted.input_tokens, 4321);
  const sent = anthropic.requests.at(-1)!;
  t.is(sent.path, "/v1/messages/count_tokens");
  t.is(sent.body.model, "claude-sonnet-4-5");
  t.deepEqual(sent.body.messages, rest.messages);
  t.deepEqual(sent.body.system, SYSTEM);
  t.regex(String(sent.headers["anthropic-beta"]), /mid-conversation-system-2026-04-07/);
  t.is(sent.headers["x-api-key"], "sk-ant-upstream");
  // Bearer works too, and the upstream's own count comes back in its shape.
  const prompt = { model: NATIVE, system: "Be brief.", messages: [{ role: "user" as const, content: "one two three" }] };
  const bearer = await sdk({ authToken: key }).messages.countTokens(prompt);
  anthropic.enqueue({ content: "ok" });
  const created = await sdk().messages.create({ ...prompt, max_tokens: 10 });
  t.is(bearer.input_tokens, created.usage.input_tokens, "the same count Anthropic bills for that prompt");
  t.is(rows().length, before + 1, "a usage row for the messages call only");
});

test.serial("count_tokens, converted: gw's own estimate, the input it bills when the upstream reports no usage; no upstream call", async (t) => {
  const before = rows().length;
  const { max_tokens: _max, stream: _stream, ...countBody } = claudeCodeBody(COMPAT, false);
  const response = await post("messages/count_tokens", countBody);
  t.is(response.status, 200);
  const counted = (await response.json()) as Record<string, unknown>;
  t.deepEqual(Object.keys(counted), ["input_tokens"]);
  t.is(openai.requests.length, 0);
  t.is(rows().length, before, "counting is not billed");
  openai.enqueue({ omitUsage: true });
  const billed = await post("messages", claudeCodeBody(COMPAT, false));
  t.is(billed.status, 200);
  t.is(rows().at(-1)!.units.prompt_tokens, counted.input_tokens as number);
  const gemini = (await (await post("messages/count_tokens", { ...countBody, model: GOOGLE })).json()) as { input_tokens: number };
  t.true(gemini.input_tokens > 0);
});

test.serial("count_tokens: a bad key is 401 and a missing field 400, both in Anthropic's shape", async (t) => {
  const unauthorized = await t.throwsAsync(sdk({ apiKey: "gw_nope" }).messages.countTokens({ model: NATIVE, messages: [{ role: "user", content: "x" }] }), {
    instanceOf: Anthropic.AuthenticationError,
  });
  t.is((unauthorized as InstanceType<typeof Anthropic.APIError>).status, 401);
  const missing = await post("messages/count_tokens", { model: NATIVE });
  t.is(missing.status, 400);
  t.deepEqual(await missing.json(), { type: "error", error: { type: "invalid_request_error", message: "messages: Field required" } });
  t.is(anthropic.requests.length, 0);
});

test.serial("HEAD /anthropic and /anthropic/ (Claude Code's probe of its base URL) answer 200 without a key", async (t) => {
  for (const path of ["/anthropic", "/anthropic/"]) {
    const response = await fetch(`${gateway.url}${path}`, { method: "HEAD" });
    t.is(response.status, 200, path);
  }
});
