// What a request tag may be (docs/decisions.md §24): the gateway checks `x-gw-tags` and metadata
// pairs against it, and `gw usage --tag` the tags it is asked to filter by.

/** 1 to 64 ASCII letters, digits and `_ - . : / @ =`. */
const TAG = /^[A-Za-z0-9_\-.:/@=]{1,64}$/;

/** The rule in words, for messages. */
export const TAG_RULE = "1 to 64 letters, digits or _ - . : / @ =";

export function isTag(text: string): boolean {
  return TAG.test(text);
}
