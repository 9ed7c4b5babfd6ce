// POST /v1/vision/ocr (earlier form) without HTTP: pick the allowlisted OCR model (`tools.ocr`),
// make sure its engine is here, read the picture (SSRF-safe for URLs) and run the local tesseract
// on it. Only `<local provider>/tesseract` exists today; it needs a configured provider of type
// `local` and the tesseract binary, else 503 provider_not_configured; a tesseract too slow to
// answer its version check is installed, not missing: 503 engine_busy, asked again next time. The
// run is free: one usage row with 0 credits, written without a credit check.
//
// Result: `blocks` holds every recognised line (type "line") in reading order, then every word
// (type "word") in reading order; `confidence` is tesseract's own score scaled to 0..1 (a line's
// is the mean of its words'); `fullText` is the lines joined by newlines, with a blank line
// between paragraphs.
import type { Config } from "../../config/resolved-config.js";
import { type EngineLookup, lookupTesseract, slowEngineMessage } from "../../media/engines.js";
import { loadSharp } from "../../media/sharp-loader.js";
import { OcrEngineError, type OcrText, recognizeText } from "../../media/tesseract-ocr.js";
import { usageEntry } from "../billing/usage-entry.js";
import { EngineBusyError, ProviderNotConfiguredError, UpstreamUnavailableError } from "../errors.js";
import { MAX_PICTURE_PIXELS } from "../media/picture-input.js";
import type { ServiceContext } from "../service-context.js";
import type { VisionCallContext } from "./describe-service.js";
import { chooseToolModel } from "./tool-model.js";
import { type OcrBody, readSourcePicture } from "./vision-request.js";

export interface OcrBlock {
  text: string;
  /** 0 to 1. */
  confidence: number;
  type: "line" | "word";
}

export interface OcrResult {
  model: string;
  blocks: OcrBlock[];
  fullText: string;
}

/** The part of the service context OCR reads (it runs on this machine, with no provider), and how its engine is found. */
export type OcrContext = Pick<ServiceContext, "config" | "ledger" | "fetchUrl"> & {
  /** How the tesseract binary is looked up (default: lookupTesseract on PATH). */
  lookupEngine?: (env: NodeJS.ProcessEnv) => Promise<EngineLookup>;
};

const ENGINE_MODEL = "tesseract";

export class OcrService {
  /**
   * The binary found for the PATH it was looked up on. A miss is not kept, so an install counts at
   * once, and neither is a slow answer: the next call asks again.
   */
  private engine: { pathVariable: string | undefined; found: Promise<EngineLookup> } | undefined;

  constructor(private readonly shared: OcrContext) {}

  async recognize(body: OcrBody, context: VisionCallContext): Promise<OcrResult> {
    const config = this.shared.config();
    const model = chooseToolModel(config, "ocr", body.model);
    const provider = this.checkProvider(config, model);
    const binary = await this.tesseract(model, provider);
    const input = await readSourcePicture(body.picture, this.shared.fetchUrl, context.signal);
    // Upright, first frame, transparency laid on white (black text on a transparent background
    // would otherwise read as black on black), PNG: a format every tesseract build reads.
    const sharp = await loadSharp();
    const png = await sharp(input.bytes, { failOn: "error", limitInputPixels: MAX_PICTURE_PIXELS })
      .rotate()
      .flatten({ background: "#ffffff" })
      .png({ compressionLevel: 1 })
      .toBuffer();

    let recognised: OcrText;
    try {
      recognised = await recognizeText(png, { binary, signal: context.signal });
    } catch (error) {
      throw this.engineError(error, model, provider);
    }

    const words = recognised.lines.flatMap((line) => line.words);
    await this.shared.ledger.record(
      usageEntry(context, {
        endpoint: context.endpoint,
        model,
        provider,
        units: { images: 1, megapixels: Math.round((input.width * input.height) / 1000) / 1000, words: words.length },
        credits: 0,
      }),
    );
    return {
      model,
      blocks: [
        ...recognised.lines.map((line): OcrBlock => ({ text: line.text, confidence: unitScore(line.confidence), type: "line" })),
        ...words.map((word): OcrBlock => ({ text: word.text, confidence: unitScore(word.confidence), type: "word" })),
      ],
      fullText: recognised.text,
    };
  }

  /** The model's provider must be configured with type `local`, and the model must be the engine we run. */
  private checkProvider(config: Config, model: string): string {
    const slash = model.indexOf("/");
    const provider = slash === -1 ? model : model.slice(0, slash);
    const engine = slash === -1 ? "" : model.slice(slash + 1);
    if (config.providers[provider]?.type !== "local") {
      throw new ProviderNotConfiguredError(`The OCR model \`${model}\` needs a provider \`${provider}\` of type "local", which is not configured.`);
    }
    if (engine !== ENGINE_MODEL) {
      throw new ProviderNotConfiguredError(
        `The OCR model \`${model}\` is not an engine this gateway runs; the local OCR engine is \`${provider}/${ENGINE_MODEL}\`.`,
      );
    }
    return provider;
  }

  private async tesseract(model: string, provider: string): Promise<string> {
    const pathVariable = process.env.PATH;
    if (!this.engine || this.engine.pathVariable !== pathVariable) {
      const lookup = this.shared.lookupEngine ?? ((env: NodeJS.ProcessEnv) => lookupTesseract(env));
      this.engine = { pathVariable, found: lookup(process.env) };
    }
    const current = this.engine;
    const lookup = await current.found;
    if (lookup.status === "found") return lookup.engine.path;
    if (this.engine === current) this.engine = undefined;
    if (lookup.status === "slow") throw new EngineBusyError(`OCR cannot run right now: ${slowEngineMessage("tesseract", lookup.timeoutMs)}.`, { provider });
    throw missingEngine(model);
  }

  private engineError(error: unknown, model: string, provider: string): unknown {
    if (!(error instanceof OcrEngineError)) return error;
    if (error.reason === "missing") {
      this.engine = undefined;
      return missingEngine(model);
    }
    if (error.reason === "timeout") return new UpstreamUnavailableError(`OCR failed: ${error.message}.`, { status: 504, code: "ocr_timeout", provider });
    return new UpstreamUnavailableError(`OCR failed: ${error.message}.`, { status: 502, code: "ocr_failed", provider });
  }
}

function missingEngine(model: string): ProviderNotConfiguredError {
  return new ProviderNotConfiguredError(
    `The OCR model \`${model}\` needs the tesseract binary, which is not installed on this machine (install tesseract-ocr and its English data).`,
  );
}

/** Tesseract's 0-100 score as 0-1, four decimals. */
function unitScore(confidence: number): number {
  return Math.round(Math.min(100, Math.max(0, confidence)) * 100) / 10000;
}
