// GET /health: liveness for process supervisors (no key needed, reveals nothing).
import type { H3 } from "h3";

export function registerHealth(app: H3): void {
  app.get("/health", () => ({ status: "ok" }));
}
