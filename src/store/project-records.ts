// Projects: one small JSON document per agent, `<dir>/<agent id>.json`, holding that agent's
// projects (a handful, created by hand: the file grows with projects, never with requests).
// A change is a read-modify-write under the cross-process file lock, written atomically (temp
// file, fsync, rename). The server is the only writer, so each agent's document is read once and
// then answered from memory. Every agent has a default project, created the first time it is needed.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { monotonicFactory } from "ulid";
import { writeFileAtomic } from "./atomic-write.js";
import { withFileLock } from "./file-lock.js";
import { StoreError } from "./store-error.js";

export interface ProjectRecord {
  project_id: string;
  name: string;
  isDefault: boolean;
  createdAt: string;
}

interface ProjectsDocument {
  version: 1;
  projects: ProjectRecord[];
}

const AGENT_ID = /^[A-Za-z0-9_-]{1,64}$/;
const PROJECT_ID = /^proj_[0-9A-HJKMNP-TV-Z]{26}$/;
export const DEFAULT_PROJECT_NAME = "Default";
const nextUlid = monotonicFactory();

export function isProjectId(value: string): boolean {
  return PROJECT_ID.test(value);
}

/** An agent's projects, as the image library and the projects routes read and add them (this home's files, or Redis). */
export interface ProjectRecords {
  /** The agent's projects, default first, then in the order they were created; the default is created when missing. */
  list(agentId: string): Promise<ProjectRecord[]>;
  defaultProject(agentId: string): Promise<ProjectRecord>;
  /** The agent's own project with this id, or undefined (another agent's id reads as missing). */
  find(agentId: string, projectId: string): Promise<ProjectRecord | undefined>;
  create(agentId: string, name: string): Promise<ProjectRecord>;
  /**
   * Add or replace these records by id, as they are (`gw migrate`): running it again changes
   * nothing. An imported default replaces the agent's default, so there is still one.
   */
  importProjects(agentId: string, projects: readonly ProjectRecord[]): Promise<void>;
}

/** A new project's record; ids are ULIDs, so they sort in creation order. */
export function newProjectRecord(name: string, isDefault: boolean, now: number): ProjectRecord {
  return { project_id: `proj_${nextUlid(now)}`, name, isDefault, createdAt: new Date(now).toISOString() };
}

export function isProjectRecord(value: unknown): value is ProjectRecord {
  const project = value as Partial<ProjectRecord> | null;
  return (
    project !== null &&
    typeof project === "object" &&
    typeof project.project_id === "string" &&
    isProjectId(project.project_id) &&
    typeof project.name === "string" &&
    typeof project.isDefault === "boolean" &&
    typeof project.createdAt === "string"
  );
}

export class ProjectStore implements ProjectRecords {
  private readonly cache = new Map<string, ProjectRecord[]>();
  /** One change at a time per agent inside this process (the file lock covers other processes). */
  private readonly queues = new Map<string, Promise<unknown>>();

  constructor(
    readonly directory: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** The agent's projects, default first; the default is created when missing. */
  async list(agentId: string): Promise<ProjectRecord[]> {
    const projects = await this.load(agentId);
    if (projects.some((project) => project.isDefault)) return [...projects];
    await this.change(agentId, () => undefined);
    return [...(await this.load(agentId))];
  }

  async defaultProject(agentId: string): Promise<ProjectRecord> {
    return (await this.list(agentId)).find((project) => project.isDefault)!;
  }

  /** The agent's own project with this id, or undefined (another agent's id reads as missing). */
  async find(agentId: string, projectId: string): Promise<ProjectRecord | undefined> {
    if (!isProjectId(projectId)) return undefined;
    return (await this.load(agentId)).find((project) => project.project_id === projectId);
  }

  async create(agentId: string, name: string): Promise<ProjectRecord> {
    return this.change(agentId, (projects) => {
      const project = newProjectRecord(name, false, this.now());
      projects.push(project);
      return project;
    });
  }

  async importProjects(agentId: string, imported: readonly ProjectRecord[]): Promise<void> {
    const ids = new Set(imported.map((project) => project.project_id));
    const importsDefault = imported.some((project) => project.isDefault);
    await this.change(
      agentId,
      (projects) => {
        const kept = projects.filter((project) => !ids.has(project.project_id) && !(importsDefault && project.isDefault));
        projects.splice(0, projects.length, ...kept, ...imported.map((project) => ({ ...project })));
        projects.sort((a, b) => Number(b.isDefault) - Number(a.isDefault) || a.project_id.localeCompare(b.project_id));
      },
      { addDefault: !importsDefault },
    );
  }

  /** Read-modify-write under the lock; also adds the default project when it is missing (unless told not to). */
  private async change<T>(agentId: string, edit: (projects: ProjectRecord[]) => T, options: { addDefault?: boolean } = {}): Promise<T> {
    const previous = this.queues.get(agentId) ?? Promise.resolve();
    const run = previous
      .catch(() => undefined)
      .then(() =>
        withFileLock(this.fileOf(agentId), async () => {
          const projects = await this.read(agentId);
          if (options.addDefault !== false && !projects.some((project) => project.isDefault))
            projects.unshift(newProjectRecord(DEFAULT_PROJECT_NAME, true, this.now()));
          const result = edit(projects);
          const document: ProjectsDocument = { version: 1, projects };
          writeFileAtomic(this.fileOf(agentId), `${JSON.stringify(document, null, 2)}\n`);
          this.cache.set(agentId, projects);
          return result;
        }),
      );
    this.queues.set(agentId, run);
    try {
      return await run;
    } finally {
      if (this.queues.get(agentId) === run) this.queues.delete(agentId);
    }
  }

  private async load(agentId: string): Promise<ProjectRecord[]> {
    const cached = this.cache.get(agentId);
    if (cached) return cached;
    const projects = await this.read(agentId);
    this.cache.set(agentId, projects);
    return projects;
  }

  private async read(agentId: string): Promise<ProjectRecord[]> {
    const file = this.fileOf(agentId);
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
    return parseDocument(text, file);
  }

  private fileOf(agentId: string): string {
    if (!AGENT_ID.test(agentId)) throw new Error(`invalid agent id ${agentId}`);
    return path.join(this.directory, `${agentId}.json`);
  }
}

function parseDocument(text: string, file: string): ProjectRecord[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new StoreError(`project file ${file} is corrupt; restore it from a backup or delete it`);
  }
  const document = value as Partial<ProjectsDocument> | null;
  const valid = document !== null && typeof document === "object" && Array.isArray(document.projects) && document.projects.every(isProjectRecord);
  if (!valid) throw new StoreError(`project file ${file} is not a gw project file; restore it from a backup or delete it`);
  return document.projects!.map((project) => ({
    project_id: project.project_id,
    name: project.name,
    isDefault: project.isDefault,
    createdAt: project.createdAt,
  }));
}
