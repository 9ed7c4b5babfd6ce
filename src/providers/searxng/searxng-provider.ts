// Provider type `searxng`: a self-hosted SearXNG instance's JSON search API (baseUrl required).
import { defineProvider } from "../provider.js";
import { createSearxngSearch } from "./searxng-search.js";

export const searxngProvider = defineProvider({
  type: "searxng",
  capabilities: ["search"],
  create(context) {
    return { name: context.name, type: "searxng", search: createSearxngSearch(context) };
  },
});
