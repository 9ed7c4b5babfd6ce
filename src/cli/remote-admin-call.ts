// The admin API calls of a provisioning command pointed at a running gateway (remote-admin.ts has
// the flags): the client for --url / GW_ADMIN_URL, and its failures worded for the command line.
import { AdminClient } from "../client/admin-client.js";
import { GwApiError } from "../client/gw-api-error.js";
import { CliError, UsageError } from "./cli-error.js";

export interface RemoteAdminFlags {
  url?: string;
  "admin-token"?: string;
}

/** The admin API client when the command is pointed at a gateway, else undefined (the local home is used). */
export function remoteAdmin(flags: RemoteAdminFlags, env: NodeJS.ProcessEnv = process.env): AdminClient | undefined {
  const url = flags.url ?? env.GW_ADMIN_URL;
  if (url === undefined || url === "") {
    if (flags["admin-token"] !== undefined) throw new UsageError("--admin-token goes with --url (the gateway whose admin API to call)");
    return undefined;
  }
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) throw new UsageError(`--url "${url}" is not an http(s) URL`);
  const token = flags["admin-token"] ?? env.GW_ADMIN_TOKEN;
  if (!token) throw new UsageError("--url needs an admin token: pass --admin-token or set GW_ADMIN_TOKEN (`gw admin token create` on the gateway's machine)");
  return new AdminClient({ baseUrl: url, token, plainGets: true });
}

/** An admin call whose failure is printed as the gateway's own message, exit 1. */
export async function remotely<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof GwApiError) throw new CliError(error.status === 0 ? error.message : `the gateway refused: ${error.message} (HTTP ${error.status})`);
    throw error;
  }
}
