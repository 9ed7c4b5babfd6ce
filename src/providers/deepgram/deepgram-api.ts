// The parts of Deepgram's bodies gw reads (https://developers.deepgram.com/reference), as lenient schemas: every
// field may be missing or of another type, and reads as absent then. The pre-recorded answer is
// read by convert-from-deepgram-transcript.ts.
import { z } from "zod";
import { presentText } from "../upstream-schema.js";

/** Where Deepgram's API is: the origin, every path under /v1. */
export const DEEPGRAM_BASE_URL = "https://api.deepgram.com";

/**
 * An error body (https://developers.deepgram.com/reference/errors): the older {err_code, err_msg, request_id} or the
 * newer {category, message, details, request_id}.
 */
export const DeepgramErrorBody = z.object({
  err_code: presentText,
  err_msg: presentText,
  category: presentText,
  message: presentText,
  details: presentText,
});
