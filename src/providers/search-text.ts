// What the search adapters share: vendor text as plain text (Brave's <strong> highlights and HTML
// entities in titles and snippets), a vendor's date kept as it is, and a vendor's result as a hit.

import type { SearchHit } from "./search-types.js";

const NAMED_ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " ", hellip: "…", mdash: "—", ndash: "–" };

/** Tags (`<strong>`, `</b>`, `<br/>`) removed, entities decoded, whitespace runs collapsed. */
export function plainText(text: string): string {
  return decodeEntities(text.replace(/<\/?[A-Za-z][^<>]*>/g, ""))
    .replace(/\s+/g, " ")
    .trim();
}

function decodeEntities(text: string): string {
  return text.replace(/&(#[xX][0-9A-Fa-f]{1,6}|#[0-9]{1,7}|[A-Za-z]+);/g, (whole, name: string) => {
    if (name.startsWith("#")) {
      const code = name[1] === "x" || name[1] === "X" ? Number.parseInt(name.slice(2), 16) : Number.parseInt(name.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    const lower = name.toLowerCase();
    // Own keys only: `&constructor;` in a page is text, not a way into Object.prototype.
    return Object.hasOwn(NAMED_ENTITIES, lower) ? (NAMED_ENTITIES[lower] ?? whole) : whole;
  });
}

/** The fields of a vendor's result, each a present string or absent. */
export interface VendorResult {
  url?: string;
  title?: string;
  snippet?: string;
  published?: string;
}

/** A result as a hit: none without a URL; a missing title is the URL; title and snippet as plain text. */
export function searchHit({ url, title, snippet, published }: VendorResult): SearchHit | undefined {
  if (!url) return undefined;
  const hit: SearchHit = { title: plainText(title ?? url), url, snippet: plainText(snippet ?? "") };
  if (published) hit.published = published;
  return hit;
}
