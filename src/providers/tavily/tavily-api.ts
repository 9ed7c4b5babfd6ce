// The parts of Tavily's bodies gw reads (https://docs.tavily.com/api-reference/endpoint/search), as lenient schemas:
// every field may be missing or of another type, and reads as absent then.
import { z } from "zod";
import { lenient, lenientList, presentText } from "../upstream-schema.js";

/** Where Tavily's API is. */
export const TAVILY_BASE_URL = "https://api.tavily.com";

/** An error body: {detail: {error}} (what its SDK reads), FastAPI's {detail: "..."} or {detail: [{loc, msg}]}, or {error}. */
export const TavilyErrorBody = z.object({
  detail: lenient(z.union([z.object({ error: lenient(z.string().min(1)) }), z.string().min(1), z.array(z.unknown())])),
  error: lenient(z.string().min(1)),
});

/** A search answer: {results: [{url, title, content, published_date}], request_id}. */
export const TavilySearchAnswer = z.object({
  results: z.array(z.unknown()),
  request_id: presentText,
});

/** `results`: a result that is not an object is skipped. */
export const TavilyResults = lenientList(z.object({ url: presentText, title: presentText, content: presentText, published_date: presentText }));
