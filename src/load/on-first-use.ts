// A module loaded the first time it is used rather than when its importer loads: for what a chat
// server may never need (multipart parsing, picture headers, pretty logs, the admin and media
// routes), whose import would cost start-up time and memory in every process (docs/decisions.md
// §28). `onFirstUse` requires a CommonJS package inside a synchronous call; `onFirstLoad` imports
// an ES module. A leaf: imports nothing from gw.
import { createRequire } from "node:module";

const requireFromHere = createRequire(import.meta.url);

/** `load()` requires `specifier` on its first call and returns the same module ever after. */
export function onFirstUse<T>(specifier: string): () => T {
  let loaded: T | undefined;
  return () => {
    loaded ??= requireFromHere(specifier) as T;
    return loaded;
  };
}

/**
 * `load()` starts `importer` on its first call and returns the same promise ever after: for an
 * ES module (and what is built from it) that a process may never need. A failed load is tried
 * again by the next call rather than failing every call after it.
 */
export function onFirstLoad<T>(importer: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () => {
    loading ??= importer().catch((error: unknown) => {
      loading = undefined;
      throw error;
    });
    return loading;
  };
}
