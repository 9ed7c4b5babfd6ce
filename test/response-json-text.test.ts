// The Response a stream's events carry is put together from parts (response-json-text.ts): its
// text must be exactly what JSON.stringify writes for the Response object, whatever the request
// echoes back (instructions, tools, metadata, user that look like the fields it is cut at).
import test from "ava";
import { ChatStreamToResponseEvents } from "../src/gateway/responses/chat-stream-to-response-events.js";
import { responseObject } from "../src/gateway/responses/convert-chat-to-response.js";
import { ResponseJsonText } from "../src/gateway/responses/response-json-text.js";
import type { ResponsesRequest } from "../src/gateway/responses/responses-request.js";
import type { Json } from "../src/json/json-values.js";

const ids = { id: "resp_0123456789abcdef0123456789abcdef0123456789abcdef", createdAt: 1_790_000_000, model: "compat/gpt-x" };
const usage = {
  input_tokens: 5,
  input_tokens_details: { cached_tokens: 1 },
  output_tokens: 7,
  output_tokens_details: { reasoning_tokens: 2 },
  total_tokens: 12,
};

const requests: Record<string, ResponsesRequest> = {
  plain: { model: "compat/gpt-x", input: "hi" } as ResponsesRequest,
  "fields that look like the ones it is cut at": {
    model: 'compat/"output":[]',
    input: "hi",
    instructions: 'say "status":"in_progress","completed_at":null,"error":null,"incomplete_details":null, and "output":[] then "usage":null',
    tools: [{ type: "function", name: "f", parameters: { type: "object", properties: { output: [], usage: null }, usage: null, output: [] } }],
    metadata: { usage: "null", output: "[]", '"usage":null': '"usage":null' },
    user: '"usage":null',
    temperature: 0.5,
    max_output_tokens: 64,
    text: { format: { type: "json_schema", name: "x", schema: { usage: null }, strict: true } },
  } as unknown as ResponsesRequest,
};

const items: Json[] = [
  {
    type: "message",
    id: "msg_1",
    status: "completed",
    role: "assistant",
    content: [{ type: "output_text", text: 'a "quoted" line\n✓', annotations: [], logprobs: [] }],
  },
  { type: "function_call", id: "fc_2", call_id: "call_2", name: "f", arguments: '{"usage":null}', status: "completed" },
];

for (const [name, request] of Object.entries(requests)) {
  test(`${name}: each status's text is JSON.stringify of the Response object`, (t) => {
    const text = new ResponseJsonText(request, ids);
    const moments = [
      { status: "in_progress" as const, output: [] as Json[] },
      { status: "completed" as const, output: items, usage, completedAt: 1_790_000_009 },
      { status: "incomplete" as const, output: items.slice(0, 1), usage, finishReason: "length" },
      { status: "incomplete" as const, output: [], usage, finishReason: "content_filter" },
    ];
    for (const moment of moments) {
      const object = responseObject(request, ids, { ...moment, output: [...moment.output] });
      if (moment.completedAt !== undefined) object.completed_at = moment.completedAt;
      t.is(text.json({ ...moment, output: moment.output.map((item) => JSON.stringify(item)) }), JSON.stringify(object), moment.status);
    }
    const error = { code: "stream_interrupted", message: 'the "upstream" failed' };
    const failed = { ...responseObject(request, ids, { status: "failed", output: [...items], usage }), error };
    t.is(text.json({ status: "failed", output: items.map((item) => JSON.stringify(item)), usage, error }), JSON.stringify(failed));
  });
}

test("a converted stream's closing events carry the text and the Response the stream stores, byte for byte", (t) => {
  const request = requests["fields that look like the ones it is cut at"]!;
  const converter = new ChatStreamToResponseEvents(request, ids);
  const events = converter.start();
  const chunk = (delta: Json, extra: Json = {}) =>
    JSON.stringify({
      id: "c",
      object: "chat.completion.chunk",
      created: 1,
      model: "m",
      choices: [{ index: 0, delta, logprobs: null, finish_reason: null }],
      ...extra,
    });
  for (const piece of ["Hel", 'lo "wor', "ld\\\\n", "\u00e9\n", "\ud83d\ude00"]) converter.pushJson(chunk({ content: piece }), events);
  converter.pushJson(
    JSON.stringify({
      id: "c",
      object: "chat.completion.chunk",
      created: 1,
      model: "m",
      choices: [{ index: 0, delta: {}, finish_reason: "stop" }],
      usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 },
    }),
    events,
  );
  events.push(...converter.finish());
  const parsed = events.map((event) => ({ event: event.event, data: JSON.parse(event.data) as Json }));
  const text = 'Hello "world\\\\n\u00e9\n\ud83d\ude00';
  const byType = (type: string) => parsed.find((event) => event.event === type)!.data;
  t.is(byType("response.output_text.done").text, text);
  t.deepEqual(byType("response.content_part.done").part, { type: "output_text", text, annotations: [], logprobs: [] });
  const final = converter.finalResponse();
  t.deepEqual(byType("response.output_item.done").item, (final.output as Json[])[0]);
  const completed = events.at(-1)!;
  t.is(completed.event, "response.completed");
  t.is(completed.data, `{"type":"response.completed","sequence_number":${parsed.length - 1},"response":${JSON.stringify(final)}}`);
  t.deepEqual(
    parsed.map((event) => event.data.sequence_number),
    parsed.map((_event, index) => index),
  );
  t.is(JSON.parse(events[0]!.data).response.status, "in_progress");
  t.deepEqual(JSON.parse(events[0]!.data).response.metadata, request.metadata);
});
