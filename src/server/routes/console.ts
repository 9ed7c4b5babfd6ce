// /console: the web console (docs/decisions.md §27). Off — 404 as any unknown path — until an admin
// token exists, like /admin. Its pages, assets and sessions are loaded on the first console
// request: a server that is never asked for the console never pays for it at start.
import type { H3, H3Event } from "h3";
import type { Gateway } from "../../gateway/gateway.js";
import { onFirstLoad } from "../../load/on-first-use.js";
import { requireAdminOn } from "../admin/admin-access.js";
import { RecentRequests } from "../admin/recent-requests.js";
import type { ServerLogger } from "../server-logger.js";
import type { AdminEndpoint } from "./admin.js";

type ConsoleHandler = (event: H3Event) => Promise<unknown>;

export function registerConsole(app: H3, gateway: Gateway, logger: ServerLogger, admin: AdminEndpoint, recent = new RecentRequests()): void {
  const consoleHandler: () => Promise<ConsoleHandler> = onFirstLoad(async () =>
    (await import("../console/console-app.js")).consoleApp({ gateway, logger, health: admin.health, peerAddress: admin.peerAddress, recent }),
  );
  const serve = async (event: H3Event) => {
    await requireAdminOn(event, gateway);
    return (await consoleHandler())(event);
  };
  app.all("/console", serve);
  app.all("/console/**", serve);
}
