// What every tool catalog's entries share (image, speech, transcription, video, search): who serves
// the model and how it is named, and a list in which each id appears once.
import { z } from "zod";

/**
 * The fields every entry starts with. `idMessage` is the error a malformed id gets ("a video
 * model id is <provider>/<model>"); `freeTier` whether free plans reach a model that does not say.
 */
export function catalogEntryFields(idMessage: string, freeTier: boolean) {
  return {
    /** Public id, `<provider name>/<vendor model>` (`openai/whisper-1`, `brave/web`). */
    id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]*\/\S+$/, idMessage),
    /** The provider's name in `providers`. */
    provider: z.string().min(1),
    /** The vendor's model id (or mode, for search), as sent upstream. */
    model: z.string().min(1),
    name: z.string().min(1),
    /** What the model is and is not good at, shown in the public catalog. */
    description: z.string().optional(),
    /** Free plans reach it. */
    freeTier: z.boolean().default(freeTier),
  };
}

/** A list of `schema` entries in which each id appears once (`the video model "x" is listed twice`). */
export function uniqueIds<Schema extends z.ZodType<{ id: string }>>(schema: Schema, kind: string) {
  return z.array(schema).superRefine((models, context) => {
    const seen = new Set<string>();
    models.forEach((model, index) => {
      if (seen.has(model.id)) context.addIssue({ code: "custom", path: [index, "id"], message: `the ${kind} model "${model.id}" is listed twice` });
      seen.add(model.id);
    });
  });
}
