// What `gw serve` says before and while it starts: a home path that leads nowhere, and an address
// another program already listens on.
import { existsSync } from "node:fs";
import path from "node:path";

/** The home's parent folder when it does not exist (a mistyped --home), else undefined. */
export function missingHomeParent(home: string): string | undefined {
  const parent = path.dirname(path.resolve(home));
  return existsSync(parent) ? undefined : parent;
}

/** The listen error in words the operator can act on, or undefined for any other failure. */
export function listenFailure(error: unknown, configFile: string): string | undefined {
  const failure = error as NodeJS.ErrnoException & { address?: string; port?: number };
  if (failure?.code !== "EADDRINUSE") return undefined;
  const host = failure.address?.includes(":") ? `[${failure.address}]` : failure.address;
  const where = host !== undefined && failure.port !== undefined ? `${host}:${failure.port}` : "the address";
  return `${where} is already in use (another gw serve, or another program, listens there): pick another port with --port N (--port 0 takes a free one), or set server.port in ${configFile}`;
}
