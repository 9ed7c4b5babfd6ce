// The hosted `web_search` tool as gw serves it over chat (docs/decisions.md §19): the model is
// offered a function, `gw_web_search(query)`, in its place; each call the model makes is a search
// gw runs itself (web-searches.ts), answered with a bounded tool message, and shown to the client
// as a `web_search_call` item. Pure helpers: the function, the call's query, the tool message, the
// item, and the chat request of the next round.
import { isObject, type Json } from "../../json/json-values.js";
import type { ChatCompletion, JsonObject } from "../../providers/chat-types.js";
import type { ChatRequestBody } from "../chat/chat-request.js";
import type { SearchResultItem } from "../search/search-service.js";
import { MAX_QUERY_LENGTH } from "../search/search-service.js";

/** The hosted tool types gw serves with its own search providers. */
export const WEB_SEARCH_TOOL_TYPES = new Set(["web_search", "web_search_preview", "web_search_2025_08_26", "web_search_preview_2025_03_11"]);

/** Prefixed so a client's own function is unlikely to share it; one that does is refused (400). */
export const SEARCH_FUNCTION_NAME = "gw_web_search";

/** Model calls that may search; the call after the last of them is made with tool_choice none. */
export const MAX_SEARCH_ROUNDS = 5;

/** What the model reads of one search: at most this many results, each field cut to its bound. */
export const SEARCH_RESULTS_PER_CALL = 5;
const MAX_TITLE_CHARACTERS = 200;
const MAX_SNIPPET_CHARACTERS = 500;
const MAX_URL_CHARACTERS = 2000;

export function searchFunctionTool(): JsonObject {
  return {
    type: "function",
    function: {
      name: SEARCH_FUNCTION_NAME,
      description: "Search the web. Returns the title, URL and a snippet of the top results for the query.",
      parameters: {
        type: "object",
        properties: { query: { type: "string", description: "What to search the web for." } },
        required: ["query"],
        additionalProperties: false,
      },
    },
  };
}

/** One call of the search function, as the model made it. */
export interface SearchFunctionCall {
  id: string;
  arguments: string;
}

/** The query in a call's arguments (cut to what a search takes), or undefined when there is none. */
export function queryOf(call: SearchFunctionCall): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(call.arguments);
  } catch {
    return undefined;
  }
  const query = isObject(parsed) && typeof parsed.query === "string" ? parsed.query.trim() : "";
  return query === "" ? undefined : query.slice(0, MAX_QUERY_LENGTH);
}

/** What one search came to: the item's status and sources, and the tool message the model reads. */
export interface SearchOutcome {
  /** Undefined when the call had no query: no search ran, and no item shows it. */
  query: string | undefined;
  status: "completed" | "failed";
  urls: string[];
  toolContent: string;
}

export function searchResultsOutcome(query: string, results: readonly SearchResultItem[]): SearchOutcome {
  const shown = results.slice(0, SEARCH_RESULTS_PER_CALL).map((result) => ({
    title: result.title.slice(0, MAX_TITLE_CHARACTERS),
    url: result.url.slice(0, MAX_URL_CHARACTERS),
    snippet: result.snippet.slice(0, MAX_SNIPPET_CHARACTERS),
    ...(result.publishedDate === undefined ? {} : { published_date: result.publishedDate }),
  }));
  return { query, status: "completed", urls: shown.map((result) => result.url), toolContent: JSON.stringify({ query, results: shown }) };
}

export function failedSearchOutcome(query: string, code: string): SearchOutcome {
  return { query, status: "failed", urls: [], toolContent: `The search failed (${code}). Answer without it, or search again later.` };
}

export function noQueryOutcome(): SearchOutcome {
  return { query: undefined, status: "failed", urls: [], toolContent: 'Not searched: the arguments must be JSON like {"query": "what to search for"}.' };
}

/** OpenAI's ResponseFunctionWebSearch: `query` (deprecated there) and `queries` both, for old and new SDKs. */
export function webSearchCallItem(id: string, query: string, status: "in_progress" | "completed" | "failed", urls: readonly string[]): Json {
  return { type: "web_search_call", id, status, action: { type: "search", query, queries: [query], sources: urls.map((url) => ({ type: "url", url })) } };
}

/**
 * The chat request of the next model call: this one's messages, then the assistant turn that
 * searched and a tool message per search. The last allowed call keeps the tools (an upstream such
 * as Anthropic refuses tool calls in the history of a request without tools) but may call none.
 */
export function nextRoundRequest(
  chat: ChatRequestBody,
  text: string,
  calls: readonly SearchFunctionCall[],
  outcomes: readonly SearchOutcome[],
  last: boolean,
): ChatRequestBody {
  const toolCalls = calls.map((call) => ({ id: call.id, type: "function", function: { name: SEARCH_FUNCTION_NAME, arguments: call.arguments } }));
  const assistant: JsonObject = { role: "assistant", content: text === "" ? null : text, tool_calls: toolCalls };
  const results = calls.map((call, index) => ({ role: "tool", tool_call_id: call.id, content: outcomes[index]?.toolContent ?? "" }));
  const next: JsonObject = { ...chat, messages: [...chat.messages, assistant, ...results] };
  if (last) {
    next.tool_choice = "none";
    delete next.parallel_tool_calls;
  }
  return next as ChatRequestBody;
}

/** The searches a finished model call asked for, when it called none of the client's functions (those end the response). */
export function searchRoundOf(completion: ChatCompletion): { text: string; calls: SearchFunctionCall[] } | undefined {
  const choice = completion.choices[0] ?? {};
  const message = isObject(choice.message) ? choice.message : {};
  const calls: SearchFunctionCall[] = [];
  for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    if (!isObject(call) || !isObject(call.function)) continue;
    if (call.function.name !== SEARCH_FUNCTION_NAME) return undefined;
    const id = typeof call.id === "string" && call.id !== "" ? call.id : `call_ws${calls.length}`;
    calls.push({ id, arguments: typeof call.function.arguments === "string" ? call.function.arguments : "" });
  }
  if (calls.length === 0) return undefined;
  return { text: typeof message.content === "string" ? message.content : "", calls };
}
