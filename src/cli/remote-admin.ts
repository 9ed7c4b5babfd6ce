// Provisioning commands pointed at a running gateway elsewhere (docs/decisions.md §25): with
// --url (or GW_ADMIN_URL) they call its admin API with an admin token (--admin-token or
// GW_ADMIN_TOKEN) instead of opening a home, and the server makes the same change the local
// command would have made, with the same functions.
// The flags are here; what they do is in remote-admin-call.ts, which imports nothing from oclif so
// that the start-up fast path (fast-path.ts) can use it.
import { Flags } from "@oclif/core";

export { type RemoteAdminFlags, remoteAdmin, remotely } from "./remote-admin-call.js";

export const remoteAdminFlags = {
  url: Flags.string({
    description: "manage the gateway at this address through its admin API instead of this machine's home [default: $GW_ADMIN_URL]",
    helpGroup: "REMOTE",
  }),
  "admin-token": Flags.string({ description: "admin token for --url [default: $GW_ADMIN_TOKEN]", helpGroup: "REMOTE" }),
};
