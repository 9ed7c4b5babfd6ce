// The tool-model catalog in the config (docs/decisions.md §6): per tool (image, speech,
// transcription, video, search) the models it offers, each list in its own schema file with its
// built-in entries as the default; a config that lists one of them replaces that list as a whole.
import { z } from "zod";
import { speechModelListSchema, transcriptionModelListSchema } from "./audio-catalog-schema.js";
import { DEFAULT_SPEECH_MODEL_INPUTS, DEFAULT_TRANSCRIPTION_MODEL_INPUTS } from "./default-audio-models.js";
import { DEFAULT_IMAGE_MODEL_INPUTS } from "./default-image-models.js";
import { DEFAULT_VIDEO_MODEL_INPUTS } from "./default-video-models.js";
import { type ImageModelEntry, imageModelListSchema } from "./image-catalog-schema.js";
import { DEFAULT_SEARCH_MODEL_INPUTS, searchModelListSchema } from "./search-catalog-schema.js";
import { videoModelListSchema } from "./video-catalog-schema.js";

export const DEFAULT_IMAGE_MODELS: readonly ImageModelEntry[] = imageModelListSchema.parse(DEFAULT_IMAGE_MODEL_INPUTS);

export const catalogSchema = z
  .object({
    image: imageModelListSchema.default(() => imageModelListSchema.parse(DEFAULT_IMAGE_MODEL_INPUTS)),
    speech: speechModelListSchema.default(() => speechModelListSchema.parse(DEFAULT_SPEECH_MODEL_INPUTS)),
    transcription: transcriptionModelListSchema.default(() => transcriptionModelListSchema.parse(DEFAULT_TRANSCRIPTION_MODEL_INPUTS)),
    video: videoModelListSchema.default(() => videoModelListSchema.parse(DEFAULT_VIDEO_MODEL_INPUTS)),
    search: searchModelListSchema.default(() => searchModelListSchema.parse(DEFAULT_SEARCH_MODEL_INPUTS)),
  })
  .strict();

export type CatalogConfig = z.output<typeof catalogSchema>;
