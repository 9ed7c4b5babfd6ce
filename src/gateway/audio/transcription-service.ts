// POST /v1/audio/transcriptions without HTTP: pick the allowlisted model, refuse a response
// format its provider cannot produce (400 naming the provider, before anything is read or
// billed), read and probe the audio (not audio: 400; over the model's size: 413; longer than
// its cap: 400 — each naming the limit), reserve the price of the measured length (402 before
// any upstream call), transcribe with the upstream retries of chat, settle one usage row per
// answered call and render the format asked for.
import { needsSegments, type TranscriptionModelEntry } from "../../config/audio-catalog-schema.js";
import type { Transcript } from "../../providers/audio-types.js";
import { usageEntry } from "../billing/usage-entry.js";
import { InvalidRequestError, UpstreamUnavailableError } from "../errors.js";
import type { ServiceContext } from "../service-context.js";
import { callToolProvider, releasingOnError, requireCredits, type ToolCallContext } from "../upstream-calls/tool-provider-call.js";
import { readAudio } from "./audio-input.js";
import { type AudioModelsView, chooseAudioModel } from "./audio-models.js";
import { billedSeconds, transcriptionCredits } from "./audio-price.js";
import { type RenderedTranscript, renderTranscript } from "./transcript-render.js";
import { maxAudioUploadBytes, type TranscriptionBody } from "./transcription-request.js";

export interface TranscriptionOutcome {
  rendered: RenderedTranscript;
  /** The public model id. */
  model: string;
  /** The plain transcript, whatever the format. */
  text: string;
  /** The audio's measured length (X-Service-Audio-Duration-Ms). */
  durationMs: number;
  upstreamRequestId?: string;
}

export class TranscriptionService {
  constructor(private readonly shared: ServiceContext) {}

  async transcribe(body: TranscriptionBody, context: ToolCallContext): Promise<TranscriptionOutcome> {
    const model = chooseAudioModel(this.view(), "transcription", body.model, context);
    const format = body.response_format;
    if (!model.constraints.responseFormats.includes(format)) {
      throw new InvalidRequestError(
        `The provider \`${model.provider}\` cannot produce response_format ${format} with ${model.id}: ${needsSegments(format) ? "it gives no time-bounded segments; " : ""}it answers ${model.constraints.responseFormats.join(", ")}.`,
        { param: "response_format", provider: model.provider, code: "unsupported_response_format" },
      );
    }
    // The cheapest refusal first: not even one second can be paid for.
    await requireCredits(this.shared.ledger, context, transcriptionCredits(model, 1));

    const maxBytes = Math.min(model.constraints.maxBytes, maxAudioUploadBytes(this.shared.config()));
    const audio = await readAudio(body.source, { maxBytes, fetch: this.shared.fetchUrl, signal: context.signal });
    const seconds = audio.probed.durationSeconds;
    if (seconds > model.constraints.maxDurationSeconds) {
      throw new InvalidRequestError(
        `The audio is ${formatDuration(seconds)} long; ${model.id} takes at most ${formatDuration(model.constraints.maxDurationSeconds)}.`,
        { param: body.source.param, code: "audio_too_long" },
      );
    }

    const credits = transcriptionCredits(model, seconds);
    const segments = needsSegments(format);
    const { result, reservation } = await callToolProvider(this.shared, model, context, {
      estimate: credits,
      capability: (provider) => provider.transcription,
      run: (transcription): Promise<Transcript> =>
        transcription.transcribe(
          {
            model: model.model,
            audio: { bytes: audio.bytes, filename: audio.filename, mediaType: audio.probed.mediaType },
            ...(body.language !== undefined ? { language: body.language } : {}),
            segments,
          },
          { signal: context.signal },
        ),
      cut: { endpoint: "audio.transcriptions", units: { seconds: billedSeconds(seconds) } },
    });
    const rendered = await releasingOnError(this.shared.ledger, reservation, async () => {
      if (segments && result.segments === undefined && result.text.trim() !== "") throw noSegments(model);
      return renderTranscript(
        format,
        { ...result, segments: result.segments },
        {
          model: model.id,
          durationSeconds: seconds,
          ...(body.language !== undefined ? { languageHint: body.language } : {}),
        },
      );
    });
    await this.shared.ledger.settle(
      reservation,
      usageEntry(context, { endpoint: "audio.transcriptions", model: model.id, provider: model.provider, units: { seconds: billedSeconds(seconds) }, credits }),
    );
    const outcome: TranscriptionOutcome = { rendered, model: model.id, text: result.text.trim(), durationMs: Math.round(seconds * 1000) };
    if (result.upstreamRequestId) outcome.upstreamRequestId = result.upstreamRequestId;
    return outcome;
  }

  private view(): AudioModelsView {
    return { config: this.shared.config(), providers: this.shared.providers() };
  }
}

function noSegments(model: TranscriptionModelEntry): UpstreamUnavailableError {
  return new UpstreamUnavailableError(`The provider \`${model.provider}\` answered without the time-bounded segments ${model.id} should give.`, {
    provider: model.provider,
  });
}

/** `1 h 05 min`, `12 min 30 s`, `8.5 s`. */
export function formatDuration(seconds: number): string {
  if (seconds < 60) return `${Math.round(seconds * 10) / 10} s`;
  const whole = Math.round(seconds);
  const hours = Math.floor(whole / 3600);
  const minutes = Math.floor((whole % 3600) / 60);
  const rest = whole % 60;
  if (hours > 0) return `${hours} h ${String(minutes).padStart(2, "0")} min`;
  return rest > 0 ? `${minutes} min ${rest} s` : `${minutes} min`;
}
