// SRT and WebVTT rendered from transcript segments, then read back by a real subtitle parser
// (media-captions, in strict mode: any syntax error throws): cue count, times, text, voices.
import test from "ava";
import * as mediaCaptions from "media-captions";
import { renderSrt, renderWebVtt, type SubtitleCue } from "../src/media/subtitles.js";

// media-captions' declaration files import each other without file extensions, which NodeNext
// resolution does not follow, so tsc sees no exports: a typed view of the two functions used.
interface ParsedCue {
  startTime: number;
  endTime: number;
  text: string;
}
type CueNode = { type: "text"; data: string } | { type: string; tagName: string; voice?: string; children: CueNode[] };
const captions = mediaCaptions as unknown as {
  parseText(text: string, options: { type: "srt" | "vtt"; strict: boolean }): Promise<{ cues: ParsedCue[]; errors: Array<{ message: string }> }>;
  tokenizeVTTCue(cue: ParsedCue): CueNode[];
};
const tokenizeVTTCue = (cue: ParsedCue) => captions.tokenizeVTTCue(cue);

async function parseSrt(text: string): Promise<ParsedCue[]> {
  const parsed = await captions.parseText(text, { type: "srt", strict: true });
  if (parsed.errors.length > 0) throw new Error(parsed.errors.map((error) => error.message).join("; "));
  return parsed.cues;
}

async function parseVtt(text: string): Promise<ParsedCue[]> {
  const parsed = await captions.parseText(text, { type: "vtt", strict: true });
  if (parsed.errors.length > 0) throw new Error(parsed.errors.map((error) => error.message).join("; "));
  return parsed.cues;
}

const segments: SubtitleCue[] = [
  { start: 0, end: 3.32, text: " The beach was busy." },
  { start: 3.32, end: 8.47, text: " People were swimming." },
];

test("SRT: the reference example, byte for byte", (t) => {
  t.is(renderSrt(segments), "1\n00:00:00,000 --> 00:00:03,320\nThe beach was busy.\n\n2\n00:00:03,320 --> 00:00:08,470\nPeople were swimming.\n\n");
});

test("WebVTT: the reference example, with the hours field", (t) => {
  t.is(renderWebVtt(segments), "WEBVTT\n\n00:00:00.000 --> 00:00:03.320\nThe beach was busy.\n\n00:00:03.320 --> 00:00:08.470\nPeople were swimming.\n\n");
});

test("both parse back to the same cues", async (t) => {
  for (const cues of [await parseSrt(renderSrt(segments)), await parseVtt(renderWebVtt(segments))]) {
    t.deepEqual(
      cues.map((cue) => [cue.startTime, cue.endTime, cue.text]),
      [
        [0, 3.32, "The beach was busy."],
        [3.32, 8.47, "People were swimming."],
      ],
    );
  }
});

test("times past an hour, rounded to the millisecond", async (t) => {
  const cues: SubtitleCue[] = [
    { start: 3725.4996, end: 3727.25, text: "over an hour" },
    { start: 7322.1234, end: 7323, text: "two hours in" },
  ];
  const srt = renderSrt(cues);
  t.true(srt.includes("01:02:05,500 --> 01:02:07,250"));
  t.true(renderWebVtt(cues).includes("01:02:05.500 --> 01:02:07.250"));
  const expected = [
    [3725.5, 3727.25],
    [7322.123, 7323],
  ];
  t.deepEqual(
    (await parseSrt(srt)).map((cue) => [cue.startTime, cue.endTime]),
    expected,
  );
  t.deepEqual(
    (await parseVtt(renderWebVtt(cues))).map((cue) => [cue.startTime, cue.endTime]),
    expected,
  );
});

test("hours past 99 take more digits (WebVTT allows two or more)", (t) => {
  const cues: SubtitleCue[] = [{ start: 360_000.1234, end: 360_001, text: "a hundred hours in" }];
  t.true(renderSrt(cues).includes("100:00:00,123 --> 100:00:01,000"));
  t.true(renderWebVtt(cues).includes("100:00:00.123 --> 100:00:01.000"));
});

test("a speaker is a WebVTT voice tag and an SRT prefix; speaker 0 is a real speaker", async (t) => {
  const cues: SubtitleCue[] = [
    { start: 0, end: 1, text: "Hello.", speaker: 0 },
    { start: 1, end: 2, text: "Hi there.\nHow are you?", speaker: 1 },
    { start: 2, end: 3, text: "No label." },
  ];
  const vtt = await parseVtt(renderWebVtt(cues));
  t.deepEqual(
    vtt.map((cue) => tokenizeVTTCue(cue)),
    [
      [{ tagName: "span", type: "v", voice: "Speaker 0", children: [{ type: "text", data: "Hello." }] }],
      [{ tagName: "span", type: "v", voice: "Speaker 1", children: [{ type: "text", data: "Hi there.\nHow are you?" }] }],
      [{ type: "text", data: "No label." }],
    ] as unknown,
  );
  const srt = await parseSrt(renderSrt(cues));
  t.deepEqual(
    srt.map((cue) => cue.text),
    ["Speaker 0: Hello.", "Speaker 1: Hi there.\nHow are you?", "No label."],
  );
});

test("overlapping and unsorted times are made monotonic: starts never go back, ends never precede starts", async (t) => {
  const cues: SubtitleCue[] = [
    { start: 5, end: 7, text: "first" },
    { start: 6, end: 6.5, text: "overlaps" },
    { start: 2, end: 3, text: "earlier than the one before" },
    { start: 9, end: 8, text: "ends before it starts" },
  ];
  for (const parsed of [await parseSrt(renderSrt(cues)), await parseVtt(renderWebVtt(cues))]) {
    t.deepEqual(
      parsed.map((cue) => [cue.startTime, cue.endTime]),
      [
        [5, 7],
        [6, 6.5],
        [6, 6.001],
        [9, 9.001],
      ],
    );
  }
});

test("text is trimmed, inner blank lines dropped, empty cues dropped, SRT numbers stay sequential", async (t) => {
  const cues: SubtitleCue[] = [
    { start: 0, end: 1, text: "   " },
    { start: 1, end: 2, text: "  one\r\n\r\n  two  " },
    { start: 2, end: 3, text: "" },
    { start: 3, end: 4, text: "three" },
  ];
  const srt = renderSrt(cues);
  t.true(srt.startsWith("1\n00:00:01,000 --> 00:00:02,000\none\ntwo\n\n2\n00:00:03,000"));
  t.deepEqual(
    (await parseSrt(srt)).map((cue) => cue.text),
    ["one\ntwo", "three"],
  );
  t.deepEqual(
    (await parseVtt(renderWebVtt(cues))).map((cue) => cue.text),
    ["one\ntwo", "three"],
  );
});

test("`-->` and markup in text cannot break WebVTT; SRT gets an arrow instead", async (t) => {
  const cues: SubtitleCue[] = [
    { start: 0, end: 1, text: "a --> b" },
    { start: 1, end: 2, text: "<b>not bold</b> & 00:00:05.000 --> 00:00:06.000" },
  ];
  const vtt = renderWebVtt(cues);
  t.false(vtt.split("\n").some((line) => line.includes("-->") && !/^\d\d:\d\d:\d\d\.\d{3} --> \d\d:\d\d:\d\d\.\d{3}$/.test(line)));
  const parsed = await parseVtt(vtt);
  t.is(parsed.length, 2);
  t.deepEqual(
    parsed.map((cue) => tokenizeVTTCue(cue)),
    [[{ type: "text", data: "a --> b" }], [{ type: "text", data: "<b>not bold</b> & 00:00:05.000 --> 00:00:06.000" }]] as unknown,
  );
  const srt = await parseSrt(renderSrt(cues));
  t.deepEqual(
    srt.map((cue) => cue.text),
    ["a → b", "<b>not bold</b> & 00:00:05.000 → 00:00:06.000"],
  );
});

test("bad numbers become 0 rather than NaN timestamps", async (t) => {
  const cues: SubtitleCue[] = [{ start: Number.NaN, end: -3, text: "odd times" }];
  const parsed = await parseVtt(renderWebVtt(cues));
  t.deepEqual([parsed[0]!.startTime, parsed[0]!.endTime], [0, 0.001]);
});

test("no cues: an empty SRT and a WebVTT header alone", async (t) => {
  t.is(renderSrt([]), "");
  t.is(renderWebVtt([]), "WEBVTT\n\n");
  t.is((await parseVtt(renderWebVtt([]))).length, 0);
});
