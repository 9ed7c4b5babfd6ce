// Provider type `tavily`: Tavily's search API for agents (models `basic`, `advanced`: its search depth).
import { defineProvider } from "../provider.js";
import { createTavilySearch } from "./tavily-search.js";

export const tavilyProvider = defineProvider({
  type: "tavily",
  capabilities: ["search"],
  create(context) {
    return { name: context.name, type: "tavily", search: createTavilySearch(context) };
  },
});
