// The Vercel AI SDK's OpenAI provider in its default mode (`createOpenAI(...)(modelId)`, which
// speaks the Responses API), unchanged, pointed at gw: generateText, streamText and a tool loop
// with an executed tool, over an OpenAI-compatible upstream and an Anthropic one. One usage row
// naming `responses` per model call.
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, stepCountIs, streamText, tool } from "ai";
import test from "ava";
import { z } from "zod";
import { type ClientRig, claudeModel, compatModel, startClientRig, textOf } from "./helpers/real-clients.js";

let rig: ClientRig;

test.before(async () => {
  rig = await startClientRig();
});

test.after.always(async () => {
  await rig?.close();
});

test.beforeEach(() => rig.reset());

const provider = () => createOpenAI({ baseURL: rig.gateway.v1, apiKey: rig.key });

/** A weather tool that records the inputs it was called with. */
function weatherTool(calls: Array<{ city: string }>) {
  return tool({
    description: "The weather in a city",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      calls.push({ city });
      return { city, sky: "sunny", celsius: 21 };
    },
  });
}

test.serial("generateText over an OpenAI-compatible upstream: the answer, its usage, the system prompt converted, one usage row", async (t) => {
  const before = rig.rows("responses").length;
  rig.openai.enqueue({ content: "Hello from upstream", usage: { prompt_tokens: 11, completion_tokens: 3 } });
  const result = await generateText({ model: provider()(compatModel), system: "Be brief.", prompt: "hello" });
  t.is(result.text, "Hello from upstream");
  t.is(result.finishReason, "stop");
  t.is(result.usage.inputTokens, 11);
  t.is(result.usage.outputTokens, 3);
  const sent = rig.openai.requests.at(-1)!.body;
  t.is(sent.model, "gpt-x");
  t.deepEqual(
    sent.messages.map((message: { role: string; content: unknown }) => [message.role, textOf(message.content)]),
    [
      ["system", "Be brief."],
      ["user", "hello"],
    ],
  );
  const rows = await rig.rowsReach("responses", before + 1);
  t.is(rows.length, before + 1);
  t.is(rows.at(-1)!.model, compatModel);
  t.deepEqual(rows.at(-1)!.units, { prompt_tokens: 11, completion_tokens: 3 });
});

test.serial("streamText over an Anthropic upstream: the text arrives in pieces and adds up, usage at the end, one usage row", async (t) => {
  const before = rig.rows("responses").length;
  rig.anthropic.enqueue({ content: "one two three four", usage: { input_tokens: 9, output_tokens: 4 } });
  const result = streamText({ model: provider()(claudeModel), prompt: "count to four" });
  const pieces: string[] = [];
  for await (const piece of result.textStream) pieces.push(piece);
  t.is(pieces.join(""), "one two three four");
  t.true(pieces.length > 1, "streamed, not one piece");
  t.is(await result.text, "one two three four");
  t.is(await result.finishReason, "stop");
  const usage = await result.usage;
  t.is(usage.inputTokens, 9);
  t.is(usage.outputTokens, 4);
  t.is(rig.anthropic.requests.at(-1)!.body.model, "claude-sonnet-4-5");
  const rows = await rig.rowsReach("responses", before + 1);
  t.is(rows.length, before + 1);
  t.is(rows.at(-1)!.model, claudeModel);
});

test.serial("a tool loop with generateText over an OpenAI-compatible upstream: the tool runs, its result goes back, the model answers", async (t) => {
  const before = rig.rows("responses").length;
  rig.openai.enqueue({ toolCalls: [{ id: "call_oslo", name: "get_weather", arguments: '{"city":"Oslo"}' }] }, { content: "It is sunny in Oslo, 21 °C." });
  const calls: Array<{ city: string }> = [];
  const result = await generateText({
    model: provider()(compatModel),
    prompt: "What is the weather in Oslo?",
    tools: { get_weather: weatherTool(calls) },
    stopWhen: stepCountIs(5),
  });
  t.deepEqual(calls, [{ city: "Oslo" }]);
  t.is(result.steps.length, 2);
  t.is(result.steps[0]!.finishReason, "tool-calls");
  t.is(result.text, "It is sunny in Oslo, 21 °C.");
  const [first, second] = rig.openai.requests.filter((request) => request.path.endsWith("/chat/completions"));
  t.is(first!.body.tools[0].function.name, "get_weather");
  const messages = second!.body.messages as Array<Record<string, any>>;
  t.is(messages[0]!.role, "user");
  t.is(textOf(messages[0]!.content), "What is the weather in Oslo?");
  t.is(messages[1]!.role, "assistant");
  t.deepEqual(messages[1]!.tool_calls, [{ id: "call_oslo", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }]);
  t.is(messages[2]!.role, "tool");
  t.is(messages[2]!.tool_call_id, "call_oslo");
  t.deepEqual(JSON.parse(messages[2]!.content), { city: "Oslo", sky: "sunny", celsius: 21 });
  const rows = await rig.rowsReach("responses", before + 2);
  t.is(rows.length, before + 2, "one row per model call");
});

test.serial("a tool loop with streamText over an Anthropic upstream: tool_use becomes a call the SDK runs, tool_result goes back", async (t) => {
  const before = rig.rows("responses").length;
  rig.anthropic.enqueue({ toolUses: [{ id: "toolu_oslo", name: "get_weather", input: { city: "Oslo" } }] }, { content: "Sunny in Oslo." });
  const calls: Array<{ city: string }> = [];
  const result = streamText({
    model: provider()(claudeModel),
    prompt: "What is the weather in Oslo?",
    tools: { get_weather: weatherTool(calls) },
    stopWhen: stepCountIs(5),
  });
  t.is(await result.text, "Sunny in Oslo.");
  t.deepEqual(calls, [{ city: "Oslo" }]);
  t.is((await result.steps).length, 2);
  const second = rig.anthropic.requests.filter((request) => request.path === "/v1/messages").at(1)!.body;
  const toolUse = second.messages[1].content.find((block: { type: string }) => block.type === "tool_use");
  t.like(toolUse, { id: "toolu_oslo", name: "get_weather", input: { city: "Oslo" } });
  const toolResult = second.messages[2].content.find((block: { type: string }) => block.type === "tool_result");
  t.is(toolResult.tool_use_id, "toolu_oslo");
  t.true(JSON.stringify(toolResult.content).includes("sunny"));
  const rows = await rig.rowsReach("responses", before + 2);
  t.is(rows.length, before + 2);
});

test.serial(
  "a conversation continued with response.messages: the SDK names its earlier answer by item_reference (store defaults to true), gw resolves it",
  async (t) => {
    rig.openai.enqueue({ content: "Hello, Rita." }, { content: "You said hello." });
    const model = provider()(compatModel);
    const first = await generateText({ model, prompt: "hello" });
    t.is(first.text, "Hello, Rita.");
    const second = await generateText({
      model,
      messages: [{ role: "user", content: "hello" }, ...first.response.messages, { role: "user", content: "what did I say?" }],
    });
    t.is(second.text, "You said hello.");
    const sent = rig.openai.requests.at(-1)!.body.messages as Array<{ role: string; content: unknown }>;
    t.deepEqual(
      sent.map((message) => [message.role, textOf(message.content)]),
      [
        ["user", "hello"],
        ["assistant", "Hello, Rita."],
        ["user", "what did I say?"],
      ],
      "the earlier answer reaches the upstream as the assistant turn",
    );
  },
);
