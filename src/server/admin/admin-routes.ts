// The admin API's routes, each behind the same guard (admin-access.ts, admin-audit.ts). A guard per
// route rather than one h3 middleware on /admin/**: a middleware runs for every request the server
// answers, chat completions included, and the chat path is measured in microseconds.
import type { H3, H3Event } from "h3";

export type AdminHandler = (event: H3Event) => unknown;

/** What the admin modules register their routes on. */
export interface AdminRoutes {
  get(route: string, handler: AdminHandler): void;
  post(route: string, handler: AdminHandler): void;
  put(route: string, handler: AdminHandler): void;
  patch(route: string, handler: AdminHandler): void;
  delete(route: string, handler: AdminHandler): void;
}

/** Routes on `app` whose handlers run after `guard` (which throws to refuse). */
export function guardedRoutes(app: H3, guard: (event: H3Event) => Promise<void>): AdminRoutes {
  const wrap =
    (handler: AdminHandler) =>
    async (event: H3Event): Promise<unknown> => {
      await guard(event);
      return handler(event);
    };
  return {
    get: (route, handler) => void app.get(route, wrap(handler)),
    post: (route, handler) => void app.post(route, wrap(handler)),
    put: (route, handler) => void app.put(route, wrap(handler)),
    patch: (route, handler) => void app.patch(route, wrap(handler)),
    delete: (route, handler) => void app.delete(route, wrap(handler)),
  };
}
