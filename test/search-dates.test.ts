// Publication dates as YYYY-MM-DD from each vendor's own forms, and never invented.
import test from "ava";
import { normalizePublishedDate } from "../src/gateway/search/published-date.js";

const NOW = Date.UTC(2026, 10, 25, 12, 0, 0);

test("each vendor's form becomes YYYY-MM-DD", (t) => {
  const cases: Array<[string, string]> = [
    // Brave's page_age: a date-time without a zone, the calendar date as written.
    ["2026-01-02T08:15:00", "2026-01-02"],
    ["2026-01-02T23:59:59", "2026-01-02"],
    // SearXNG's publishedDate (ISO 8601, with or without a zone) and a bare date.
    ["2025-12-31T23:00:00", "2025-12-31"],
    ["2025-12-31T23:00:00+02:00", "2025-12-31"],
    ["2025-07-04", "2025-07-04"],
    // Tavily's RFC 1123 published_date.
    ["Thu, 01 Jan 2026 10:00:00 GMT", "2026-01-01"],
    ["Mon, 29 Dec 2025 23:30:00 GMT", "2025-12-29"],
    // Brave's age: relative to now.
    ["2 days ago", "2026-11-23"],
    ["1 week ago", "2026-11-18"],
    ["an hour ago", "2026-11-25"],
    ["yesterday", "2026-11-24"],
    ["3 months ago", "2026-08-27"],
    ["November 3, 2026", "2026-11-03"],
  ];
  for (const [raw, expected] of cases) t.is(normalizePublishedDate(raw, NOW), expected, raw);
});

test("no date, or one that cannot be a publication date, is left out", (t) => {
  for (const raw of [undefined, "", "   ", "recently", "2026-02-31", "2026-13-01", "1970-01-01", "2030-01-01T00:00:00", "42", "in 2 days"]) {
    t.is(normalizePublishedDate(raw, NOW), undefined, String(raw));
  }
});
