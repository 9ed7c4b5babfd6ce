// A native upstream's Response, and each of its stream events, as the client gets them
// (docs/decisions.md §19): as they came, except the response's `id` is gw's, `model` the public
// model, the fields gw changed on the way up echo what the client sent (previous_response_id,
// store, max_output_tokens), and each output item's `id` is gw's item id for its place, keeping
// the upstream id's prefix (`rs`, `msg`, `fc`, `ws` ...), so item_reference and input_items work
// as for converted responses. Nothing else is touched: a reasoning item's encrypted_content goes
// back byte for byte. The stream keeps the upstream's sequence numbers; when it ends without
// response.completed, .incomplete or .failed, gw ends it with response.failed, numbered on.
import { isObject, type Json, parseJsonObject } from "../../json/json-values.js";
import type { NativeResponsesEvent } from "../../providers/responses-types.js";
import { withCreditsInUsage } from "../billing/credits-in-usage.js";
import { readChatUsage, type UsageReading } from "../billing/token-usage.js";
import type { RelayedText } from "../upstream-calls/chat-metering.js";
import { itemId, type ResponseIds, type ResponseUsage, responseObject } from "./convert-chat-to-response.js";
import type { ResponsesRequest } from "./responses-request.js";

const TERMINAL_EVENTS = new Set(["response.completed", "response.incomplete", "response.failed"]);

/** The Response (changed in place) with gw's ids, the public model and the client's own settings echoed. */
export function rewriteResponse(response: Json, request: ResponsesRequest, ids: ResponseIds): Json {
  response.id = ids.id;
  response.model = ids.model;
  response.previous_response_id = request.previous_response_id ?? null;
  response.store = request.store ?? true;
  if ("max_output_tokens" in response) response.max_output_tokens = request.max_output_tokens ?? null;
  if (Array.isArray(response.output)) response.output = response.output.map((item, index) => (isObject(item) ? rewriteItem(item, ids.id, index) : item));
  return response;
}

/** An output item with gw's id for output place `index` of the response. */
export function rewriteItem(item: Json, responseId: string, index: number): Json {
  return { ...item, id: itemId(prefixOf(item.id), responseId, "o", index) };
}

/** The upstream id's prefix (`rs_…` → `rs`); `item` for an id without one. */
function prefixOf(id: unknown): string {
  return (typeof id === "string" ? /^([a-z]+)_/.exec(id)?.[1] : undefined) ?? "item";
}

/** The Responses usage read for billing (input_tokens includes the cached ones, output_tokens the reasoning ones, as chat's). */
export function readResponsesUsage(usage: unknown): UsageReading {
  if (!isObject(usage)) return readChatUsage(usage);
  const details = isObject(usage.input_tokens_details) ? usage.input_tokens_details : {};
  return readChatUsage({
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    prompt_tokens_details: { cached_tokens: details.cached_tokens },
  });
}

/**
 * One native stream on its way to the client: each batch rewritten, the text relayed counted, the
 * upstream's usage read from the event that ends the stream (the estimate put in its place when
 * the upstream had none that holds), and the response so far, for a response.failed of gw's own.
 */
export class NativeResponseStream {
  /** The upstream's usage, for billing; missing until the stream's last event. */
  usage: UsageReading = { missing: true };
  /** Characters and bytes of the deltas relayed, for usage the upstream never sent. */
  readonly relayed: RelayedText = { characters: 0, bytes: 0 };
  /** The response the stream ended with (the upstream's last event, or gw's response.failed). */
  ended: Json | undefined;
  /** The event that carried `ended`, as relayed (its data parsed), for sending again with what the call cost. */
  private terminal: { event: string; data: Json } | undefined;
  private sequence = -1;
  private latest: Json | undefined;
  private readonly items: Json[] = [];
  private upstreamError: { code: string; message: string } | undefined;

  constructor(
    private readonly request: ResponsesRequest,
    private readonly ids: ResponseIds,
    /** The gateway's usage estimate from what was relayed so far. */
    private readonly estimate: (relayed: RelayedText) => ResponseUsage,
  ) {}

  relay(batch: NativeResponsesEvent[]): NativeResponsesEvent[] {
    return batch.map((event) => {
      const data = parseJsonObject(event.data);
      // The provider relays only JSON objects; anything else goes on as it came.
      if (!data) return event;
      const ended = this.ended;
      this.rewrite(data, typeof data.type === "string" ? data.type : event.event);
      if (this.ended !== ended) this.terminal = { event: event.event, data };
      return { event: event.event, data: JSON.stringify(data) };
    });
  }

  /** The upstream's last event, again, its response's usage saying what the call cost (`gw_credits`, docs/decisions.md §24). */
  terminalCosting(credits: number): NativeResponsesEvent | undefined {
    const terminal = this.terminal;
    if (!terminal || !isObject(terminal.data.response)) return undefined;
    withCreditsInUsage(terminal.data.response, credits);
    return { event: terminal.event, data: JSON.stringify(terminal.data) };
  }

  /** The stream broke off (or ended without a last event): response.failed with what was produced, numbered on. */
  fail(failure: { code: string; message: string }): NativeResponsesEvent {
    const error = this.upstreamError ?? failure;
    const base = this.latest ?? responseObject(this.request, this.ids, { status: "failed", output: [] });
    const response: Json = { ...base, status: "failed", error, output: this.items.filter(isObject), usage: this.estimate(this.relayed) };
    this.ended = response;
    this.sequence += 1;
    return { event: "response.failed", data: JSON.stringify({ type: "response.failed", sequence_number: this.sequence, response }) };
  }

  private rewrite(data: Json, type: string): void {
    if (typeof data.sequence_number === "number") this.sequence = data.sequence_number;
    if (typeof data.delta === "string") {
      this.relayed.characters += data.delta.length;
      this.relayed.bytes += Buffer.byteLength(data.delta);
    }
    const index = typeof data.output_index === "number" ? data.output_index : undefined;
    if (index !== undefined && typeof data.item_id === "string") data.item_id = itemId(prefixOf(data.item_id), this.ids.id, "o", index);
    if (index !== undefined && isObject(data.item)) {
      const item = rewriteItem(data.item, this.ids.id, index);
      data.item = item;
      this.items[index] = item;
    }
    if (type === "error") this.upstreamError = { code: typeof data.code === "string" ? data.code : "upstream_error", message: String(data.message ?? "") };
    if (!isObject(data.response)) return;
    const response = rewriteResponse(data.response, this.request, this.ids);
    this.latest = response;
    if (!TERMINAL_EVENTS.has(type)) return;
    this.usage = readResponsesUsage(response.usage);
    // The client sees what was billed: the upstream's usage, or the estimate when it had none that holds.
    if (!("counts" in this.usage)) response.usage = this.estimate(this.relayed);
    this.ended = response;
  }
}
