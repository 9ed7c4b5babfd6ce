// The parts of Stability's v2beta bodies gw reads (https://platform.stability.ai/docs/api-reference), as lenient
// schemas: every field may be missing or of another type, and reads as absent then.
import { z } from "zod";
import { anyText, lenient, lenientList } from "../upstream-schema.js";

/** Where Stability's API is: the origin, every path under /v2beta. */
export const STABILITY_BASE_URL = "https://api.stability.ai";

/** An error body: {id, name, errors: ["field: what is wrong", ...]}. */
export const StabilityErrorBody = z.object({ id: anyText, name: anyText, errors: lenientList(z.string()) });

/** A JSON success (a proxy that asked for one): {image (base64), finish_reason, seed}. */
export const StabilityImageAnswer = z.object({ image: z.string(), finish_reason: anyText, seed: lenient(z.unknown()) });
