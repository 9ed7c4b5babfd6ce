// The MCP audio tools through the official SDK's own client: audio_speak returns MCP audio
// content (real espeak-ng speech, checked with ffprobe) with the asset id in the structured
// result, billed like HTTP; audio_transcribe takes a URL, base64 or a library asset id and
// answers each format; refusals are tool errors carrying the HTTP code.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import test from "ava";
import { homePaths } from "../src/config/paths.js";
import { periodOf, UsageLog } from "../src/store/usage-log.js";
import { fakeAudio, probeAudio } from "./fakes/audio-files.js";
import { type FakeOpenAIAudio, startFakeOpenAIAudio } from "./fakes/openai-audio.js";
import { addKey, makeHome, startTestGateway, type TestGateway } from "./helpers/gateway-harness.js";

let gateway: TestGateway;
let openai: FakeOpenAIAudio;
let client: Client;

test.before(async () => {
  openai = await startFakeOpenAIAudio({ apiKey: "sk-mcp-audio" });
  const home = await makeHome((config) => {
    config.upstream = { retries: 0 };
    config.providers = { local: { type: "local" }, openai: { type: "openai", baseUrl: openai.url, apiKey: "sk-mcp-audio" } };
    config.tools.speech = { default: "local/espeak", allow: [] };
    config.tools.transcription = { default: "openai/whisper-1", allow: ["openai/gpt-4o-transcribe"] };
  });
  gateway = await startTestGateway(home);
  const key = await addKey(home, "mcp-listener", "pro");
  client = new Client({ name: "gw-audio-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
});

test.after.always(async () => {
  await client?.close();
  await gateway?.shutdown();
  await openai?.close();
});

async function call(name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

function rows(endpoint: string) {
  return UsageLog.readRows(homePaths(gateway.home).usageDir, periodOf(new Date())).filter((row) => row.endpoint === endpoint);
}

test.serial("audio_speak answers audio content with the asset id; audio_transcribe reads that asset back", async (t) => {
  const spoken = await call("audio_speak", { input: "Testing the MCP voice.", format: "wav", voice: "en-us" });
  t.falsy(spoken.isError, JSON.stringify(spoken.content));
  const audio = spoken.content.find((part) => part.type === "audio");
  t.is(audio?.type === "audio" ? audio.mimeType : undefined, "audio/wav");
  const bytes = Buffer.from(audio?.type === "audio" ? audio.data : "", "base64");
  const probed = await probeAudio(bytes);
  t.is(probed?.codec, "pcm_s16le");
  const structured = spoken.structuredContent as { asset_id: string; duration_ms: number; characters: number; model: string };
  t.regex(structured.asset_id, /^file_/);
  t.is(structured.model, "local/espeak");
  t.is(structured.characters, 22);
  t.true(Math.abs(probed!.durationSeconds * 1000 - structured.duration_ms) <= 50);
  t.is(rows("audio.speech").length, 1);

  const transcribed = await call("audio_transcribe", { audio: structured.asset_id, response_format: "verbose_json" });
  t.falsy(transcribed.isError, JSON.stringify(transcribed.content));
  const transcript = transcribed.structuredContent as { model: string; text: string; segments: Array<{ id: number; text: string }>; response_format: string };
  t.is(transcript.model, "openai/whisper-1");
  t.is(transcript.response_format, "verbose_json");
  t.deepEqual(
    transcript.segments.map((segment) => segment.text),
    ["The beach was busy.", "People were swimming."],
  );
  t.is(openai.requests.at(-1)?.file?.filename, "audio.wav");
  t.is(rows("audio.transcriptions").length, 1);
});

test.serial("audio_transcribe in srt: the subtitle text as content and in structured content", async (t) => {
  const mp3 = await fakeAudio({ codec: "mp3", durationSeconds: 3 });
  const result = await call("audio_transcribe", { audio: mp3.toString("base64"), response_format: "srt" });
  t.falsy(result.isError, JSON.stringify(result.content));
  const text = result.content.find((part) => part.type === "text");
  t.regex(text?.type === "text" ? text.text : "", /^1\n00:00:00,000 --> 00:00:01,5\d\d\nThe beach was busy\.\n\n2\n/);
  const structured = result.structuredContent as { subtitles: string; text: string };
  t.is(structured.subtitles, text?.type === "text" ? text.text : "");
  t.regex(structured.text, /The beach was busy\. People were swimming\./);
});

test.serial("refusals are tool errors with the HTTP code: a format the model cannot give, not audio, a foreign voice", async (t) => {
  const before = openai.requests.length;
  const cases: Array<[string, Record<string, unknown>, string, number]> = [
    [
      "audio_transcribe",
      { audio: (await fakeAudio({ codec: "mp3", durationSeconds: 1 })).toString("base64"), model: "openai/gpt-4o-transcribe", response_format: "vtt" },
      "unsupported_response_format",
      400,
    ],
    ["audio_transcribe", { audio: Buffer.from("just some text, not audio at all").toString("base64") }, "invalid_audio", 400],
    ["audio_transcribe", { audio: "file_01ARZ3NDEKTSV4RRFFQ69G5FAV" }, "asset_not_found", 404],
    ["audio_speak", { input: "hi", voice: "alloy" }, "invalid_voice", 400],
  ];
  for (const [tool, args, code, status] of cases) {
    const result = await call(tool, args);
    t.true(result.isError, `${tool} ${code}`);
    const text = result.content[0]?.type === "text" ? result.content[0].text : "{}";
    const envelope = JSON.parse(text) as { error: { code: string; status: number } };
    t.is(envelope.error.code, code);
    t.is(envelope.error.status, status);
  }
  t.is(openai.requests.length, before, "nothing sent upstream");
});
