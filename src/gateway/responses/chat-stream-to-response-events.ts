// Chat completion chunks as the Responses API's stream events, in the order the official SDK
// accumulates them (docs/decisions.md §19): response.created and .in_progress; per text run a
// message item (output_item.added, content_part.added, output_text.delta …, output_text.done,
// content_part.done, output_item.done); per tool call a function_call item (output_item.added,
// function_call_arguments.delta …, .done, output_item.done); then exactly one of
// response.completed, response.incomplete or response.failed, with the whole response. Every
// event carries an increasing sequence_number. When gw serves web_search, one stream spans the
// model calls of a response: calls of gw's search function are held back, never shown; a call
// that searched ends with its text closed and a web_search_call item per search (output_item.added,
// web_search_call.in_progress, .searching, .completed, output_item.done), and the next call's
// events follow with the numbering going on; the usage is the calls' sum.
import { isObject, type Json, parseJsonObject } from "../../json/json-values.js";
import type { ChatChunk } from "../../providers/chat-types.js";
import { plainTextDelta, type TextDelta } from "../chat/chat-chunk-text.js";
import {
  addUsage,
  functionCallItem,
  itemId,
  messageItem,
  outputTextPart,
  type ResponseIds,
  type ResponseUsage,
  responseObject,
  responseUsage,
  statusOf,
} from "./convert-chat-to-response.js";
import { ResponseJsonText } from "./response-json-text.js";
import type { ResponsesRequest } from "./responses-request.js";
import { SEARCH_FUNCTION_NAME, type SearchFunctionCall, type SearchOutcome, webSearchCallItem } from "./web-search-tool.js";

/** One SSE event: its name and its JSON text. */
export interface ResponseStreamEvent {
  event: string;
  data: string;
}

interface OpenText {
  id: string;
  index: number;
  text: string;
  /** Its delta events' fields between sequence_number and the delta, written once. */
  deltaFields: string;
}

interface OpenCall {
  id: string;
  index: number;
  callId: unknown;
  name: unknown;
  arguments: string;
}

export class ChatStreamToResponseEvents {
  private sequence = 0;
  private readonly output: Json[] = [];
  /** Each output item's JSON text, as `output` holds the items: the Responses the events carry are put together from them. */
  private readonly outputJson: string[] = [];
  private readonly responseJson: ResponseJsonText;
  private text: OpenText | undefined;
  /** Tool calls by their chat index, open until the stream ends (chat may interleave their deltas). */
  private readonly calls = new Map<number, OpenCall>();
  /** This model call's calls of gw's search function, by chat index: gw runs them, the client never sees them. */
  private readonly searches = new Map<number, SearchFunctionCall>();
  /** This model call's text, for the assistant turn the next call reads. */
  private roundText = "";
  private finishReason: string | undefined;
  private usage: ResponseUsage | undefined;
  /** The model calls before this one (each ended in searches). */
  private earlierUsage: ResponseUsage | undefined;
  private failure: { code: string; message: string } | undefined;
  /** The response the stream ended with, made once: the last event and the stored copy are the same. */
  private final: Json | undefined;

  constructor(
    private readonly request: ResponsesRequest,
    private readonly ids: ResponseIds,
  ) {
    this.responseJson = new ResponseJsonText(request, ids);
  }

  start(): ResponseStreamEvent[] {
    const fields = `{"response":${this.responseJson.json({ status: "in_progress", output: this.outputJson, usage: this.usageSoFar() })}}`;
    return [this.serialized("response.created", fields), this.serialized("response.in_progress", fields)];
  }

  /** A chunk as the chat relay wrote it: most carry one text delta, read from the text (chat-chunk-text.ts); others are parsed. */
  pushJson(json: string, events: ResponseStreamEvent[]): void {
    const delta = plainTextDelta(json);
    if (delta) {
      if (delta.text !== "") this.textDelta(delta, events);
      return;
    }
    const chunk = parseJsonObject(json);
    if (chunk) this.push(chunk as ChatChunk, events);
  }

  push(chunk: ChatChunk, events: ResponseStreamEvent[] = []): ResponseStreamEvent[] {
    if (chunk.usage) this.usage = responseUsage(chunk.usage);
    const choice = chunk.choices?.find((candidate) => (candidate.index ?? 0) === 0);
    if (!choice) return events;
    const delta = isObject(choice.delta) ? choice.delta : {};
    if (typeof delta.content === "string" && delta.content !== "") this.textDelta({ text: delta.content, literal: JSON.stringify(delta.content) }, events);
    if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls) if (isObject(call)) this.callDelta(call, events);
    if (typeof choice.finish_reason === "string") this.finishReason = choice.finish_reason;
    return events;
  }

  /** The searches this model call asked for, when it called none of the client's functions (those end the response). */
  searchRound(): { text: string; calls: SearchFunctionCall[] } | undefined {
    if (this.searches.size === 0 || this.calls.size > 0) return undefined;
    return { text: this.roundText, calls: [...this.searches.values()] };
  }

  /** The model call that searched is over: its text closed, its state cleared for the next call. */
  endRound(): ResponseStreamEvent[] {
    const events: ResponseStreamEvent[] = [];
    this.closeText(events);
    this.searches.clear();
    this.roundText = "";
    this.finishReason = undefined;
    this.earlierUsage = addUsage(this.earlierUsage, this.usage);
    this.usage = undefined;
    return events;
  }

  /** A search begins: its item, in progress, and the events that say so. */
  searchStarted(query: string): { index: number; events: ResponseStreamEvent[] } {
    const index = this.output.length;
    const item = webSearchCallItem(itemId("ws", this.ids.id, "o", index), query, "in_progress", []);
    this.setItem(index, item);
    const at = { item_id: item.id, output_index: index };
    return {
      index,
      events: [
        this.event("response.output_item.added", { output_index: index, item }),
        this.event("response.web_search_call.in_progress", at),
        this.event("response.web_search_call.searching", at),
      ],
    };
  }

  /** The search at `index` ended: completed (OpenAI has no event for a failed one; the item says it). */
  searchEnded(index: number, query: string, outcome: SearchOutcome): ResponseStreamEvent[] {
    const item = webSearchCallItem(itemId("ws", this.ids.id, "o", index), query, outcome.status, outcome.urls);
    this.setItem(index, item);
    const events: ResponseStreamEvent[] = [];
    if (outcome.status === "completed") events.push(this.event("response.web_search_call.completed", { item_id: item.id, output_index: index }));
    events.push(this.event("response.output_item.done", { output_index: index, item }));
    return events;
  }

  /** The stream ended: open items closed, then response.completed (or .incomplete for a cut answer). */
  finish(): ResponseStreamEvent[] {
    const events: ResponseStreamEvent[] = [];
    this.closeText(events);
    for (const call of this.calls.values()) this.closeCall(call, events);
    this.calls.clear();
    const response = this.finalResponse();
    const status = response.status === "completed" ? "completed" : "incomplete";
    const json = this.responseJson.json({
      status,
      completedAt: typeof response.completed_at === "number" ? response.completed_at : null,
      output: this.outputJson,
      usage: this.usageSoFar(),
      finishReason: this.finishReason,
    });
    events.push(this.serialized(`response.${status}`, `{"response":${json}}`));
    return events;
  }

  /** A failure after the first event: the stream ends with response.failed, never with another upstream's answer. */
  fail(error: { code: string; message: string }): ResponseStreamEvent[] {
    this.failure = error;
    this.finalResponse();
    const json = this.responseJson.json({ status: "failed", output: this.outputJson, usage: this.usageSoFar(), error });
    return [this.serialized("response.failed", `{"response":${json}}`)];
  }

  /** The response the last event carried (finish or fail called first). */
  finalResponse(): Json {
    this.final ??= this.failure ? { ...this.response("failed"), error: this.failure } : this.response(statusOf(this.finishReason));
    return this.final;
  }

  /** The response as the stream has it now (its items so far, in order). */
  response(status: "in_progress" | "completed" | "incomplete" | "failed"): Json {
    return responseObject(this.request, this.ids, { status, output: [...this.output], usage: this.usageSoFar(), finishReason: this.finishReason });
  }

  private usageSoFar(): ResponseUsage | undefined {
    return addUsage(this.earlierUsage, this.usage);
  }

  /** The output item at `index`, as an object and as JSON text. */
  private setItem(index: number, item: Json, json = JSON.stringify(item)): void {
    this.output[index] = item;
    this.outputJson[index] = json;
  }

  private textDelta(delta: TextDelta, events: ResponseStreamEvent[]): void {
    if (!this.text) {
      const index = this.output.length;
      const id = itemId("msg", this.ids.id, "o", index);
      const deltaFields = `"item_id":"${id}","output_index":${index},"content_index":0,"delta":`;
      const text: OpenText = { id, index, text: "", deltaFields };
      this.text = text;
      this.setItem(index, messageItem(text.id, "", "in_progress"));
      // The item is announced without content; the part follows in its own event.
      const added = messageItem(text.id, "", "in_progress");
      added.content = [];
      events.push(this.event("response.output_item.added", { output_index: text.index, item: added }));
      events.push(this.event("response.content_part.added", { item_id: text.id, output_index: text.index, content_index: 0, part: outputTextPart("") }));
    }
    const text = this.text;
    text.text += delta.text;
    this.roundText += delta.text;
    // Written as text, the delta as the upstream escaped it: one event per token (the same fields as event() would write).
    const data = `{"type":"response.output_text.delta","sequence_number":${this.sequence++},${text.deltaFields}${delta.literal},"logprobs":[]}`;
    events.push({ event: "response.output_text.delta", data });
  }

  private closeText(events: ResponseStreamEvent[]): void {
    const text = this.text;
    if (!text) return;
    this.text = undefined;
    // The text is escaped once for the three events and the Response that carry it; the item and
    // its part are written as JSON.stringify writes messageItem and outputTextPart (the tests compare).
    const literal = JSON.stringify(text.text);
    const part = `{"type":"output_text","text":${literal},"annotations":[],"logprobs":[]}`;
    const item = `{"type":"message","id":"${text.id}","status":"completed","role":"assistant","content":[${part}]}`;
    this.setItem(text.index, messageItem(text.id, text.text, "completed"), item);
    const at = `{"item_id":"${text.id}","output_index":${text.index},"content_index":0,`;
    events.push(this.serialized("response.output_text.done", `${at}"text":${literal},"logprobs":[]}`));
    events.push(this.serialized("response.content_part.done", `${at}"part":${part}}`));
    events.push(this.serialized("response.output_item.done", `{"output_index":${text.index},"item":${item}}`));
  }

  private callDelta(delta: Json, events: ResponseStreamEvent[]): void {
    const chatIndex = typeof delta.index === "number" ? delta.index : 0;
    const fn = isObject(delta.function) ? delta.function : {};
    const search = this.searches.get(chatIndex);
    if (search || (!this.calls.has(chatIndex) && fn.name === SEARCH_FUNCTION_NAME)) {
      this.holdSearch(chatIndex, search, delta, fn);
      return;
    }
    let call = this.calls.get(chatIndex);
    if (!call) {
      // Items are sequential: the text before a call is complete once the call begins.
      this.closeText(events);
      const index = this.output.length;
      call = { id: itemId("fc", this.ids.id, "o", index), index, callId: delta.id, name: fn.name, arguments: "" };
      this.calls.set(chatIndex, call);
      const item = functionCallItem(call.id, call.callId, call.name, "", "in_progress");
      this.setItem(index, item);
      events.push(this.event("response.output_item.added", { output_index: call.index, item }));
    }
    if (typeof fn.arguments === "string" && fn.arguments !== "") {
      call.arguments += fn.arguments;
      events.push(this.event("response.function_call_arguments.delta", { item_id: call.id, output_index: call.index, delta: fn.arguments }));
    }
  }

  private holdSearch(chatIndex: number, search: SearchFunctionCall | undefined, delta: Json, fn: Json): void {
    const held = search ?? { id: typeof delta.id === "string" && delta.id !== "" ? delta.id : `call_ws${this.sequence}`, arguments: "" };
    if (typeof fn.arguments === "string") held.arguments += fn.arguments;
    this.searches.set(chatIndex, held);
  }

  private closeCall(call: OpenCall, events: ResponseStreamEvent[]): void {
    const item = functionCallItem(call.id, call.callId, call.name, call.arguments, "completed");
    this.setItem(call.index, item);
    events.push(
      this.event("response.function_call_arguments.done", { item_id: call.id, output_index: call.index, name: item.name, arguments: call.arguments }),
    );
    events.push(this.event("response.output_item.done", { output_index: call.index, item }));
  }

  /** `type` and `sequence_number` first, then the fields (written without copying them into a new object). */
  private event(type: string, fields: Json): ResponseStreamEvent {
    return this.serialized(type, JSON.stringify(fields));
  }

  /** An event whose fields are already JSON text (an object with at least one field). */
  private serialized(type: string, fields: string): ResponseStreamEvent {
    return { event: type, data: `{"type":"${type}","sequence_number":${this.sequence++},${fields.slice(1)}` };
  }
}
