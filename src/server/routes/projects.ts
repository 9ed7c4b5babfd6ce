// GET /v1/projects (the caller's projects, default first) and POST /v1/projects {name} (docs/decisions.md §5).
// Bearer key and per-key rate limit; errors in the gateway envelope.
import type { H3 } from "h3";
import type { Gateway } from "../../gateway/gateway.js";
import { parseProjectCreate } from "../../gateway/projects/project-request.js";
import { readJsonObject } from "../read-json-body.js";
import { admitCaller } from "../request-context.js";

export const PROJECTS_PATH = "/v1/projects";

export function registerProjects(app: H3, gateway: Gateway): void {
  app.get(PROJECTS_PATH, async (event) => {
    const { caller } = await admitCaller(event, gateway);
    return { data: await gateway.projects.list(caller.agent.id) };
  });

  app.post(PROJECTS_PATH, async (event) => {
    const { caller } = await admitCaller(event, gateway);
    const { name } = parseProjectCreate(await readJsonObject(event, gateway.config.server.maxJsonBodyBytes));
    const project = await gateway.projects.create(caller.agent.id, name);
    event.res.status = 201;
    return project;
  });
}
