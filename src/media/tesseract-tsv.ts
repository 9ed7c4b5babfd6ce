// Tesseract's TSV output (`tesseract IMAGE stdout tsv`) as words and lines. One row per layout
// element: level 1 page, 2 block, 3 paragraph, 4 line, 5 word. Only words carry text and a
// confidence (0-100, -1 on the structural rows), so a line's text and confidence are built here
// from its words. Rows that are not 12 tab-separated fields are skipped: the format has no escapes.

export interface OcrWord {
  text: string;
  /** As tesseract reports it: 0 to 100. */
  confidence: number;
  box: OcrBox;
}

export interface OcrLine {
  /** The line's words joined by single spaces. */
  text: string;
  /** Mean of its words' confidences, 0 to 100. */
  confidence: number;
  words: OcrWord[];
  /** Lines of the same block and paragraph share this key. */
  paragraph: string;
}

export interface OcrBox {
  left: number;
  top: number;
  width: number;
  height: number;
}

export interface OcrText {
  lines: OcrLine[];
  /** Lines joined by newlines, paragraphs separated by a blank line (tesseract's plain-text layout). */
  text: string;
}

const WORD_LEVEL = 5;
const FIELDS = 12;

export function parseTesseractTsv(tsv: string): OcrText {
  const lines: OcrLine[] = [];
  const byKey = new Map<string, OcrLine>();
  for (const row of tsv.split(/\r?\n/)) {
    const fields = row.split("\t");
    if (fields.length !== FIELDS) continue;
    const [level, page, block, paragraph, line, , left, top, width, height, confidence] = fields.slice(0, 11).map(Number);
    const text = fields[11]!.trim();
    // The header row and structural rows fail these checks; so does an empty word.
    if (level !== WORD_LEVEL || !text || !Number.isFinite(confidence) || confidence! < 0) continue;
    const paragraphKey = `${page}:${block}:${paragraph}`;
    const lineKey = `${paragraphKey}:${line}`;
    let entry = byKey.get(lineKey);
    if (!entry) {
      entry = { text: "", confidence: 0, words: [], paragraph: paragraphKey };
      byKey.set(lineKey, entry);
      lines.push(entry);
    }
    entry.words.push({ text, confidence: Math.min(100, confidence!), box: { left: left!, top: top!, width: width!, height: height! } });
  }
  for (const line of lines) {
    line.text = line.words.map((word) => word.text).join(" ");
    line.confidence = line.words.reduce((sum, word) => sum + word.confidence, 0) / line.words.length;
  }
  return { lines, text: joinLines(lines) };
}

function joinLines(lines: OcrLine[]): string {
  let text = "";
  lines.forEach((line, index) => {
    if (index > 0) text += line.paragraph === lines[index - 1]!.paragraph ? "\n" : "\n\n";
    text += line.text;
  });
  return text;
}
