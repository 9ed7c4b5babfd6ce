// GET /health: liveness for process supervisors (no key needed, reveals nothing).
// GET /ready: readiness (gateway/readiness.ts): 200 with each check's state, or 503 naming the
// failing checks. No key needed; the causes, which name paths, go to the log only, once when a
// check starts failing and once when it recovers, however often a probe polls.
import type { H3 } from "h3";
import { NotReadyError } from "../../gateway/errors.js";
import type { Gateway } from "../../gateway/gateway.js";
import { checkReadiness, type ReadinessCheck, type ReadinessTargets, readinessChecks } from "../../gateway/readiness.js";
import type { ServerLogger } from "../server-logger.js";

export const READY_PATH = "/ready";

export function registerHealth(app: H3, gateway: Gateway, logger: ServerLogger): void {
  app.get("/health", () => ({ status: "ok" }));
  const failing = new Set<ReadinessCheck>();
  app.get(READY_PATH, async () => {
    const targets: ReadinessTargets = {
      config: () => gateway.config,
      state:
        gateway.state.driver === "embedded"
          ? { driver: "embedded", metadataFile: gateway.paths.metadata, usageDir: gateway.paths.usageDir }
          : { driver: "redis", ping: () => gateway.state.ping() },
      blobs: gateway.storage.blobs,
    };
    const result = await checkReadiness(targets);
    for (const name of readinessChecks(targets)) {
      const failed = result.checks[name] === "failed";
      if (failed && !failing.has(name)) logger.warn(`ready check ${name} failed: ${result.causes[name]}`);
      if (!failed && failing.has(name)) logger.info(`ready check ${name} passes again`);
      if (failed) failing.add(name);
      else failing.delete(name);
    }
    if (!result.ready) throw new NotReadyError(readinessChecks(targets).filter((name) => failing.has(name)));
    return { status: "ready", checks: result.checks };
  });
}
