// A result's publication date as YYYY-MM-DD, from whatever form the vendor gives: an ISO 8601
// date or date-time (Brave's `page_age`, SearXNG's `publishedDate`; a date-time without a zone is
// taken as written), an RFC 1123 date (Tavily's `published_date`), or a relative age ("2 days
// ago", "yesterday": Brave's `age`) counted back from now. Anything else, or a date that cannot
// be a publication date (before 1990, or more than a day ahead), is left out: never invented.

const UNIT_MS: Record<string, number> = {
  second: 1000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
  week: 7 * 86_400_000,
  month: 30 * 86_400_000,
  year: 365 * 86_400_000,
};

const EARLIEST = Date.UTC(1990, 0, 1);

export function normalizePublishedDate(raw: string | undefined, now: number): string | undefined {
  if (raw === undefined) return undefined;
  const text = raw.trim();
  if (text === "") return undefined;
  const time = absoluteTime(text) ?? relativeTime(text.toLowerCase(), now);
  if (time === undefined || !Number.isFinite(time) || time < EARLIEST || time > now + UNIT_MS.day!) return undefined;
  return new Date(time).toISOString().slice(0, 10);
}

function absoluteTime(text: string): number | undefined {
  // ISO 8601: the calendar date as written (a zone-less date-time is the vendor's own local time).
  const iso = /^(\d{4})-(\d{2})-(\d{2})(?:$|[T ])/.exec(text);
  if (iso) {
    const [, year, month, day] = iso.map(Number) as [number, number, number, number];
    const time = Date.UTC(year, month - 1, day);
    // Reject 2026-02-31 and the like rather than let them roll over.
    return new Date(time).getUTCDate() === day && month >= 1 && month <= 12 ? time : undefined;
  }
  // RFC 1123 / RFC 2822 (`Thu, 01 Jan 2026 10:00:00 GMT`) and other forms with a month name.
  if (/[A-Za-z]{3}/.test(text) && /\d{4}/.test(text)) {
    const parsed = Date.parse(text);
    if (Number.isNaN(parsed)) return undefined;
    if (/\b(?:GMT|UTC|Z)\b|[+-]\d{2}:?\d{2}\b/.test(text)) return parsed;
    // No zone: Date.parse read it as this machine's local time; keep the calendar date as written.
    const local = new Date(parsed);
    return Date.UTC(local.getFullYear(), local.getMonth(), local.getDate());
  }
  return undefined;
}

function relativeTime(text: string, now: number): number | undefined {
  if (text === "today" || text === "just now") return now;
  if (text === "yesterday") return now - UNIT_MS.day!;
  const match = /^(\d+|an?|one)\s+(second|minute|hour|day|week|month|year)s?\s+ago$/.exec(text);
  if (!match) return undefined;
  const count = /^\d+$/.test(match[1]!) ? Number(match[1]) : 1;
  return now - count * UNIT_MS[match[2]!]!;
}
