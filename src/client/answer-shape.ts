// What a call's JSON answer must be: a guard that narrows the body to the answer's type, and the
// error for a 200 whose body is not it. The guards check only what the client reads (lenient: the
// gateway may add fields); the body is checked once, where it is read, and call sites get it typed.
import { isObject } from "../json/json-values.js";
import { GwApiError, unexpectedAnswer } from "./gw-api-error.js";

export interface AnswerShape<T> {
  is: (body: unknown) => body is T;
  /** The error for a 200 whose body is not T. */
  unexpected: (body: unknown) => GwApiError;
}

/** Refused as `unexpected WHAT answer from the gateway`, or with `message` when given. */
export function answerShape<T>(what: string, is: (body: unknown) => body is T, message?: string): AnswerShape<T> {
  return {
    is,
    unexpected: (body) => (message === undefined ? unexpectedAnswer(what, body) : new GwApiError(message, 200, undefined, undefined, undefined, body)),
  };
}

export function expectAnswer<T>(body: unknown, shape: AnswerShape<T>): T {
  if (!shape.is(body)) throw shape.unexpected(body);
  return body;
}

/** An object whose `key` is a list. */
export function hasList(body: unknown, key: string): boolean {
  return isObject(body) && Array.isArray(body[key]);
}

/** An object whose `key` is a string. */
export function hasString(body: unknown, key: string): boolean {
  return isObject(body) && typeof body[key] === "string";
}

/** An object whose `data` is an object passing `test` (the `{data: ...}` answers of storage). */
export function hasData(body: unknown, test: (data: Record<string, unknown>) => boolean): boolean {
  return isObject(body) && isObject(body.data) && test(body.data);
}
