// Render transcript segments as SRT (SubRip, no formal spec) or WebVTT (https://www.w3.org/TR/webvtt1/), as
// docs/decisions.md §7 says. Vendors' segments are not
// always tidy, so the cues are made safe to parse whatever comes in:
// - times are rounded to the millisecond and kept in order (a cue never starts before the one
//   before it, and ends at least 1 ms after it starts: WebVTT wants end > start);
// - text is trimmed, blank lines inside it are dropped (a blank line ends a cue in both formats),
//   and cues left without text are dropped, so SRT numbers stay sequential from 1;
// - WebVTT text is escaped (&, <, >), which also turns `-->` (it would start a timing line) into
//   `--&gt;`, shown as `-->`; SRT has no escaping, so `-->` there becomes `→`.
// A speaker is a WebVTT voice tag, `<v Speaker 0>text`. SRT has no voice tags; the common
// convention is a `Speaker 0: ` prefix on the cue's first line, and that is what it gets.

export interface SubtitleCue {
  /** Seconds from the start of the audio. */
  start: number;
  end: number;
  text: string;
  /** A diarised speaker; 0 is a real speaker. */
  speaker?: number;
}

interface TidyCue {
  startMs: number;
  endMs: number;
  lines: string[];
  speaker: string | undefined;
}

export function renderSrt(cues: readonly SubtitleCue[]): string {
  return tidy(cues)
    .map((cue, index) => {
      const lines = cue.lines.map((line) => line.replaceAll("-->", "→"));
      if (cue.speaker) lines[0] = `${cue.speaker}: ${lines[0]}`;
      return `${index + 1}\n${timestamp(cue.startMs, ",")} --> ${timestamp(cue.endMs, ",")}\n${lines.join("\n")}\n\n`;
    })
    .join("");
}

export function renderWebVtt(cues: readonly SubtitleCue[]): string {
  const blocks = tidy(cues).map((cue) => {
    const text = cue.lines.map(escapeVtt).join("\n");
    return `${timestamp(cue.startMs, ".")} --> ${timestamp(cue.endMs, ".")}\n${cue.speaker ? `<v ${cue.speaker}>` : ""}${text}\n\n`;
  });
  return `WEBVTT\n\n${blocks.join("")}`;
}

function tidy(cues: readonly SubtitleCue[]): TidyCue[] {
  const tidied: TidyCue[] = [];
  let previousStart = 0;
  for (const cue of cues) {
    const lines = String(cue.text ?? "")
      .split(/\r\n|\r|\n/)
      .map((line) => line.trim())
      .filter((line) => line !== "");
    if (lines.length === 0) continue;
    const startMs = Math.max(milliseconds(cue.start), previousStart);
    const endMs = Math.max(milliseconds(cue.end), startMs + 1);
    previousStart = startMs;
    const speaker = Number.isSafeInteger(cue.speaker) && cue.speaker! >= 0 ? `Speaker ${cue.speaker}` : undefined;
    tidied.push({ startMs, endMs, lines, speaker });
  }
  return tidied;
}

function milliseconds(seconds: number): number {
  return Number.isFinite(seconds) && seconds > 0 ? Math.round(seconds * 1000) : 0;
}

/** `HH:MM:SS<separator>mmm`; hours always present, more than two digits past 99 hours. */
function timestamp(ms: number, separator: "," | "."): string {
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor(ms / 60_000) % 60;
  const seconds = Math.floor(ms / 1000) % 60;
  return `${pad(hours, 2)}:${pad(minutes, 2)}:${pad(seconds, 2)}${separator}${pad(ms % 1000, 3)}`;
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, "0");
}

function escapeVtt(line: string): string {
  return line.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}
