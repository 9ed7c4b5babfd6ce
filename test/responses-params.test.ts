// The Responses API's parameters a converted upstream cannot honour (docs/decisions.md §19): what
// changes the answer is refused with a 400 naming the parameter and the provider; a hint that
// leaves the answer as it is (what Codex sends on every call) is left out of the upstream call and
// named in the x-service-params-ignored header. Nothing is dropped in silence.

import test from "ava";
import OpenAI from "openai";
import type { FakeAnthropic } from "./fakes/anthropic.js";
import type { FakeOpenAI } from "./fakes/openai.js";
import { type ChatVendors, startChatVendors } from "./helpers/chat-vendors.js";
import { addKey, type TestGateway } from "./helpers/gateway-harness.js";
import { namedEvents } from "./helpers/named-events.js";

let vendors: ChatVendors;
let anthropic: FakeAnthropic;
let openai: FakeOpenAI;
let gateway: TestGateway;
let key: string;

test.before(async () => {
  vendors = await startChatVendors();
  ({ anthropic, openai, gateway } = vendors);
  key = await addKey(vendors.home, "ivy", "pro");
});

test.after.always(async () => {
  await vendors?.close();
});

test.beforeEach(() => vendors.reset());

const client = () => new OpenAI({ baseURL: gateway.v1, apiKey: key, maxRetries: 0 });
const IGNORED_HEADER = "x-service-params-ignored";

/** What Codex CLI sends besides its input and tools (its hints among them). */
const codexFields = {
  reasoning: { summary: "auto" as const },
  store: false,
  include: ["reasoning.encrypted_content" as const],
  prompt_cache_key: "0199-session",
  client_metadata: { originator: "codex_exec" },
};

test.serial("Codex's hints are served on a converted upstream, named in the header, and not sent upstream", async (t) => {
  anthropic.enqueue({ content: "fine" });
  const { data, response } = await client()
    .responses.create({ model: "claude/claude-sonnet-4-5", input: "hi", ...codexFields } as never)
    .withResponse();
  t.is((data as { output_text: string }).output_text, "fine");
  t.is(response.headers.get(IGNORED_HEADER), "prompt_cache_key, client_metadata, reasoning.summary, include=reasoning.encrypted_content");
  const sent = anthropic.requests.at(-1)!.body;
  for (const field of ["prompt_cache_key", "client_metadata", "include", "reasoning", "store"]) t.false(field in sent, field);
});

test.serial("a streamed response says the same in its header", async (t) => {
  openai.enqueue({ content: "streamed" });
  const response = await fetch(`${gateway.v1}/responses`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "compat/gpt-x", input: "hi", stream: true, prompt_cache_key: "k", text: { verbosity: "low" } }),
  });
  t.is(response.status, 200);
  t.is(response.headers.get(IGNORED_HEADER), "prompt_cache_key, text.verbosity");
  const { names, last } = namedEvents<{ response: { output_text?: string; output: Array<{ content: Array<{ text: string }> }> } }>(await response.text());
  t.is(names.at(-1), "response.completed");
  t.is(last.response.output[0]?.content[0]?.text, "streamed");
  t.false("prompt_cache_key" in openai.requests.at(-1)!.body);
});

test.serial("a request with nothing to leave out has no header", async (t) => {
  openai.enqueue({ content: "plain" });
  const { response } = await client()
    .responses.create({ model: "compat/gpt-x", input: "hi", metadata: { job: "7" }, include: ["web_search_call.action.sources"] })
    .withResponse();
  t.is(response.headers.get(IGNORED_HEADER), null);
});

for (const [name, fields, param] of [
  ["truncation auto", { truncation: "auto" }, "truncation"],
  ["top_logprobs", { top_logprobs: 3 }, "top_logprobs"],
  ["max_tool_calls", { max_tool_calls: 2 }, "max_tool_calls"],
  ["a stored conversation", { conversation: "conv_1" }, "conversation"],
  ["a stored prompt", { prompt: { id: "pmpt_1" } }, "prompt"],
  ["logprobs in include", { include: ["web_search_call.action.sources", "message.output_text.logprobs"] }, "include[1]"],
] as const) {
  test.serial(`${name} cannot be honoured over chat: 400 naming the parameter and the provider, no upstream call`, async (t) => {
    const error = await t.throwsAsync(client().responses.create({ model: "claude/claude-sonnet-4-5", input: "hi", ...fields } as never));
    const refused = error as InstanceType<typeof OpenAI.BadRequestError>;
    t.is(refused.status, 400);
    t.is(refused.param, param);
    t.regex(refused.message, /provider 'claude'/);
    t.is((refused.error as { provider?: string }).provider, "claude");
    t.is(anthropic.requests.length, 0);
  });
}

test.serial("the defaults of refused parameters are served (truncation disabled, top_logprobs 0)", async (t) => {
  openai.enqueue({ content: "ok" });
  const response = await client().responses.create({ model: "compat/gpt-x", input: "hi", truncation: "disabled", top_logprobs: 0 });
  t.is(response.output_text, "ok");
});
