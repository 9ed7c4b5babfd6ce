import path from "node:path";
import test from "ava";
import { DEFAULT_PROJECT_NAME, type ProjectRecords, ProjectStore } from "../src/store/project-records.js";
import { RedisProjectStore } from "../src/store/redis-project-store.js";
import { StoreError } from "../src/store/store-error.js";
import { redisForTests } from "./helpers/redis-server.js";
import { tempDir } from "./helpers/temp-dirs.js";

const redis = redisForTests(test);

const implementations: Array<{ name: string; open(): Promise<{ store: ProjectRecords; twin: ProjectRecords; corrupt(agentId: string): Promise<void> }> }> = [
  {
    name: "file",
    async open() {
      const dir = tempDir("gw-projects-");
      const { writeFile } = await import("node:fs/promises");
      // One server per home (the serve lock), which caches what it wrote: its twin is itself.
      const store = new ProjectStore(dir);
      return {
        store,
        twin: store,
        corrupt: (agentId) => writeFile(path.join(dir, `${agentId}.json`), "{not json"),
      };
    },
  },
  {
    name: "redis",
    async open() {
      const prefix = redis.prefix();
      const client = redis.client();
      return {
        store: new RedisProjectStore(client, prefix),
        twin: new RedisProjectStore(redis.client(), prefix),
        corrupt: async (agentId) => {
          await client.hset(`${prefix}{a:${agentId}}:projects`, "default", "proj_01JAAAAAAAAAAAAAAAAAAAAAAA", "proj_01JAAAAAAAAAAAAAAAAAAAAAAA", "{not json");
        },
      };
    },
  },
];

for (const implementation of implementations) {
  const name = (title: string) => `${implementation.name}: ${title}`;

  test(name("an agent's first list holds its default project, made once however many ask at once"), async (t) => {
    const { store, twin } = await implementation.open();
    const lists = await Promise.all([store.list("agent-1"), twin.list("agent-1"), store.defaultProject("agent-1"), twin.defaultProject("agent-1")]);
    const [first, second, defaultOne, defaultTwo] = lists as [
      Awaited<ReturnType<ProjectRecords["list"]>>,
      Awaited<ReturnType<ProjectRecords["list"]>>,
      { project_id: string },
      { project_id: string },
    ];
    t.is(first.length, 1);
    t.like(first[0], { name: DEFAULT_PROJECT_NAME, isDefault: true });
    t.deepEqual(
      (await store.list("agent-1")).map((project) => project.project_id),
      (await twin.list("agent-1")).map((project) => project.project_id),
    );
    t.is(defaultOne.project_id, defaultTwo.project_id);
    t.is(second.length, 1);
    t.regex(first[0]!.project_id, /^proj_[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  test(name("created projects follow the default in creation order, on both stores"), async (t) => {
    const { store, twin } = await implementation.open();
    const posters = await store.create("agent-1", "posters");
    const logos = await twin.create("agent-1", "logos");
    t.like(posters, { name: "posters", isDefault: false });
    t.true(!Number.isNaN(Date.parse(posters.createdAt)));
    for (const reader of [store, twin]) {
      const names = (await reader.list("agent-1")).map((project) => project.name);
      t.true(names[0] === DEFAULT_PROJECT_NAME);
      t.true(names.includes("posters") && names.includes("logos"));
    }
    t.deepEqual(await twin.find("agent-1", logos.project_id), logos);
  });

  test(name("another agent's project, a malformed id, or a missing one is not found"), async (t) => {
    const { store } = await implementation.open();
    const own = await store.create("agent-1", "mine");
    t.is(await store.find("agent-2", own.project_id), undefined);
    t.is(await store.find("agent-1", "proj_nope"), undefined);
    t.is(await store.find("agent-1", "proj_01JAAAAAAAAAAAAAAAAAAAAAAA"), undefined);
    t.deepEqual(
      (await store.list("agent-2")).map((project) => project.name),
      [DEFAULT_PROJECT_NAME],
    );
  });

  test(name("a damaged record refuses with a StoreError instead of reading as no projects"), async (t) => {
    const { store, corrupt } = await implementation.open();
    await corrupt("agent-9");
    await t.throwsAsync(store.list("agent-9"), { instanceOf: StoreError });
  });

  test(name("imported projects keep their ids, records and default, and importing them again changes nothing"), async (t) => {
    const { store, twin } = await implementation.open();
    await store.list("agent-5"); // a default of its own, which the imported default replaces
    const imported = [
      { project_id: "proj_01JBBBBBBBBBBBBBBBBBBBBBBB", name: DEFAULT_PROJECT_NAME, isDefault: true, createdAt: "2026-09-01T10:00:00.000Z" },
      { project_id: "proj_01JCCCCCCCCCCCCCCCCCCCCCCC", name: "posters", isDefault: false, createdAt: "2026-09-02T10:00:00.000Z" },
    ];
    await store.importProjects("agent-5", imported);
    await store.importProjects("agent-5", imported);
    t.deepEqual(await twin.list("agent-5"), imported);
    t.deepEqual(await twin.defaultProject("agent-5"), imported[0]);
    t.deepEqual(await twin.find("agent-5", "proj_01JCCCCCCCCCCCCCCCCCCCCCCC"), imported[1]);
  });
}
