// HTML for the console's pages: one tagged template, `html`, that escapes every value put into it
// (text and attribute values alike: & < > " ' become entities), so a name, a model or a failure
// message from anywhere cannot become markup. Only what `html` itself made (an Html) goes in as it
// is; nothing else can produce one. Attribute values are always written in double quotes.

export class Html {
  private constructor(readonly text: string) {}

  /** Only the template below makes markup. */
  static fromTemplate(text: string): Html {
    return new Html(text);
  }

  toString(): string {
    return this.text;
  }
}

export type HtmlValue = Html | string | number | boolean | null | undefined | readonly HtmlValue[];

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ENTITIES[character]!);
}

/** Markup from a template: each interpolation escaped, an Html kept, a list joined, null/undefined/false left out. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let text = strings[0]!;
  for (let index = 0; index < values.length; index++) text += render(values[index]) + strings[index + 1]!;
  return Html.fromTemplate(text);
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return "";
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join("");
  return escapeHtml(String(value));
}

/**
 * Data for the page's script, in a `<script type="application/json">` block (not run, so the
 * Content-Security-Policy allows it): JSON with `<` written as \u003c, so no value can close the block.
 */
export function jsonData(id: string, value: unknown): Html {
  const json = JSON.stringify(value).replaceAll("<", "\\u003c");
  return Html.fromTemplate(`<script type="application/json" id="${escapeHtml(id)}">${json}</script>`);
}
