// The parts of a SearXNG instance's JSON answer gw reads (https://docs.searxng.org/dev/search_api.html), as lenient
// schemas. Its error answers are HTML pages or short texts, read by status alone (searxng-error.ts).
import { z } from "zod";
import { lenient, lenientList, presentText } from "../upstream-schema.js";

/** A search answer: {results: [{url, title, content, publishedDate}], unresponsive_engines: [[engine, error], ...]}. */
export const SearxngSearchAnswer = z.object({
  results: z.array(z.unknown()),
  unresponsive_engines: lenient(z.array(z.unknown())),
});

/** `results`: a result that is not an object is skipped. */
export const SearxngResults = lenientList(z.object({ url: presentText, title: presentText, content: presentText, publishedDate: presentText }));
