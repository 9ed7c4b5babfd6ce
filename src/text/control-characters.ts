// Control characters in text that came from someone else (a file name, a header value, a web
// page), found or removed in one place. A leaf: it imports nothing from the project.
// Functions rather than exported regexes: a global regex keeps state between .test() calls.
// biome-ignore-all lint/suspicious/noControlCharactersInRegex: finding control characters is what this module is for

/** C0 controls (U+0000-U+001F) and DEL: what no header value or plain name may carry. */
const C0_AND_DEL = /[\u0000-\u001f\u007f]/;
const EVERY_C0_AND_DEL = /[\u0000-\u001f\u007f]/g;
/** C0, DEL and the C1 controls (U+0080-U+009F). */
const EVERY_C0_AND_C1 = /[\u0000-\u001f\u007f-\u009f]/g;
/** C0, DEL, C1 and the bidi controls used to disguise a file's extension (U+202E ...). */
const FILE_NAME_UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;
/** Terminal escape sequences: CSI (colours, cursor), OSC (titles, links; BEL- or ST-ended, or cut off), 8-bit CSI. */
const TERMINAL_ESCAPES = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)?|\u009b[0-?]*[ -/]*[@-~]/g;

/** Whether `text` holds a C0 control or DEL. */
export function hasControlCharacter(text: string): boolean {
  return C0_AND_DEL.test(text);
}

/** Each C0 control and DEL replaced by `replacement` ("" drops them). */
export function replaceControlCharacters(text: string, replacement: string): string {
  return text.replace(EVERY_C0_AND_DEL, replacement);
}

/** Each C0 control, DEL and C1 control replaced by `replacement`. */
export function replaceC0AndC1Controls(text: string, replacement: string): string {
  return text.replace(EVERY_C0_AND_C1, replacement);
}

/** `text` without control characters (C0, DEL, C1) and bidi controls: a file name that shows what it is. */
export function withoutFileNameControls(text: string): string {
  return text.replace(FILE_NAME_UNSAFE, "");
}

/** `text` without the escape sequences a terminal would act on. */
export function withoutTerminalEscapes(text: string): string {
  return text.replace(TERMINAL_ESCAPES, "");
}

/** Printable ASCII on one line, at most 512 characters: safe as a response header's value. */
export function headerSafe(value: string): string {
  return value
    .replace(/[^\x20-\x7e]/g, " ")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 512);
}
