// Provisioning commands pointed at a running gateway elsewhere (docs/decisions.md §25): with
// --url (or GW_ADMIN_URL) they call its admin API with an admin token (--admin-token or
// GW_ADMIN_TOKEN) instead of opening a home, and the server makes the same change the local
// command would have made, with the same functions.
import { Flags } from "@oclif/core";
import { AdminClient } from "../client/admin-client.js";
import { GwApiError } from "../client/gw-api-error.js";
import { CliError, UsageError } from "./cli-error.js";

export const remoteAdminFlags = {
  url: Flags.string({
    description: "manage the gateway at this address through its admin API instead of this machine's home [default: $GW_ADMIN_URL]",
    helpGroup: "REMOTE",
  }),
  "admin-token": Flags.string({ description: "admin token for --url [default: $GW_ADMIN_TOKEN]", helpGroup: "REMOTE" }),
};

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
  return new AdminClient({ baseUrl: url, token });
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
