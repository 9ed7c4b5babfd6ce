// Provider type `brave`: the Brave Search API's web search.
import { defineProvider } from "../provider.js";
import { createBraveSearch } from "./brave-search.js";

export const braveProvider = defineProvider({
  type: "brave",
  capabilities: ["search"],
  create(context) {
    return { name: context.name, type: "brave", search: createBraveSearch(context) };
  },
});
