// A named-event SSE body (the Responses and messages streams: `event:` then `data:`), read back as
// the event names in order and the last event's JSON, for tests that read a stream without an SDK.

/** The Responses stream's last event when it failed. */
export interface ResponseFailedEvent {
  response: { status: string; error: { code: string; message: string }; output: Array<Record<string, unknown>> };
}

export function namedEvents<Last = ResponseFailedEvent>(text: string): { names: string[]; last: Last } {
  const names = [...text.matchAll(/^event: (\S+)$/gm)].map((match) => match[1] ?? "");
  const lastData = text.trim().split("\n").at(-1) ?? "";
  return { names, last: JSON.parse(lastData.replace(/^data: /, "")) as Last };
}
