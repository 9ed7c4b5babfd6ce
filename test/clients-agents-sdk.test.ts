// The OpenAI Agents SDK in its default mode (the Responses API), unchanged, with a custom OpenAI
// client pointed at gw and tracing off (nothing leaves the machine): `run(agent, ...)` with a
// function tool the agent calls, over an OpenAI-compatible upstream and an Anthropic one. One
// usage row naming `responses` per model call.
import { createRequire } from "node:module";
import { Agent, type OpenAIClient, run, setDefaultOpenAIClient, setTracingDisabled, tool } from "@openai/agents";
import test from "ava";
import { z } from "zod";
import { type ClientRig, claudeModel, compatModel, startClientRig, textOf } from "./helpers/real-clients.js";

// The openai client the Agents SDK itself depends on (7.x), as a user who installs @openai/agents
// gets it; the project's own openai devDependency is 6.x, whose client type the SDK does not take.
const requireFromAgents = createRequire(createRequire(import.meta.url).resolve("@openai/agents-openai"));
const { OpenAI } = requireFromAgents("openai") as { OpenAI: new (options: { baseURL: string; apiKey: string; maxRetries: number }) => OpenAIClient };

let rig: ClientRig;

test.before(async () => {
  rig = await startClientRig();
  setTracingDisabled(true);
  setDefaultOpenAIClient(new OpenAI({ baseURL: rig.gateway.v1, apiKey: rig.key, maxRetries: 0 }));
});

test.after.always(async () => {
  await rig?.close();
});

test.beforeEach(() => rig.reset());

function weatherAgent(model: string, calls: string[]) {
  const getWeather = tool({
    name: "get_weather",
    description: "The weather in a city",
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      calls.push(city);
      return `sunny in ${city}, 21 C`;
    },
  });
  return new Agent({ name: "Weather", instructions: "Answer weather questions with the get_weather tool.", model, tools: [getWeather] });
}

test.serial("run(agent) with a function tool over an OpenAI-compatible upstream: the tool runs, the agent answers, two usage rows", async (t) => {
  const before = rig.rows("responses").length;
  rig.openai.enqueue({ toolCalls: [{ id: "call_oslo", name: "get_weather", arguments: '{"city":"Oslo"}' }] }, { content: "It is sunny in Oslo." });
  const calls: string[] = [];
  const result = await run(weatherAgent(compatModel, calls), "What is the weather in Oslo?");
  t.is(result.finalOutput, "It is sunny in Oslo.");
  t.deepEqual(calls, ["Oslo"]);
  const chats = rig.openai.requests.filter((request) => request.path.endsWith("/chat/completions"));
  t.is(chats.length, 2);
  t.is(chats[0]!.body.messages[0].role, "system");
  t.is(textOf(chats[0]!.body.messages[0].content), "Answer weather questions with the get_weather tool.");
  t.is(chats[0]!.body.tools[0].function.name, "get_weather");
  const second = chats[1]!.body.messages as Array<Record<string, any>>;
  t.deepEqual(second.at(-2)!.tool_calls, [{ id: "call_oslo", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }]);
  t.deepEqual(second.at(-1), { role: "tool", tool_call_id: "call_oslo", content: "sunny in Oslo, 21 C" });
  const rows = await rig.rowsReach("responses", before + 2);
  t.is(rows.length, before + 2);
  t.true(rows.slice(before).every((row) => row.model === compatModel));
});

test.serial("run(agent) with a function tool over an Anthropic upstream: tool_use and tool_result round-trip through gw", async (t) => {
  const before = rig.rows("responses").length;
  rig.anthropic.enqueue({ toolUses: [{ id: "toolu_oslo", name: "get_weather", input: { city: "Oslo" } }] }, { content: "Sunny in Oslo." });
  const calls: string[] = [];
  const result = await run(weatherAgent(claudeModel, calls), "What is the weather in Oslo?");
  t.is(result.finalOutput, "Sunny in Oslo.");
  t.deepEqual(calls, ["Oslo"]);
  const second = rig.anthropic.requests.filter((request) => request.path === "/v1/messages").at(1)!.body;
  t.is(textOf(second.system), "Answer weather questions with the get_weather tool.");
  const toolResult = second.messages.at(-1).content.find((block: { type: string }) => block.type === "tool_result");
  t.is(toolResult.tool_use_id, "toolu_oslo");
  t.true(JSON.stringify(toolResult.content).includes("sunny in Oslo, 21 C"));
  const rows = await rig.rowsReach("responses", before + 2);
  t.is(rows.length, before + 2);
});

test.serial("run(agent) streamed: the text deltas the SDK reads add up to the final output", async (t) => {
  rig.openai.enqueue({ content: "Streaming works." });
  const agent = new Agent({ name: "Plain", instructions: "Be brief.", model: compatModel });
  const result = await run(agent, "Say it.", { stream: true });
  let text = "";
  for await (const chunk of result.toTextStream()) text += chunk;
  await result.completed;
  t.is(text, "Streaming works.");
  t.is(result.finalOutput, "Streaming works.");
  t.is(rig.openai.requests.at(-1)!.body.stream, true);
});
