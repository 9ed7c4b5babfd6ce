// The Response object's JSON text for a stream's events, put together from parts. A stream sends
// the whole Response three times (response.created, .in_progress and .completed); serializing it
// each time re-escaped the request's settings and, at the end, the answer's text, which the
// closing events had just escaped for themselves. Here the settings are serialized once per
// stream, from responseObject itself (one list of fields), and each output item's text once.
// The text equals JSON.stringify(responseObject(...)) for the same fields
// (test/response-json-text.test.ts).
import { incompleteReason, type ResponseIds, type ResponseStatus, type ResponseUsage, responseObject } from "./convert-chat-to-response.js";

/** What changes from one of a stream's Responses to the next; the rest is the request's. */
export interface ResponseMoment {
  status: ResponseStatus;
  /** Seconds; set when the status is completed. */
  completedAt?: number | null;
  /** Each output item's JSON text, in order. */
  output: readonly string[];
  usage?: ResponseUsage;
  finishReason?: string;
  error?: { code: string; message: string };
}

const STATUS_FIELDS = '"status":"in_progress","completed_at":null,"error":null,"incomplete_details":null,';
const OUTPUT_FIELD = '"output":[]';
const USAGE_FIELD = '"usage":null';

export class ResponseJsonText {
  /** `{"id":…,"created_at":…,` */
  private readonly head: string;
  /** From `"instructions"` up to the output's value. */
  private readonly beforeOutput: string;
  /** From after the output up to the usage's value. */
  private readonly beforeUsage: string;
  /** From after the usage to the end. */
  private readonly tail: string;

  constructor(request: Parameters<typeof responseObject>[0], ids: ResponseIds) {
    const text = JSON.stringify(responseObject(request, ids, { status: "in_progress", output: [] }));
    // Before the output only gw's own values and strings come (a string's quotes are escaped), so
    // the first match of each is the Response's own field; after the usage only `user` (a string)
    // and `metadata` (strings) do, so the last match of the usage is too.
    const status = text.indexOf(STATUS_FIELDS);
    const output = text.indexOf(OUTPUT_FIELD, status);
    const usage = text.lastIndexOf(USAGE_FIELD);
    if (status < 0 || output < 0 || usage < output) throw new Error("the Response's fields are not where its JSON text is put together");
    this.head = text.slice(0, status);
    this.beforeOutput = text.slice(status + STATUS_FIELDS.length, output + OUTPUT_FIELD.length - 1);
    this.beforeUsage = text.slice(output + OUTPUT_FIELD.length - 1, usage + USAGE_FIELD.length - 4);
    this.tail = text.slice(usage + USAGE_FIELD.length);
  }

  /** The Response's JSON text at this moment of the stream. */
  json(moment: ResponseMoment): string {
    // The values responseObject gives these fields.
    const completedAt = moment.completedAt ?? null;
    const error = moment.error ? JSON.stringify(moment.error) : "null";
    const incomplete = moment.status === "incomplete" ? JSON.stringify({ reason: incompleteReason(moment.finishReason) }) : "null";
    const usage = moment.usage ? JSON.stringify(moment.usage) : "null";
    return `${this.head}"status":"${moment.status}","completed_at":${completedAt},"error":${error},"incomplete_details":${incomplete},${this.beforeOutput}${moment.output.join(",")}${this.beforeUsage}${usage}${this.tail}`;
  }
}
