// Request tags (docs/decisions.md §24): words a client attaches to a request so that its usage rows
// can be summed per feature, customer or job (`gw usage --by tag`). They come from the
// `x-gw-tags` header (a bad one is a 400 before anything is billed) and from the body's OpenAI
// `metadata` (chat completions, responses, a batch), whose pairs become `key:value` tags when
// they can be tags and are otherwise left alone: metadata OpenAI accepts never fails a request.

import { isTag, TAG_RULE } from "../text/tag-syntax.js";
import { InvalidRequestError } from "./errors.js";

export const TAGS_HEADER = "x-gw-tags";

/** At most this many tags in the header (after duplicates collapse); metadata adds at most as many more (OpenAI's limit on its pairs). */
export const MAX_HEADER_TAGS = 16;
export const MAX_METADATA_TAGS = 16;

/**
 * The header's tags in the order given, duplicates collapsed; undefined for no header (or one
 * with no tag in it). Items are trimmed and empty ones skipped (`a, b,` is a and b). A tag
 * outside the rule, or more than 16, is a 400 naming the header and the tag.
 */
export function parseTagsHeader(value: string | null): string[] | undefined {
  if (value === null) return undefined;
  const tags = new Set<string>();
  for (const item of value.split(",")) {
    const tag = item.trim();
    if (tag === "") continue;
    if (!isTag(tag)) {
      throw new InvalidRequestError(`Invalid '${TAGS_HEADER}': the tag ${JSON.stringify(shortened(tag))} is not ${TAG_RULE} (tags are separated by commas).`, {
        param: TAGS_HEADER,
      });
    }
    tags.add(tag);
  }
  if (tags.size > MAX_HEADER_TAGS) {
    throw new InvalidRequestError(`Invalid '${TAGS_HEADER}': ${tags.size} tags; a request may carry at most ${MAX_HEADER_TAGS}.`, { param: TAGS_HEADER });
  }
  return tags.size > 0 ? [...tags] : undefined;
}

/**
 * The tags an OpenAI `metadata` map gives: `key:value` for each string pair that is a valid
 * tag, in the map's order, at most 16. Anything else (a pair too long or with other characters,
 * a value that is not a string, metadata that is not an object) gives no tag and no error.
 */
export function metadataTags(metadata: unknown): string[] {
  if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata)) return [];
  const tags: string[] = [];
  for (const [key, value] of Object.entries(metadata)) {
    if (typeof value !== "string") continue;
    const tag = `${key}:${value}`;
    if (isTag(tag)) tags.push(tag);
    if (tags.length === MAX_METADATA_TAGS) break;
  }
  return tags;
}

/** The header's tags, then the metadata's, duplicates collapsed; undefined when there are none (the row then has no `tags`). */
export function requestTags(header: readonly string[] | undefined, metadata: unknown): readonly string[] | undefined {
  // The common case, a request with neither, allocates nothing.
  if (metadata === undefined || metadata === null) return header;
  const fromMetadata = metadataTags(metadata);
  if (fromMetadata.length === 0) return header;
  return [...new Set([...(header ?? []), ...fromMetadata])];
}

function shortened(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
