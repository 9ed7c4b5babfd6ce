// Which environment variables the config reads through `${NAME}`, where, and whether they are
// set. An unset one interpolates to "" (so the embedded defaults load without vendor keys), which
// silently sends an upstream no key: the server warns about it and `gw doctor` fails on it.
// Only whether a variable is set is kept here, never its value.
import { formatJsonPath } from "./config-error.js";
import { envReferenceNames } from "./interpolate-env.js";

export interface EnvVariableUse {
  name: string;
  /** JSON paths of the config strings that use it, e.g. `providers.openai.apiKey`. */
  paths: string[];
  /** False when the variable is missing or empty: every string using it lost that part. */
  set: boolean;
}

/** Every variable the raw (not yet interpolated) config refers to, in order of first use. */
export function envVariableUses(raw: unknown, env: NodeJS.ProcessEnv = process.env): EnvVariableUse[] {
  const uses = new Map<string, EnvVariableUse>();
  visitStrings(raw, [], (text, path) => {
    for (const name of envReferenceNames(text)) {
      const use = uses.get(name) ?? { name, paths: [], set: Object.hasOwn(env, name) && Boolean(env[name]) };
      const where = formatJsonPath(path);
      if (!use.paths.includes(where)) use.paths.push(where);
      uses.set(name, use);
    }
  });
  return [...uses.values()];
}

export function unsetEnvVariables(uses: readonly EnvVariableUse[]): EnvVariableUse[] {
  return uses.filter((use) => !use.set);
}

/** One line naming the variable and where it is used; the server's warning and doctor's detail. */
export function describeUnsetVariable(use: EnvVariableUse): string {
  const keyless = use.paths.some((path) => path.endsWith(".apiKey")) ? "; a provider without its key sends the upstream none" : "";
  return `${use.name} is not set (or is empty): \${${use.name}} in ${use.paths.join(", ")} becomes ""${keyless}`;
}

function visitStrings(value: unknown, path: PropertyKey[], visit: (text: string, path: PropertyKey[]) => void): void {
  if (typeof value === "string") visit(value, path);
  else if (Array.isArray(value))
    value.forEach((item, index) => {
      visitStrings(item, [...path, index], visit);
    });
  else if (value && typeof value === "object") for (const [key, item] of Object.entries(value)) visitStrings(item, [...path, key], visit);
}
