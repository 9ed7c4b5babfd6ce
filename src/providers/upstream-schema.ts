// Reading upstream bodies with lenient zod schemas: only the fields gw uses, each one optional,
// and a field of the wrong type read as absent rather than failing the whole body (a vendor that
// adds, renames or nulls a field must not turn a readable error or answer into none).
import { z } from "zod";
import { parseJson } from "../json/json-values.js";

/** A field read leniently: absent, null or of another type, it is undefined. */
export function lenient<T extends z.ZodType>(schema: T) {
  return schema.optional().catch(undefined);
}

/** A string with something in it ("" and whitespace read as absent). */
export const presentText = lenient(z.string().refine((text) => text.trim() !== ""));

/** Any string, "" included. */
export const anyText = lenient(z.string());

/** A list whose items that do not fit the schema are dropped (the rest kept in order). */
export function lenientList<T extends z.ZodType>(item: T) {
  return lenient(
    z.array(z.unknown()).transform((items) =>
      items.flatMap((value) => {
        const read = item.safeParse(value);
        return read.success ? [read.data as z.output<T>] : [];
      }),
    ),
  );
}

/** A parsed value read with the schema; undefined when it does not fit. */
export function readAs<T extends z.ZodType>(schema: T, value: unknown): z.output<T> | undefined {
  const read = schema.safeParse(value);
  return read.success ? read.data : undefined;
}

/** An upstream body's text read with the schema; undefined when it is not JSON or does not fit. */
export function readBodyAs<T extends z.ZodType>(schema: T, text: string): z.output<T> | undefined {
  return readAs(schema, parseJson(text));
}

/** One problem of a FastAPI validation list (ElevenLabs, Brave, Tavily): {loc, msg, type}. */
export const ValidationProblem = z.object({ loc: lenient(z.unknown()), msg: anyText, type: anyText });

/** A FastAPI validation list, the items that are not objects dropped. */
export const ValidationList = lenientList(ValidationProblem);

/** FastAPI's location (`["body", "voice_settings", "speed"]`) without where it was (body, query, path, header). */
export function validationField(location: unknown): string | undefined {
  if (!Array.isArray(location)) return undefined;
  const names = location.map(String);
  if (["body", "query", "path", "header"].includes(names[0] ?? "")) names.shift();
  return names.length > 0 ? names.join(".") : undefined;
}
