// `${NAME}` in any string of the config is replaced by the environment variable NAME.
// An unset variable becomes "" so the embedded defaults load on a machine without vendor keys;
// env-references.ts finds those, so the server warns and `gw doctor` fails instead of an
// upstream silently getting no key.
const reference = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

export function interpolateEnv<T>(value: T, env: NodeJS.ProcessEnv = process.env): T {
  if (typeof value === "string") {
    return value.replace(reference, (_match, name: string) => (Object.hasOwn(env, name) ? (env[name] ?? "") : "")) as T;
  }
  if (Array.isArray(value)) return value.map((item) => interpolateEnv(item, env)) as T;
  if (value && typeof value === "object") {
    // Defined, not assigned: a key `__proto__` in the file stays a key (which validation judges).
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, interpolateEnv(item, env)])) as T;
  }
  return value;
}

export function referencesEnv(value: string): boolean {
  reference.lastIndex = 0;
  return reference.test(value);
}

/** The variable names a string refers to, in order. */
export function envReferenceNames(value: string): string[] {
  return Array.from(value.matchAll(reference), (match) => match[1]!);
}
