// GET /v1/key: the calling key's own limits and spend.
import type { H3 } from "h3";
import { keyInfo } from "../../gateway/auth/key-info.js";
import type { Gateway } from "../../gateway/gateway.js";
import { admitCaller } from "../request-context.js";

export const KEY_PATH = "/v1/key";

export function registerKey(app: H3, gateway: Gateway): void {
  app.get(KEY_PATH, async (event) => {
    const { caller, plan } = await admitCaller(event, gateway);
    return keyInfo(gateway.ledger, caller, plan);
  });
}
