// POST /v1/audio/speech (and /v1/audio/synthesize) without HTTP: pick the allowlisted model,
// check the request against its catalog entry (character cap, format, speed range, a voice of
// its provider: 400 with the limit or the voices, nothing billed), reserve the price (402
// before any upstream call), synthesize with the upstream retries of chat, convert with ffmpeg
// when the vendor answered in another format, measure the produced audio with ffprobe, keep it
// in the caller's library like a picture (a full storage still returns it, without an asset id)
// and settle one usage row.
import type { SpeechModelEntry } from "../../config/audio-catalog-schema.js";
import { convertAudio, measureAudio, SPEECH_MEDIA_TYPES } from "../../media/audio-convert.js";
import type { SpeechAudio, SpeechFormat } from "../../providers/audio-types.js";
import { usageEntry } from "../billing/usage-entry.js";
import { InvalidRequestError, ProviderNotConfiguredError } from "../errors.js";
import type { ServiceContext } from "../service-context.js";
import { callToolProvider, releasingOnError, requireCredits, type ToolCallContext } from "../upstream-calls/tool-provider-call.js";
import { withAudioEngine } from "./audio-engine-errors.js";
import { type AudioModelsView, chooseAudioModel } from "./audio-models.js";
import { characterCount, speechCredits } from "./audio-price.js";
import { checkSpeed, type SpeechBody } from "./speech-request.js";
import { speechModelReady, voicesOf } from "./voice-catalog.js";

export interface SpeechOutcome {
  audio: Buffer;
  format: SpeechFormat;
  contentType: string;
  model: string;
  voice: string;
  characters: number;
  durationMs: number;
  assetId?: string;
  /** Set when the audio could not be kept in the library (X-Service-Asset-Warning). */
  assetWarning?: string;
  upstreamRequestId?: string;
}

const VOICES_SHOWN = 12;

export class SpeechService {
  constructor(private readonly shared: ServiceContext) {}

  async synthesize(body: SpeechBody, context: ToolCallContext): Promise<SpeechOutcome> {
    const view = this.view();
    const model = chooseAudioModel(view, "speech", body.model, context);
    const characters = characterCount(body.input);
    const { maxCharacters, formats, speed: speedRange } = model.constraints;
    if (characters > maxCharacters) {
      throw new InvalidRequestError(`\`input\` is ${characters} characters; ${model.id} takes at most ${maxCharacters}.`, {
        param: "input",
        code: "input_too_long",
      });
    }
    if (!formats.includes(body.format)) {
      throw new InvalidRequestError(`${model.id} does not answer in ${body.format}; it answers ${formats.join(", ")}.`, { param: "format" });
    }
    const speed = body.speed === undefined ? 1 : checkSpeed(body.speed, speedRange, model.id);
    if (!(await speechModelReady(view, model))) {
      throw new ProviderNotConfiguredError(
        `The speech model \`${model.id}\` cannot speak on this machine: its engine is not installed (gw doctor says what is missing).`,
      );
    }
    const voice = await this.checkVoice(view, model, body.voice, context.signal);
    const credits = speechCredits(model, characters);
    await requireCredits(this.shared.ledger, context, credits);
    const lineage = await this.shared.library.lineage(context.caller.agent.id, { projectId: body.project_id });

    const { result, reservation } = await callToolProvider(this.shared, model, context, {
      estimate: credits,
      capability: (provider) => provider.speech,
      run: (speech): Promise<SpeechAudio> =>
        withAudioEngine(
          model.provider,
          () => speech.synthesize({ model: model.model, input: body.input, voice, speed, format: body.format }, { signal: context.signal }),
          this.shared.warn,
        ),
      cut: { endpoint: "audio.speech", units: { characters } },
    });
    // Converted and measured before billing: audio that cannot be read is the vendor's fault.
    const { audio, durationMs } = await releasingOnError(this.shared.ledger, reservation, () =>
      withAudioEngine(
        model.provider,
        async () => {
          const produced = result.format === body.format ? result.bytes : await convertAudio(result, body.format, { signal: context.signal });
          const sampleRate = body.format === "pcm" && result.format === "pcm" ? result.sampleRate : undefined;
          const measured = await measureAudio(produced, body.format, sampleRate);
          return { audio: produced, durationMs: measured.durationMs };
        },
        this.shared.warn,
      ),
    );
    await this.shared.ledger.settle(
      reservation,
      usageEntry(context, {
        endpoint: "audio.speech",
        model: model.id,
        provider: model.provider,
        units: { characters, seconds: Math.round(durationMs) / 1000 },
        credits,
      }),
    );

    const outcome: SpeechOutcome = {
      audio,
      format: body.format,
      contentType: SPEECH_MEDIA_TYPES[body.format],
      model: model.id,
      voice,
      characters,
      durationMs,
    };
    if (result.upstreamRequestId) outcome.upstreamRequestId = result.upstreamRequestId;
    const extension = body.format === "opus" ? "ogg" : body.format;
    const kept = await this.shared.library.keep(
      context,
      { filename: `speech-${context.requestId}.${extension}`, contentType: SPEECH_MEDIA_TYPES[body.format], bytes: audio },
      { ...lineage, model: model.id, prompt: body.input },
    );
    if ("assetId" in kept) outcome.assetId = kept.assetId;
    else outcome.assetWarning = kept.warning;
    return outcome;
  }

  /** The voice asked for (or the model's default) when the model's provider speaks it; else 400 invalid_voice naming some that it does. */
  private async checkVoice(view: AudioModelsView, model: SpeechModelEntry, requested: string | undefined, signal: AbortSignal): Promise<string> {
    const voice = requested ?? model.constraints.defaultVoice;
    const voices = await voicesOf(view, model, signal);
    if (voices.some((entry) => entry.id === voice)) return voice;
    const shown = voices.slice(0, VOICES_SHOWN).map((entry) => entry.id);
    const more = voices.length > shown.length ? `, and ${voices.length - shown.length} more` : "";
    throw new InvalidRequestError(
      `\`${voice}\` is not a voice of ${model.id} (provider ${model.provider}); it speaks ${shown.join(", ") || "no voice right now"}${more}. GET /v1/audio/voices?model=${model.id} lists them.`,
      { param: "voice", code: "invalid_voice", provider: model.provider },
    );
  }

  private view(): AudioModelsView {
    return { config: this.shared.config(), providers: this.shared.providers() };
  }
}
