// POST /v1/projects body: `{name}`, a non-empty string of at most 100 characters (trimmed).
import { hasControlCharacter } from "../../text/control-characters.js";
import { InvalidRequestError } from "../errors.js";

/** A project as GET and POST /v1/projects answer it: the stored record (store/project-records.ts), sent as it is. */
export type { ProjectRecord as ProjectBody } from "../../store/project-records.js";

export const MAX_PROJECT_NAME_LENGTH = 100;

export function parseProjectCreate(body: Record<string, unknown>): { name: string } {
  const name = body.name;
  if (name === undefined || name === null) throw new InvalidRequestError("Missing required parameter: 'name'.", { param: "name" });
  if (typeof name !== "string") throw new InvalidRequestError("Invalid 'name': expected a string.", { param: "name" });
  const trimmed = name.trim();
  if (trimmed.length === 0) throw new InvalidRequestError("Invalid 'name': the name is empty.", { param: "name" });
  if (trimmed.length > MAX_PROJECT_NAME_LENGTH)
    throw new InvalidRequestError(`Invalid 'name': at most ${MAX_PROJECT_NAME_LENGTH} characters.`, { param: "name" });
  if (hasControlCharacter(trimmed)) throw new InvalidRequestError("Invalid 'name': control characters are not allowed.", { param: "name" });
  return { name: trimmed };
}
