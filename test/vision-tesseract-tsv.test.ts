// The pure parser of tesseract's TSV output: words with their own confidences, lines built from
// them, paragraphs separated in the full text, structural and malformed rows skipped.
import test from "ava";
import { parseTesseractTsv } from "../src/media/tesseract-tsv.js";

const row = (...fields: Array<string | number>) => fields.join("\t");
const HEADER = row("level", "page_num", "block_num", "par_num", "line_num", "word_num", "left", "top", "width", "height", "conf", "text");

// Trimmed from a real `tesseract IMAGE stdout tsv` run (tesseract 5.3).
const TSV = [
  HEADER,
  row(1, 1, 0, 0, 0, 0, 0, 0, 900, 400, -1, ""),
  row(2, 1, 1, 0, 0, 0, 44, 57, 596, 162, -1, ""),
  row(3, 1, 1, 1, 0, 0, 44, 57, 596, 162, -1, ""),
  row(4, 1, 1, 1, 1, 0, 47, 57, 593, 54, -1, ""),
  row(5, 1, 1, 1, 1, 1, 47, 57, 223, 54, 95.269058, "HELLO"),
  row(5, 1, 1, 1, 1, 2, 301, 57, 339, 54, 91.5, "GATEWAY"),
  row(4, 1, 1, 1, 2, 0, 44, 155, 575, 64, -1, ""),
  row(5, 1, 1, 1, 2, 1, 44, 155, 199, 64, 80, "Quick"),
  row(5, 1, 1, 1, 2, 2, 273, 155, 210, 56, 0, " "),
  row(5, 1, 1, 1, 2, 3, 513, 155, 106, 56, 60, "fox"),
  row(2, 1, 2, 0, 0, 0, 40, 300, 300, 60, -1, ""),
  row(5, 1, 2, 1, 1, 1, 40, 300, 300, 60, 42.25, "Second"),
  "a broken row",
  row(5, 1, 2, 1, 1, 2, 40, 300),
  "",
].join("\n");

test("words keep tesseract's own confidences; lines are their words; paragraphs are separated by a blank line", (t) => {
  const parsed = parseTesseractTsv(TSV);
  t.deepEqual(
    parsed.lines.map((line) => line.text),
    ["HELLO GATEWAY", "Quick fox", "Second"],
  );
  t.deepEqual(
    parsed.lines[0]!.words.map((word) => word.confidence),
    [95.269058, 91.5],
  );
  t.is(parsed.lines[0]!.confidence, (95.269058 + 91.5) / 2);
  t.is(parsed.lines[1]!.confidence, 70);
  t.deepEqual(parsed.lines[0]!.words[0]!.box, { left: 47, top: 57, width: 223, height: 54 });
  t.is(parsed.text, "HELLO GATEWAY\nQuick fox\n\nSecond");
});

test("output without any word (a blank picture) is empty", (t) => {
  const parsed = parseTesseractTsv([HEADER, row(1, 1, 0, 0, 0, 0, 0, 0, 10, 10, -1, "")].join("\n"));
  t.deepEqual(parsed, { lines: [], text: "" });
});

test("Windows line endings are read too", (t) => {
  const parsed = parseTesseractTsv([HEADER, row(5, 1, 1, 1, 1, 1, 0, 0, 5, 5, 88, "word")].join("\r\n"));
  t.is(parsed.text, "word");
});
