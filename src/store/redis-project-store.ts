// Projects in Redis, for several gw instances serving one agent's library: one hash per agent,
// project id -> the same JSON record the file store keeps, plus a `default` field naming the
// default project. Creating the default is one script (check, then write both fields), so two
// instances that need it at once agree on one.
import type { Redis } from "ioredis";
import { DEFAULT_PROJECT_NAME, isProjectId, isProjectRecord, newProjectRecord, type ProjectRecord, type ProjectRecords } from "./project-records.js";
import { StoreError } from "./store-error.js";

const DEFAULT_FIELD = "default";

/** KEYS[1] the agent's hash; ARGV the new default's id and record. Returns the default's id. */
const ENSURE_DEFAULT = `
local current = redis.call('HGET', KEYS[1], '${DEFAULT_FIELD}')
if current then return current end
redis.call('HSET', KEYS[1], '${DEFAULT_FIELD}', ARGV[1], ARGV[1], ARGV[2])
return ARGV[1]
`;

type ProjectsRedis = Redis & { gwEnsureDefaultProject(key: string, id: string, record: string): Promise<string> };

export class RedisProjectStore implements ProjectRecords {
  private readonly redis: ProjectsRedis;

  constructor(
    redis: Redis,
    /** Prepended to every key, so several deployments (or tests) can share one Redis. */
    private readonly prefix = "gw:",
    private readonly now: () => number = Date.now,
  ) {
    if (!("gwEnsureDefaultProject" in redis)) redis.defineCommand("gwEnsureDefaultProject", { numberOfKeys: 1, lua: ENSURE_DEFAULT });
    this.redis = redis as ProjectsRedis;
  }

  async list(agentId: string): Promise<ProjectRecord[]> {
    const fields = await this.redis.hgetall(this.keyOf(agentId));
    if (fields[DEFAULT_FIELD] === undefined) {
      await this.ensureDefault(agentId);
      return this.list(agentId);
    }
    const projects = Object.entries(fields)
      .filter(([field]) => field !== DEFAULT_FIELD)
      .map(([field, text]) => parseRecord(field, text, agentId));
    // ULIDs sort by creation; the default comes first whenever it was made.
    return projects.sort((a, b) => Number(b.isDefault) - Number(a.isDefault) || a.project_id.localeCompare(b.project_id));
  }

  async defaultProject(agentId: string): Promise<ProjectRecord> {
    const projects = await this.list(agentId);
    const project = projects[0];
    if (!project?.isDefault) throw new StoreError(`the projects of agent ${agentId} in Redis have no default project record`);
    return project;
  }

  async find(agentId: string, projectId: string): Promise<ProjectRecord | undefined> {
    if (!isProjectId(projectId)) return undefined;
    const text = await this.redis.hget(this.keyOf(agentId), projectId);
    return text === null ? undefined : parseRecord(projectId, text, agentId);
  }

  async create(agentId: string, name: string): Promise<ProjectRecord> {
    await this.ensureDefault(agentId);
    const project = newProjectRecord(name, false, this.now());
    await this.redis.hset(this.keyOf(agentId), project.project_id, JSON.stringify(project));
    return project;
  }

  async importProjects(agentId: string, projects: readonly ProjectRecord[]): Promise<void> {
    if (projects.length === 0) return;
    const fields: string[] = [];
    for (const project of projects) fields.push(project.project_id, JSON.stringify(project));
    const imported = projects.find((project) => project.isDefault);
    if (imported) {
      // The default it replaces (another record) goes, so the agent keeps one default.
      const current = await this.redis.hget(this.keyOf(agentId), DEFAULT_FIELD);
      const transaction = this.redis.multi();
      if (current !== null && current !== imported.project_id) transaction.hdel(this.keyOf(agentId), current);
      transaction.hset(this.keyOf(agentId), ...fields, DEFAULT_FIELD, imported.project_id);
      const replies = await transaction.exec();
      for (const [error] of replies ?? []) if (error) throw error;
      return;
    }
    await this.ensureDefault(agentId);
    await this.redis.hset(this.keyOf(agentId), ...fields);
  }

  private async ensureDefault(agentId: string): Promise<void> {
    const project = newProjectRecord(DEFAULT_PROJECT_NAME, true, this.now());
    await this.redis.gwEnsureDefaultProject(this.keyOf(agentId), project.project_id, JSON.stringify(project));
  }

  private keyOf(agentId: string): string {
    return `${this.prefix}{a:${agentId}}:projects`;
  }
}

function parseRecord(field: string, text: string, agentId: string): ProjectRecord {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (!isProjectRecord(value) || value.project_id !== field) throw new StoreError(`project ${field} of agent ${agentId} in Redis is not a gw project record`);
  return value;
}
