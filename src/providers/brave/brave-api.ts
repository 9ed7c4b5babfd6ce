// The parts of Brave Search's bodies gw reads (https://api-dashboard.search.brave.com/api-reference/web/search/get), as
// lenient schemas: every field may be missing or of another type, and reads as absent then.
import { z } from "zod";
import { lenient, lenientList, presentText, ValidationList } from "../upstream-schema.js";

/** Where Brave Search's API is: the origin, every path under /res/v1. */
export const BRAVE_BASE_URL = "https://api.search.brave.com";

/** An error body: {type: "ErrorResponse", error: {id, status, code, detail, meta: {errors?: [{loc, msg, type}]}}}. */
export const BraveErrorBody = z.object({
  error: z.object({ code: lenient(z.string().min(1)), detail: lenient(z.string().min(1)), meta: lenient(z.object({ errors: ValidationList })) }),
});

/** One result of `web.results`. */
const BraveResult = z.object({ url: presentText, title: presentText, description: presentText, page_age: presentText, age: presentText });

/** A web search answer: no `web` section means no results. */
export const BraveSearchAnswer = z.object({
  web: z.object({ results: z.array(z.unknown()) }).nullish(),
});

/** `web.results`: a result that is not an object is skipped. */
export const BraveResults = lenientList(BraveResult);
