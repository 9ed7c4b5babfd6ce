// The streamed-chat hot path in isolation: reading an upstream's SSE bytes into event batches,
// and rewriting OpenAI-compatible chunks as text (public model, role, usage, counted text).
import test from "ava";
import { StreamRelay } from "../src/gateway/chat/stream-relay.js";
import { readServerSentEventBatches } from "../src/providers/sse.js";

async function* reads(...parts: Array<string | Buffer>): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield typeof part === "string" ? Buffer.from(part) : part;
}

async function batchesOf(...parts: Array<string | Buffer>): Promise<string[][]> {
  const batches: string[][] = [];
  for await (const batch of readServerSentEventBatches(reads(...parts))) batches.push(batch.map((event) => event.data));
  return batches;
}

test("SSE: one batch per network read, events split across reads joined", async (t) => {
  t.deepEqual(await batchesOf("data: a\n\ndata: b\n\nda", "ta: c\n\n", "data: [DONE]\n\n"), [["a", "b"], ["c"], ["[DONE]"]]);
});

test("SSE: a UTF-8 character split between two reads arrives whole", async (t) => {
  const bytes = Buffer.from('data: {"content":"héllo 🦊"}\n\n');
  const fox = bytes.indexOf(0xf0);
  t.deepEqual(await batchesOf(bytes.subarray(0, 20), bytes.subarray(20, fox + 2), bytes.subarray(fox + 2)), [['{"content":"héllo 🦊"}']]);
});

test("SSE: a leading byte order mark and CRLF line ends are accepted", async (t) => {
  t.deepEqual(await batchesOf("\uFEFFdata: one\r\n\r\n: comment\r\n\r\ndata: two\r\n\r\n"), [["one", "two"]]);
});

const estimateNothing = () => ({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });

const chunk = (fields: Record<string, unknown>) => JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "up-model", ...fields });

test("relay: the public model everywhere, role in the first delta, text forwarded as sent", (t) => {
  const relay = new StreamRelay("team/model", estimateNothing);
  const first = JSON.parse(relay.relay(chunk({ choices: [{ index: 0, delta: { content: "" } }] })));
  t.is(first.model, "team/model");
  t.deepEqual(first.choices[0].delta, { role: "assistant", content: "" });
  const later = chunk({ choices: [{ index: 0, delta: { content: 'say "hi"\\n' } }], usage: null });
  t.is(relay.relay(later), later.replace('"model":"up-model"', '"model":"team/model"'));
});

test("relay: only the model field is renamed, not another key that ends in `model`", (t) => {
  const relay = new StreamRelay("team/model", estimateNothing);
  relay.relay(chunk({ choices: [] }));
  const text = JSON.stringify({ id: "c1", draft_model: "up-model", model: "up-model", choices: [{ index: 0, delta: { content: "x" } }] });
  const out = JSON.parse(relay.relay(text));
  t.is(out.model, "team/model");
  t.is(out.draft_model, "up-model");
});

test("relay: the usage chunk is found and kept for billing", (t) => {
  const relay = new StreamRelay("team/model", estimateNothing);
  relay.relay(chunk({ choices: [{ index: 0, delta: { content: "a" } }] }));
  const usage = { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 };
  const out = JSON.parse(relay.relay(chunk({ choices: [], usage })));
  t.deepEqual(relay.usage, usage);
  t.is(out.model, "team/model");
});

test("relay: content and tool-argument characters are counted for the estimate, reasoning is not", (t) => {
  const relay = new StreamRelay("team/model", estimateNothing);
  relay.relay(chunk({ choices: [{ index: 0, delta: { content: "" } }] }));
  relay.relay(chunk({ choices: [{ index: 0, delta: { content: 'a "quoted" word' } }] }));
  relay.relay(chunk({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"city":"Oslo"}' } }] } }] }));
  relay.relay(chunk({ choices: [{ index: 0, delta: { reasoning_content: "thinking hard" } }] }));
  // The JSON text of each string is counted, escapes included: `a \"quoted\" word` and `{\"city\":\"Oslo\"}`.
  t.is(relay.producedCharacters, 'a \\"quoted\\" word'.length + '{\\"city\\":\\"Oslo\\"}'.length);
});
